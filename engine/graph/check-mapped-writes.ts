import type { NodeDefinition, SubgraphNodeDefinition } from "./definition.js";
import type { CheckedChild } from "./check.js";
import type { ProblemList } from "./problems.js";
import type { StateKeyDefinition } from "../state/schema.js";

/**
 * A mapped node runs once per item, all in one step, and the step's writes meet at its barrier,
 * where two writes to a key whose reducer is `replace` fail the run (WRITE_CONFLICT). A write
 * each task makes — a model node's `output`, a child key a sub-workflow's `output` maps — so fails
 * every run whose list holds two items or more: an error. A key a sub-workflow shares by name comes
 * back only from a child that changed it: a warning. What an action writes is its code's to say.
 */
export function checkMappedWrites(nodes: Record<string, NodeDefinition>, state: Record<string, StateKeyDefinition>, children: ReadonlyMap<string, CheckedChild>, problems: ProblemList): void {
  const replaced = (key: string) => Object.hasOwn(state, key) && (state[key]!.reducer ?? "replace") === "replace";
  for (const [name, node] of Object.entries(nodes)) {
    if (!node.map) continue;
    const each = `"${name}" runs once per item of "${node.map.over}", all in one step`;
    if ((node.kind === "llm" || node.kind === "agent" || node.kind === "tool") && node.output !== undefined && replaced(node.output)) {
      problems.error(["nodes", name, "output"], "WRITE_CONFLICT", `${each}, and each writes its ${node.kind === "tool" ? "result" : "answer"} to state key "${node.output}", ${fails(node.output)}`);
    }
    const child = node.kind === "subgraph" && typeof node.workflow === "string" ? children.get(node.workflow) : undefined;
    if (node.kind === "subgraph" && child) checkChildWrites(name, node, each, state, child, replaced, problems);
  }
  checkParallelCatches(nodes, replaced, problems);
}

/**
 * Nodes one list starts in one step (`next: [a, b]`, a route's list) whose catches write their
 * failures to one replace key: should both fail, the step fails with WRITE_CONFLICT instead of
 * going on by the catches.
 */
function checkParallelCatches(nodes: Record<string, NodeDefinition>, replaced: (key: string) => boolean, problems: ProblemList): void {
  const warned = new Set<string>();
  for (const [from, node] of Object.entries(nodes)) {
    const lists = [node.next, ...Object.values(node.routes ?? {}), node.catch?.next].filter((l): l is string[] => Array.isArray(l) && l.length > 1);
    for (const list of lists) {
      const byKey = new Map<string, string[]>();
      for (const target of list) {
        const output = nodes[target]?.catch?.output;
        if (output !== undefined && replaced(output)) byKey.set(output, [...(byKey.get(output) ?? []), target]);
      }
      for (const [key, both] of byKey) {
        if (both.length < 2 || warned.has(`${key}\u0000${both.join()}`)) continue;
        warned.add(`${key}\u0000${both.join()}`);
        problems.warning(
          ["nodes", both[1]!, "catch", "output"],
          "WRITE_CONFLICT",
          `${both.map((n) => `"${n}"`).join(" and ")} run in one step (from "${from}") and their catches write to state key "${key}", whose reducer (replace) keeps one value: should both fail, the run fails (WRITE_CONFLICT) instead of going on by the catches; give "${key}" the append reducer, or each catch a key of its own`,
        );
      }
    }
  }
}

function checkChildWrites(
  name: string,
  node: SubgraphNodeDefinition,
  each: string,
  state: Record<string, StateKeyDefinition>,
  child: CheckedChild,
  replaced: (key: string) => boolean,
  problems: ProblemList,
): void {
  const childState = child.definition.state;
  const childName = child.definition.name;
  if (node.output) {
    for (const [parentKey, childKey] of Object.entries(node.output)) {
      const key = childState[childKey];
      if (!key || !replaced(parentKey)) continue;
      // A child key without a default that may be left out can end its run without a value: nothing comes back then.
      const always = key.default !== undefined || key.optional !== true;
      const what = `${each}, and ${always ? "each" : "each run that ends with a value of it"} brings the sub-workflow ${childName}'s "${childKey}" back into state key "${parentKey}", ${fails(parentKey, always ? "with two items or more" : "with two such runs")}, or leave it out of \`output\``;
      if (always) problems.error(["nodes", name, "output", parentKey], "WRITE_CONFLICT", what);
      else problems.warning(["nodes", name, "output", parentKey], "WRITE_CONFLICT", what);
    }
    return;
  }
  const shared = Object.keys(childState).filter((k) => Object.hasOwn(state, k) && replaced(k));
  if (shared.length === 0) return;
  const one = shared.length === 1;
  const keys = shared.map((k) => `"${k}"`).join(" or ");
  problems.warning(
    ["nodes", name, "workflow"],
    "WRITE_CONFLICT",
    `${each}, and, as \`output\` is not given, each run that changes ${keys} (${one ? "a key" : "keys"} it shares by name with the sub-workflow ${childName}) brings ${one ? "it" : "them"} back, and ${one ? "its" : "their"} reducer (replace) keeps one value: two such runs fail the step (WRITE_CONFLICT); say what comes back with \`output\`: into a list key with the append reducer, or {} for nothing`,
  );
}

/** What becomes of the tasks' writes to a replace key, `when` they meet, and the fix. */
function fails(key: string, when = "with two items or more"): string {
  return `whose reducer (replace) keeps one value: ${when} the step fails (WRITE_CONFLICT); make "${key}" a list with the append reducer (one value per item, in item order)`;
}
