import { END, hasRoutes, nodeTargets, type NodeDefinition, type WorkflowDefinition } from "./definition.js";
import type { ProblemList } from "./problems.js";

type Nodes = Readonly<Record<string, NodeDefinition>>;

/** The nodes from which some path leads to END (a node with no edge ends its branch). */
export function nodesReachingEnd(nodes: Nodes): Set<string> {
  const reverse = new Map<string, string[]>();
  for (const [name, node] of Object.entries(nodes)) {
    const targets = nodeTargets(node);
    for (const t of targets.length === 0 ? [END] : targets) reverse.set(t, [...(reverse.get(t) ?? []), name]);
  }
  return walk([END], (n) => reverse.get(n) ?? []);
}

export function walk(from: string[], next: (node: string) => string[]): Set<string> {
  const seen = new Set<string>(from);
  const queue = [...from];
  while (queue.length > 0) {
    for (const n of next(queue.shift()!)) {
      if (!seen.has(n)) {
        seen.add(n);
        queue.push(n);
      }
    }
  }
  return seen;
}

const targetsIn = (nodes: Nodes) => (n: string) => nodeTargets(nodes[n]!).filter((t) => Object.hasOwn(nodes, t));

/**
 * Reachable nodes with no path to END. Where every node that follows has only `next` edges, a run
 * that gets there can never end, whatever its state: an error, said once where the run enters
 * (`a → b → a`). Where a route could still choose, the graph may be meant to loop until an
 * operator ends it: a warning per node.
 */
export function checkPathsToEnd(nodes: Nodes, start: string, reachable: ReadonlySet<string>, problems: ProblemList): void {
  const reachesEnd = nodesReachingEnd(nodes);
  const stuck = [...reachable].filter((n) => !reachesEnd.has(n));
  const endless = new Set(stuck.filter((n) => [...walk([n], targetsIn(nodes))].every((m) => !hasRoutes(nodes[m]!))));
  for (const name of stuck) {
    if (!endless.has(name)) {
      problems.warning(["nodes", name], "NO_PATH_TO_END", `no path from "${name}" leads to END; runs that get here cannot finish`);
      continue;
    }
    const entered = name === start || Object.entries(nodes).some(([other, node]) => reachable.has(other) && !endless.has(other) && nodeTargets(node).includes(name));
    if (!entered) continue;
    const loop = [...walk([name], targetsIn(nodes))];
    problems.error(
      ["nodes", name],
      "NO_PATH_TO_END",
      `from "${name}" the run goes round ${loop.map((n) => `"${n}"`).join(" → ")} by \`next\` edges only and never reaches END: a run that gets here can never end (it fails at limits.maxSteps); give a node of the loop routes with a way to END`,
    );
  }
}

/**
 * Why a run passed its step limit, and what to do: raising the limit helps a loop that is meant
 * to go on that long, not one from which no path leads to END.
 */
export function stepLimitMessage(definition: WorkflowDefinition, step: number, nodes: readonly string[], firstStep = 0): string {
  const { maxSteps } = definition.limits;
  const began = firstStep > 0 ? `, step ${step - firstStep} counted from step ${firstStep} where it began (the step of the run it was forked or continued from)` : "";
  const head = `run exceeded its step limit (maxSteps ${maxSteps}) before step ${step} (${nodes.join(", ")})${began}`;
  const reachesEnd = nodesReachingEnd(definition.nodes);
  const stuck = nodes.filter((n) => Object.hasOwn(definition.nodes, n) && !reachesEnd.has(n));
  if (stuck.length > 0) {
    return `${head}; no path from ${stuck.map((n) => `"${n}"`).join(", ")} leads to END, so a higher limit would not end it either: give the loop a route to END`;
  }
  return `${head}: a loop whose way out was never taken; check the route that should leave it, or raise limits.maxSteps if the loop is expected to run this long`;
}
