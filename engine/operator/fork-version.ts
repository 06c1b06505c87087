import { ValidationError } from "../errors.js";
import { END, hasRoutes, type WorkflowDefinition } from "../graph/definition.js";
import { START } from "../runtime/planner.js";
import type { State } from "../state/ops.js";
import type { StateValidator } from "../state/schema.js";
import type { CheckpointRecord, RunRecord } from "../store/records.js";

// What a fork onto another version of a run's workflow checks (`Operator.fork` with `workflow`), and
// an upgrade of the run itself from its head checkpoint (`Operator.upgrade`): `move` says which, for
// the remedy each refusal names.

/** How a run moves onto another version: as a fork of one of its checkpoints, or itself from its head. */
export type VersionMove = "fork" | "upgrade";

/** A run going on under another version goes on from the same place: every node it is at must exist there. */
export function checkNodesKept(definition: WorkflowDefinition, version: string, from: CheckpointRecord, source: RunRecord, move: VersionMove = "fork"): void {
  const at = `checkpoint ${from.n}`;
  const places: [node: string, role: string][] = [
    ...from.next.map((node): [string, string] => [node, `which run ${source.id} runs next from ${at}`]),
    ...from.control.finished.map((f): [string, string] => [f.node, `whose edges run ${source.id} follows next from ${at}`]),
    ...Object.entries(from.control.barriers).flatMap(([join, arrived]): [string, string][] => [
      [join, `which waits for its predecessors in run ${source.id} at ${at}`],
      ...arrived.map((node): [string, string] => [node, `which join ${join} counts as arrived in run ${source.id} at ${at}`]),
    ]),
    ...[...(source.interruptBefore ?? []), ...(source.interruptAfter ?? [])].map((node): [string, string] => [node, `which run ${source.id} interrupts at`]),
  ];
  // START stands for the run's input: the new version's own start node follows it.
  const missing = places.find(([node]) => node !== END && node !== START && !Object.hasOwn(definition.nodes, node));
  if (missing !== undefined) {
    const remedy = move === "fork" ? "fork from another checkpoint, or keep the node in the new version" : `keep the node in the new version, or fork run ${source.id} from another checkpoint (pitwall fork --workflow)`;
    throw new ValidationError(`version ${version.slice(0, 12)} of workflow ${definition.name} has no node "${missing[0]}", ${missing[1]}: ${remedy}`);
  }
}

/**
 * A node whose result chose a route key its version has no route for (the run failed there,
 * ROUTE_NO_MATCH): a fork from that checkpoint plans from the same key and fails at once without
 * running anything, so it is refused, pointing at the checkpoint before, from which the node runs
 * again. (A key read from the state — routeOn, a router — is chosen anew, after a patch.) So is
 * a node whose catch took its failure, onto a version without that catch.
 */
export function checkRoutesTaken(definition: WorkflowDefinition, version: string, from: CheckpointRecord, source: RunRecord, move: VersionMove = "fork"): void {
  for (const { node, route, caught } of from.control.finished) {
    const def = definition.nodes[node];
    const before = from.n > 0 ? `fork from checkpoint ${from.n - 1} to run "${node}" again, or ` : "";
    // An upgrade's run fails at once as a fork would; the way out is another version, or a fork from before.
    const fails = move === "fork" ? `a fork from there would fail at once; ${before}fork onto` : `run ${source.id} would fail at once under it; upgrade it to`;
    const orFork = move === "fork" || from.n === 0 ? "" : `, or fork from checkpoint ${from.n - 1} to run "${node}" again`;
    if (caught && def && !def.catch) {
      throw new ValidationError(
        `at checkpoint ${from.n} of run ${source.id}, node "${node}" failed and its catch took it, but version ${version.slice(0, 12)} has no catch on "${node}": ${fails} a version with that catch${orFork}`,
      );
    }
    if (route === undefined || !def || !hasRoutes(def) || def.default !== undefined) continue;
    if (Object.hasOwn(def.routes!, route) || (def.kind === "approval" && route === "edit" && "approve" in def.routes!)) continue;
    throw new ValidationError(
      `at checkpoint ${from.n} of run ${source.id}, node "${node}" chose route "${route}", which matches none of ${Object.keys(def.routes!).join(", ")} in version ${version.slice(0, 12)}: ${fails} a version whose routes take "${route}"${move === "fork" ? " (pitwall fork --workflow)" : orFork}`,
    );
  }
}

/** The checkpoint's state under the new version's schema: its new keys' defaults filled in, and checked. */
export function fitState(validator: StateValidator, state: State, from: CheckpointRecord, version: string, move: VersionMove = "fork"): State {
  try {
    return validator.parse(state, `the state of checkpoint ${from.n} under version ${version.slice(0, 12)}`);
  } catch (error) {
    if (!(error instanceof ValidationError)) throw error;
    throw new ValidationError(`${error.message}; a patch given with the ${move} is checked against the new version, so it can reshape the state to fit`, error.issues);
  }
}
