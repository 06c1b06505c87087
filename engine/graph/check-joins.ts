import { asList, nodeTargets, type NodeDefinition } from "./definition.js";
import type { ProblemList } from "./problems.js";

/**
 * Warns of a choice that can leave a join short: a node whose route leads to some of what a join
 * waits for (or lets it arrive from elsewhere) but never to the rest. Taken, the join waits
 * forever and the run fails with STUCK_JOIN — a rejected one of two parallel approvals, say.
 * Optimistic about every other choice: only the choice warned about can leave the join short.
 * Quiet about the joins in `refused`, whose waitFor is already an error (it names a node that
 * does not lead there, or that no path reaches): every route would be warned of for that one mistake.
 */
export function checkJoinChoices(nodes: Record<string, NodeDefinition>, start: string, refused: ReadonlySet<string>, problems: ProblemList): void {
  const names = new Set(Object.keys(nodes));
  const reachable = (from: readonly string[], avoid: ReadonlySet<string>): Set<string> => {
    const seen = new Set(from.filter((n) => names.has(n) && !avoid.has(n)));
    const queue = [...seen];
    while (queue.length > 0) {
      for (const t of nodeTargets(nodes[queue.shift()!]!)) {
        if (names.has(t) && !avoid.has(t) && !seen.has(t)) {
          seen.add(t);
          queue.push(t);
        }
      }
    }
    return seen;
  };
  for (const [join, joinNode] of Object.entries(nodes)) {
    if (!joinNode.waitFor || refused.has(join)) continue;
    const waited = joinNode.waitFor;
    for (const [chooser, node] of Object.entries(nodes)) {
      if (chooser === join || (node.routes === undefined && node.catch === undefined)) continue;
      // What gets to the join whatever this node chooses: reached from the start without it.
      const regardless = chooser === start ? new Set<string>() : reachable([start], new Set([join, chooser]));
      // A catch is a choice too: the way the node goes when it fails for good.
      const choices: [string, string[]][] = node.routes ? Object.entries(node.routes).map(([key, to]): [string, string[]] => [key, asList(to)]) : [];
      if (node.default !== undefined) choices.push(["(default)", [node.default]]);
      if (node.catch) choices.push(["(catch)", asList(node.catch.next)]);
      for (const [key, targets] of choices) {
        const onward = reachable(targets, new Set([join]));
        // The chooser arrives itself only when this route leads to the join.
        const arrives = waited.filter((w) => (w === chooser ? targets.includes(join) : regardless.has(w) || onward.has(w)));
        const never = waited.filter((w) => !arrives.includes(w));
        if (arrives.length === 0 || never.length === 0) continue;
        const taken = key === "(default)" ? "its default" : key === "(catch)" ? "its catch (it failed)" : `route ${key}`;
        problems.warning(
          ["nodes", chooser, ...(key === "(default)" ? ["default"] : key === "(catch)" ? ["catch", "next"] : ["routes", key])],
          "JOIN_MAY_STICK",
          `if "${chooser}" takes ${taken}, "${join}" gets ${arrives.join(", ")} but never ${never.join(", ")} and waits forever (the run fails with STUCK_JOIN): ${remedy(chooser, join, never, key === "(catch)" ? "catch" : "route")}, or let "${join}" wait for fewer`,
        );
      }
    }
  }
}

/**
 * What the route must also lead to: the chooser arrives at the join only by leading there itself
 * (an approval's reject route cannot lead "on to" the approval), the others by leading on to them.
 */
function remedy(chooser: string, join: string, never: readonly string[], way: "route" | "catch"): string {
  const others = never.filter((w) => w !== chooser);
  const itself = never.includes(chooser) ? `to "${join}"` : "";
  const onward = others.length > 0 ? `on to ${others.join(", ")}` : "";
  return `lead that ${way} ${[itself, onward].filter(Boolean).join(" and ")} too`;
}
