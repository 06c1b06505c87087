import type { WorkflowDefinition } from "../graph/definition.js";
import type { Batch } from "../runtime/batch.js";
import type { Reducer, State } from "../state/ops.js";
import type { StateValidator } from "../state/schema.js";
import type { CheckpointRecord, InterruptRecord, RunRecord, TaskRecord } from "../store/records.js";

/** Everything a command needs to know about a run to decide its effect. */
export interface RunView {
  run: RunRecord;
  definition: WorkflowDefinition;
  validator: StateValidator;
  reducerOf(key: string): Reducer;
  head: CheckpointRecord;
  state: State;
  /** Tasks of the step in progress (head step + 1). */
  tasks: TaskRecord[];
  /** Pending interrupts of the run. */
  pending: InterruptRecord[];
  /** Any interrupt by id (to say who resolved one already). */
  interrupt(id: string): Promise<InterruptRecord | undefined>;
  /** Whether tasks are executing in a live process right now. */
  executing: boolean;
  /** Names of secrets added to the default ones: the command's events never hold their values. */
  secretKeys: readonly string[];
}

export type Prepared =
  | { ok: true; batch: Batch; effect: string; writesState: boolean; result?: Record<string, unknown> }
  | { ok: false; error: Error };

export const refuse = (error: Error): Prepared => ({ ok: false, error });

/**
 * A run still `running` that this process applies a command to has no live owner: its lease ran
 * out, and the tasks it shows running were left so by a lost worker, not executing anywhere.
 */
export function workerLost(view: RunView): boolean {
  return !view.executing && view.run.status === "running";
}
