import { ConflictError, RunExistsError } from "../errors.js";
import type { CompiledWorkflow } from "../graph/model.js";
import type { RunRecord } from "../store/records.js";
import type { Store } from "../store/store.js";
import { checkStart, startRun, type StartRunOptions, type WorkflowVersion } from "./start.js";

/** The run a signal-with-start signals, and how to start it when no run has its id. */
export interface SignalStart extends Omit<StartRunOptions, "id" | "actor" | "signal" | "schedule"> {
  /** The run's id: a key of the sender's (an order number), the same for every signal of it. */
  runId: string;
  /** The workflow the run is of: it is started on it, or must already be a run of it. */
  workflow: CompiledWorkflow | WorkflowVersion;
  /** The new run's input (a partial state); unused when the run exists. */
  input?: unknown;
}

/**
 * Makes sure the run `start.runId` exists for the signal `signal` (its command's id and name):
 * starts it when no run has that id; whether this call started it. A run of another workflow
 * with that id is refused (ConflictError, nothing written). Of two senders racing, one starts it
 * and the other finds it, whichever store: the store refuses the second create (memory, SQLite),
 * or takes it for the first sent again when both were made in one millisecond (Redis), where
 * the run's `run.created` names the signal it was made for.
 */
export async function startForSignal(store: Store, actor: string, start: SignalStart, signal: { id: string; name: string }): Promise<boolean> {
  const { runId, workflow, input = {}, ...options } = start;
  // Bad input is refused whether or not the run exists: the same request always means the same.
  checkStart(workflow, input, { ...options, id: runId });
  const name = workflow.definition.name;
  const existing = await store.getRun(runId);
  if (existing) return ofWorkflow(existing, name);
  try {
    await startRun(store, workflow, input, { ...options, id: runId, actor, signal });
    return true;
  } catch (error) {
    if (!(error instanceof RunExistsError)) throw error;
    return ofWorkflow(error.run, name);
  }
}

/** False (the run was not started here) when `run` is of workflow `name`; refused otherwise. */
function ofWorkflow(run: RunRecord, name: string): false {
  if (run.workflow !== name) throw new ConflictError(`run ${run.id} is a run of workflow ${run.workflow}, not ${name}: no signal sent`);
  return false;
}
