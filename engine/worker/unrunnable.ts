import { canonicalJson } from "../graph/canonical.js";
import type { WorkflowDefinition } from "../graph/definition.js";
import type { ActionRegistry } from "../graph/model.js";

const PROGRAM = "a worker of the program that defines it (createEngine({ workflows }))";

/**
 * Why a stored version cannot run here, when its definition tells more than the first problem its
 * compiling met (`why`): it was built in code (a router or a reducer function: only its program
 * has them), or none of its actions is loaded, which is how a workflow built in code looks to a
 * worker that loads actions modules (its definition names its nodes' functions, nothing more).
 */
export function unrunnableWhy(definition: WorkflowDefinition, actions: ActionRegistry, why: string): string {
  const code = codeMark(definition);
  if (code) return `workflow ${definition.name} was built in code (${code}): only ${PROGRAM} can run it`;
  const names = [...new Set(Object.values(definition.nodes).flatMap((n) => (n.kind === "action" ? [n.action] : [])))];
  if (names.length === 0 || names.some((name) => actions.get(name))) return why;
  const others = names.length > 1 ? `; none of its actions (${names.join(", ")}) is` : "";
  return `${why}${others}: if workflow ${definition.name} was built in code, only ${PROGRAM} can run it`;
}

/** What only a workflow built in code has, if this one has it. */
function codeMark(definition: WorkflowDefinition): string | undefined {
  const router = Object.entries(definition.nodes).find(([, node]) => node.router === true)?.[0];
  if (router !== undefined) return `node ${router} routes by a function`;
  const reducer = Object.entries(definition.state).find(([, key]) => key.reducer === "custom")?.[0];
  if (reducer !== undefined) return `state key ${reducer} has a reducer function`;
  return undefined;
}

/** The first thing that differs between two definitions of one workflow, for people: `node f's timeoutMs`. */
export function definitionChange(from: WorkflowDefinition, to: WorkflowDefinition): string | undefined {
  const differ = (a: unknown, b: unknown) => canonicalJson(a ?? null) !== canonicalJson(b ?? null);
  for (const name of new Set([...Object.keys(from.nodes), ...Object.keys(to.nodes)])) {
    const [a, b] = [from.nodes[name], to.nodes[name]];
    if (!a || !b) return `node ${name} ${a ? "removed" : "added"}`;
    const key = [...new Set([...Object.keys(a), ...Object.keys(b)])].find((k) => differ(a[k as keyof typeof a], b[k as keyof typeof b]));
    if (key !== undefined) return `node ${name}'s ${key}`;
  }
  const keys = ["start", "state", "limits", "interruptBefore", "interruptAfter", "description"] as const;
  return keys.find((key) => differ(from[key], to[key]));
}
