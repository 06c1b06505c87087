import { NotFoundError } from "../errors.js";
import { diffStates, type DiffEntry } from "../state/diff.js";
import { readState } from "../state/read.js";
import type { State } from "../state/ops.js";
import { TERMINAL_RUN_STATUSES, type CheckpointRecord, type EventRecord, type RunRecord } from "../store/records.js";
import { mustGetRun } from "./must-get.js";
import { waitForRun, type WaitUntil } from "./run-wait.js";
import type { EventQuery, Store } from "../store/store.js";
import { outlastingSubscription, type OutageListener } from "./store-outage.js";

export type CheckpointRef = string | number;

/** A checkpoint by id, or by its number within the run. */
export async function findCheckpoint(store: Store, runId: string, ref: CheckpointRef, options: { ofAnyRun?: boolean } = {}): Promise<CheckpointRecord> {
  const text = String(ref);
  const id = /^\d+$/.test(text) ? `${runId}:${text}` : text;
  const found = await store.getCheckpoint(id);
  // `ofAnyRun`: a checkpoint named by its whole id may be another run's (a fork's source, to compare with).
  if (!found || (found.runId !== runId && !(options.ofAnyRun && id === text))) throw new NotFoundError("checkpoint", `${text} of run ${runId}`);
  return found;
}

/** Where a checkpoint is: what reading its state needs (a record, or a summary of one). */
type CheckpointPlace = Pick<CheckpointRecord, "runId" | "n">;

/** The structural diff between the states of two checkpoints (`from` null: against an empty state). */
export async function diffCheckpoints(store: Store, from: CheckpointPlace | null, to: CheckpointPlace): Promise<DiffEntry[]> {
  const before = from ? await readState(store, from.runId, from.n) : {};
  return diffStates(before, await readState(store, to.runId, to.n));
}

/**
 * A structural diff from checkpoint `a` to checkpoint `b`, in the order given (from a later
 * checkpoint to an earlier one it shows what the later steps added as removed), or from `a`'s
 * parent to `a`.
 */
export async function checkpointDiff(store: Store, runId: string, a: CheckpointRef, b?: CheckpointRef): Promise<{ from: CheckpointRecord | null; to: CheckpointRecord; diff: DiffEntry[] }> {
  const first = await findCheckpoint(store, runId, a, { ofAnyRun: b !== undefined });
  if (b === undefined) {
    const parent = first.parentId ? ((await store.getCheckpoint(first.parentId)) ?? null) : null;
    return { from: parent, to: first, diff: await diffCheckpoints(store, parent, first) };
  }
  // The other may be another run's, named by its id: a fork compared with its source, say.
  const second = await findCheckpoint(store, runId, b, { ofAnyRun: true });
  return { from: first, to: second, diff: await diffCheckpoints(store, first, second) };
}

/** The state at a checkpoint (default: the run's head). */
export async function stateAt(store: Store, runId: string, checkpoint?: CheckpointRef): Promise<State> {
  const run = await mustGetRun(store, runId);
  const n = checkpoint === undefined ? run.headN : (await findCheckpoint(store, runId, checkpoint)).n;
  return readState(store, runId, n);
}

/**
 * A run's events after `after`, live, until the run ends (or, `until: "settled"`, until it ends
 * or pauses for an operator, itself or a sub-workflow it waits on — as `waitForRun` returns):
 * past events first, then new ones as any process commits them. Once the run has stopped there,
 * what its history holds after that (an operator's refused command, say) is read to its last
 * event, and the iteration ends.
 */
export async function* followRun(
  store: Store,
  runId: string,
  options: { after?: number; signal?: AbortSignal; until?: WaitUntil; onStoreFailure?: OutageListener } = {},
): AsyncGenerator<EventRecord> {
  let after = options.after ?? 0;
  if (!(await store.getRun(runId))) throw new NotFoundError("run", runId);
  // Whether the run has stopped may show in another run's history (a child pausing), so a wait
  // for it, not the run's own events, ends the live part.
  const stopped = new AbortController();
  const signal = options.signal ? AbortSignal.any([options.signal, stopped.signal]) : stopped.signal;
  const { onStoreFailure } = options;
  const waiting = waitForRun(store, runId, { until: options.until ?? "end", signal, ...(onStoreFailure ? { onStoreFailure } : {}) }).then(
    () => stopped.abort(),
    () => undefined,
  );
  try {
    // The wait tells the outages: the subscription waits them out quietly.
    const events = onStoreFailure ? outlastingSubscription(store, { runId, after, signal }, () => undefined) : store.subscribe({ runId, after, signal });
    for await (const event of events) {
      yield event;
      after = event.seq;
    }
  } finally {
    stopped.abort();
    await waiting;
  }
  if (options.signal?.aborted) return;
  yield* readAllEvents(store, { runId, after });
}

/** Every event a query finds, read a page at a time: a long history is never held whole. */
export async function* readAllEvents(store: Store, query: Omit<EventQuery, "limit" | "last">): AsyncGenerator<EventRecord> {
  const PAGE = 500;
  let after = query.after ?? 0;
  for (;;) {
    const page = await store.readEvents({ ...query, after, limit: PAGE });
    yield* page;
    if (page.length < PAGE) return;
    after = page[page.length - 1]!.seq;
  }
}

/**
 * The step a run is at, as a person reads it: the one its current nodes run or wait in (the
 * step after its head checkpoint's), or the one its failed node failed in; else the last step
 * it finished. The same number the tasks of that step carry.
 */
export function currentStep(run: Pick<RunRecord, "step" | "status" | "current" | "error">): number {
  if (run.status === "failed") return run.error?.node ? run.step + 1 : run.step;
  return run.current.length > 0 && !TERMINAL_RUN_STATUSES.includes(run.status) ? run.step + 1 : run.step;
}
