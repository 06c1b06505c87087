import { StoreError, errorMessage } from "../errors.js";
import { failedUncaught } from "../runtime/transitions.js";
import { TERMINAL_RUN_STATUSES, type RunRecord } from "../store/records.js";
import type { Store } from "../store/store.js";
import type { CompiledWorkflow } from "../graph/model.js";
import type { CommandOutcome } from "./command-records.js";
import type { Operator } from "./operator.js";
import type { WorkflowVersion } from "./start.js";
import { upgradeRefusal } from "./upgrade.js";

/** What a batch does to each run it acts on (Temporal's batch operations). */
export type BatchAction =
  | { kind: "cancel"; reason: string }
  | { kind: "signal"; name: string; data?: unknown; reason?: string }
  /** Every failed or canceled task of the run's current step runs again. */
  | { kind: "retry"; reason?: string }
  /** Every pending interrupt of the run that offers the decision (at `node` only, when given), answered together. */
  | { kind: "resolve"; decision: "approve" | "reject"; node?: string; reason?: string }
  /** The run moves, in place, onto this version of its workflow (`Operator.upgrade`); runs of other workflows are left. */
  | { kind: "upgrade"; workflow: CompiledWorkflow | WorkflowVersion; reason?: string };

/** How a batch went for one run: the commands it sent, or why none was sent or one failed. */
export type BatchResult =
  | { runId: string; status: "done"; effects: string[]; commandIds: string[] }
  | { runId: string; status: "skipped"; why: string }
  | { runId: string; status: "failed"; error: Error };

/**
 * Applies `action` to each run, a few at a time, each run on its own: one refused (it ended
 * meanwhile, another operator acted first) does not stop the others — a store that failed does.
 * A run the action cannot apply to is skipped, saying why (a run that ended takes no cancel nor
 * signal; one with nothing failed in its current step has nothing to retry, and one with no
 * pending interrupt offering the decision nothing to resolve).
 */
export async function runBatch(operator: Operator, store: Store, runs: readonly RunRecord[], action: BatchAction, concurrency = 8): Promise<BatchResult[]> {
  const results: BatchResult[] = new Array(runs.length);
  let next = 0;
  // A store that cannot be reached would fail every run alike, each after its time-out: the
  // first such failure stops the batch, and the runs not yet sent say so.
  let storeFailedOn: string | undefined;
  const lane = async () => {
    while (next < runs.length && storeFailedOn === undefined) {
      const i = next++;
      const result = await applyTo(operator, store, runs[i]!, action);
      results[i] = result;
      if (result.status === "failed" && result.error instanceof StoreError) storeFailedOn ??= result.runId;
    }
  };
  await Promise.all(Array.from({ length: Math.min(concurrency, runs.length) }, lane));
  for (let i = next; i < runs.length; i++) results[i] = { runId: runs[i]!.id, status: "skipped", why: `not sent: the store failed on run ${storeFailedOn}` };
  return results;
}

/** Why a run, as its record says, is left out of a batch (undefined: it may be acted on; `batchTargets` reads what it holds). */
function batchSkips(run: RunRecord, action: BatchAction): string | undefined {
  // A failed run is retried, or moved to the version a retry then runs it under.
  if ((action.kind === "retry" || action.kind === "upgrade") && run.status === "failed") return undefined;
  return (TERMINAL_RUN_STATUSES as readonly string[]).includes(run.status) ? `it has ended (${run.status})` : undefined;
}

/** What an action acts on in a run: the tasks a retry runs again, the interrupts an answer resolves. */
type Targets = { skip: string } | { taskIds: string[] } | { interruptIds: string[] } | { run: true };

