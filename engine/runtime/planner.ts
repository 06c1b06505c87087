import { errorMessage } from "../errors.js";
import { END, asList, hasRoutes } from "../graph/definition.js";
import type { CompiledWorkflow } from "../graph/model.js";
import type { State } from "../state/ops.js";
import type { PlanControl, RunError } from "../store/records.js";

/** The virtual node before the start node: a run's input checkpoint "finished" it. */
export const START = "START";

export interface PlannedTask {
  node: string;
  index: number | null;
  input?: unknown;
}

export type Plan =
  | { kind: "tasks"; tasks: PlannedTask[]; control: PlanControl }
  | { kind: "end"; control: PlanControl }
  | { kind: "error"; error: RunError };

const NONE: ReadonlySet<string> = new Set();

/**
 * Decides the next super-step from the nodes that finished since the last planning: follows
 * their edges and routes (evaluated on the current state, so an operator's edit made at an
 * after-interrupt changes the route), fills fan-in barriers, and expands mapped nodes into one
 * task per item. Pure: the same inputs always give the same plan, in the same order.
 */
export function planNextStep(workflow: CompiledWorkflow, state: State, control: PlanControl): Plan {
  // Its lists are replaced, never changed in place: a copy of the record is enough.
  const barriers: Record<string, string[]> = { ...control.barriers };
  const triggered = new Set<string>();
  const tasks: PlannedTask[] = [];
  let queue = control.finished;
  const writtenByOperator = control.finished.some((f) => f.asNode) ? new Set(control.finished.filter((f) => f.asNode).map((f) => f.node)) : NONE;

  while (queue.length > 0) {
    for (const finished of queue) {
      const targets = finished.node === START ? [workflow.definition.start] : outgoing(workflow, finished, state);
      if (!Array.isArray(targets)) return { kind: "error", error: targets };
      for (const target of targets) {
        if (target === END || (writtenByOperator.has(target) && !finished.asNode)) continue;
        const waitFor = workflow.definition.nodes[target]?.waitFor;
        if (!waitFor) {
          triggered.add(target);
          continue;
        }
        const arrived = new Set(barriers[target] ?? []);
        if (waitFor.includes(finished.node)) arrived.add(finished.node);
        if (waitFor.every((p) => arrived.has(p))) {
          triggered.add(target);
          delete barriers[target];
        } else {
          barriers[target] = [...arrived].sort();
        }
      }
    }
    queue = [];
    for (const node of [...triggered].sort()) {
      const def = workflow.definition.nodes[node]!;
      if (!def.map) {
        tasks.push({ node, index: null });
        continue;
      }
      const items = state[def.map.over];
      if (!Array.isArray(items)) {
        return { kind: "error", error: { code: "BAD_MAP", node, message: `node "${node}" maps over state key "${def.map.over}", which is not an array` } };
      }
      // A map over nothing finishes at once: its successors are planned in its place.
      if (items.length === 0) queue.push({ node });
      else items.forEach((item, index) => tasks.push({ node, index, input: item }));
    }
    triggered.clear();
  }

  const nextControl: PlanControl = { finished: [], barriers, visits: control.visits };
  if (tasks.length > 0) return { kind: "tasks", tasks, control: nextControl };
  // A join reached by an edge it does not wait for (validation refuses those) has a barrier too.
  const stuck = Object.entries(barriers)[0];
  if (stuck) {
    const [node, arrived] = stuck;
    const missing = workflow.definition.nodes[node]!.waitFor!.filter((p) => !arrived.includes(p));
    return {
      kind: "error",
      error: { code: "STUCK_JOIN", node, message: `node "${node}" waits for ${missing.join(", ")}, but nothing left to run can reach it` },
    };
  }
  return { kind: "end", control: nextControl };
}

function outgoing(workflow: CompiledWorkflow, finished: PlanControl["finished"][number], state: State): string[] | RunError {
  const compiled = workflow.nodes.get(finished.node);
  const def = workflow.definition.nodes[finished.node];
  if (!def || !compiled) return { code: "UNKNOWN_NODE", node: finished.node, message: `node "${finished.node}" is not in the workflow` };
  if (finished.caught) {
    // A fork onto a version of the workflow without the catch its source took.
    if (!def.catch) return { code: "ROUTE_NO_MATCH", node: finished.node, message: `node "${finished.node}" failed and its catch took the failure, but this version of the workflow has no catch on it` };
    return asList(def.catch.next);
  }
  if (!hasRoutes(def)) return asList(def.next);
  const routes = def.routes!;
  let key = finished.route;
  if (key === undefined && def.routeOn !== undefined) {
    const value = state[def.routeOn];
    key = value === undefined || value === null ? undefined : typeof value === "string" ? value : JSON.stringify(value);
  }
  if (key === undefined && compiled.router) {
    try {
      key = compiled.router(state);
    } catch (error) {
      return { code: "ROUTER_FAILED", node: finished.node, message: `the router of node "${finished.node}" threw: ${errorMessage(error)}` };
    }
  }
  if (key !== undefined && Object.hasOwn(routes, key)) return asList(routes[key]);
  if (def.kind === "approval" && key === "edit" && "approve" in routes) return asList(routes.approve);
  if (def.default !== undefined) return [def.default];
  const known = Object.keys(routes).join(", ");
  return {
    code: "ROUTE_NO_MATCH",
    node: finished.node,
    message:
      key === undefined
        ? `node "${finished.node}" chose no route key (routes: ${known}) and has no default`
        : `node "${finished.node}" chose route "${key}", which matches none of ${known}, and it has no default`,
  };
}
