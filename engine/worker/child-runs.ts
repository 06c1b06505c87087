import { ConflictError } from "../errors.js";
import type { CompiledWorkflow } from "../graph/model.js";
import { derivedId } from "../ids.js";
import { storeWorkflow } from "../operator/workflows.js";
import { newRun } from "../runtime/new-run.js";
import type { State } from "../state/ops.js";
import type { RunRecord, TaskRecord } from "../store/records.js";
import type { Store } from "../store/store.js";

/** What a sub-workflow node starts: its child workflow, with `input`, for the `generation`th time the task runs. */
export interface ChildStart {
  parent: RunRecord;
  task: TaskRecord;
  child: CompiledWorkflow;
  input: State;
  generation: number;
}

/**
 * The child run of a sub-workflow node, started once: its id derives from the task and the
 * generation, so an attempt run again (a worker lost, a retry of the same generation) finds the
 * run it started before instead of starting a second one.
 */
export async function startChildRun(store: Store, { parent, task, child, input, generation }: ChildStart, actor: string, secretKeys: readonly string[]): Promise<RunRecord> {
  const id = derivedId("run", task.id, generation);
  const existing = await store.getRun(id);
  if (existing) return existing;
  await storeWorkflow(store, child);
  const init = newRun({
    id,
    workflow: child,
    state: child.initialState(input),
    actor,
    parentRunId: parent.id,
    parentTaskId: task.id,
    secretKeys,
    next: [child.definition.start],
    deadlineSeconds: child.definition.limits.deadlineSeconds,
  });
  try {
    await store.createRun(init);
  } catch (error) {
    // Another attempt of the same task started it meanwhile.
    if (!(error instanceof ConflictError)) throw error;
  }
  return (await store.getRun(id))!;
}