/** What `action` would act on in `run`, read from the store, or why it leaves the run. */
async function batchTargets(store: Store, run: RunRecord, action: BatchAction): Promise<Targets> {
  const skip = batchSkips(run, action);
  if (skip) return { skip };
  switch (action.kind) {
    case "cancel":
    case "signal":
      return { run: true };
    case "retry": {
      const tasks = (await store.listTasks(run.id, { step: run.step + 1 })).filter((t) => t.parent === null && (failedUncaught(t) || t.status === "canceled"));
      return tasks.length > 0 ? { taskIds: tasks.map((t) => t.id) } : { skip: "no task of its current step failed or was canceled" };
    }
    case "resolve": {
      const where = action.node !== undefined ? ` at node ${action.node}` : "";
      if (action.node !== undefined && !Object.hasOwn((await store.getWorkflow(run.version))?.definition.nodes ?? {}, action.node)) {
        return { skip: `its workflow (${run.workflow}) has no node ${action.node}` };
      }
      const pending = (await store.listInterrupts({ runId: run.id, status: "pending" })).filter((i) => action.node === undefined || i.node === action.node);
      const offering = pending.filter((i) => i.request.decisions.includes(action.decision));
      if (offering.length > 0) return { interruptIds: offering.map((i) => i.id) };
      return { skip: pending.length === 0 ? `no interrupt of it is pending${where}` : `its pending interrupts${where} do not offer ${action.decision}` };
    }
    case "upgrade": {
      const version = action.workflow.version;
      if (run.workflow !== action.workflow.definition.name) return { skip: `a run of workflow ${run.workflow}, not ${action.workflow.definition.name}` };
      if (run.version === version) return { skip: onVersionAlready(version) };
      const refused = await upgradeRefusal(store, run, action.workflow);
      return refused === undefined ? { run: true } : { skip: refused };
    }
  }
}

const onVersionAlready = (version: string) => `it is on version ${version.slice(0, 12)} already`;

/** What a batch would do to each run, without sending anything (a dry run): `would`, or skipped and why. */
export async function planBatch(store: Store, runs: readonly RunRecord[], action: BatchAction): Promise<BatchPlan[]> {
  return Promise.all(
    runs.map(async (run): Promise<BatchPlan> => {
      const targets = await batchTargets(store, run, action);
      return "skip" in targets ? { runId: run.id, status: "skipped", why: targets.skip } : { runId: run.id, status: "would" };
    }),
  );
}

export type BatchPlan = { runId: string; status: "would" } | { runId: string; status: "skipped"; why: string };

async function applyTo(operator: Operator, store: Store, run: RunRecord, action: BatchAction): Promise<BatchResult> {
  const runId = run.id;
  try {
    const targets = await batchTargets(store, run, action);
    if ("skip" in targets) return { runId, status: "skipped", why: targets.skip };
    const reason = action.kind !== "cancel" && action.reason !== undefined ? { reason: action.reason } : {};
    const outcomes: CommandOutcome[] = [];
    if (action.kind === "cancel") outcomes.push(await operator.cancel(runId, { reason: action.reason }));
    if (action.kind === "signal") outcomes.push(await operator.signal(runId, action.name, action.data, reason));
    if (action.kind === "upgrade") {
      const upgraded = await operator.upgrade(runId, { workflow: action.workflow, ...reason });
      // Moved there meanwhile (another operator's upgrade): left, as the plan leaves such a run.
      if (upgraded.unchanged) return { runId, status: "skipped", why: onVersionAlready(action.workflow.version) };
      outcomes.push(upgraded);
    }
    if ("taskIds" in targets) for (const taskId of targets.taskIds) outcomes.push(await operator.retry(runId, taskId, reason));
    if ("interruptIds" in targets && action.kind === "resolve") outcomes.push(await operator.resolve(targets.interruptIds, { decision: action.decision, ...reason }));
    return { runId, status: "done", effects: outcomes.map((o) => o.effect), commandIds: outcomes.map((o) => o.command.id) };
  } catch (error) {
    return { runId, status: "failed", error: error instanceof Error ? error : new Error(errorMessage(error)) };
  }
}
