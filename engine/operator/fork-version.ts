import { ValidationError } from "../errors.js";
import { END, type WorkflowDefinition } from "../graph/definition.js";
import type { State } from "../state/ops.js";
import type { StateValidator } from "../state/schema.js";
import type { CheckpointRecord, RunRecord } from "../store/records.js";

// What a fork onto another version of a run's workflow checks (`Operator.fork` with `workflow`).

/** A fork onto another version goes on from the same place: every node it is at must exist there. */
export function checkNodesKept(definition: WorkflowDefinition, version: string, from: CheckpointRecord, source: RunRecord): void {
  const places = [
    ...from.next,
    ...from.control.finished.map((f) => f.node),
    ...Object.entries(from.control.barriers).flatMap(([join, arrived]) => [join, ...arrived]),
    ...(source.interruptBefore ?? []),
    ...(source.interruptAfter ?? []),
  ];
  const missing = places.find((node) => node !== END && !Object.hasOwn(definition.nodes, node));
  if (missing !== undefined) {
    throw new ValidationError(
      `version ${version.slice(0, 12)} of workflow ${definition.name} has no node "${missing}", which run ${source.id} is at in checkpoint ${from.n} (or interrupts at): fork from another checkpoint, or keep the node in the new version`,
    );
  }
}

/** The checkpoint's state under the new version's schema: its new keys' defaults filled in, and checked. */
export function fitState(validator: StateValidator, state: State, from: CheckpointRecord, version: string): State {
  try {
    return validator.parse(state, `the state of checkpoint ${from.n} under version ${version.slice(0, 12)}`);
  } catch (error) {
    if (!(error instanceof ValidationError)) throw error;
    throw new ValidationError(`${error.message}; a patch given with the fork is checked against the new version, so it can reshape the state to fit`, error.issues);
  }
}
