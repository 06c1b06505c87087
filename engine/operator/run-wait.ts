import { NotFoundError, PitwallError, ValidationError } from "../errors.js";
import { MAX_TIMER_MS } from "../graph/definition.js";
import { TERMINAL_RUN_STATUSES, type InterruptRecord, type RunRecord } from "../store/records.js";
import type { Store } from "../store/store.js";

/** Settled: ended, or paused for an operator (itself or a sub-workflow it waits on). End: ended. */
export type WaitUntil = "settled" | "end";

export interface WaitOptions {
  until?: WaitUntil;
  timeoutMs?: number;
  signal?: AbortSignal;
}

/** Why a run may not be moving, as the process waiting knows it (its worker cannot run it, say). */
export type Diagnosis = (run: RunRecord) => Promise<string | undefined>;

/** The runs `run` waits on, itself first: a chain of sub-workflows, each waiting on the next. */
export async function waitingChain(store: Store, run: RunRecord): Promise<RunRecord[]> {
  const runs = [run];
  for (let next = run.waitingOn; next !== null && runs.length < 64; ) {
    const child = await store.getRun(next);
    if (!child) break;
    runs.push(child);
    next = child.waitingOn;
  }
  return runs;
}

function settledChain(links: readonly RunRecord[], until: WaitUntil): boolean {
  return TERMINAL_RUN_STATUSES.includes(links[0]!.status) || (until === "settled" && links.some((r) => r.status === "paused"));
}

async function mustGetRun(store: Store, runId: string): Promise<RunRecord> {
  const run = await store.getRun(runId);
  if (!run) throw new NotFoundError("run", runId);
  return run;
}

/**
 * Resolves with the run once it has ended, or (unless `until: "end"`) paused for an operator:
 * itself, or a child run it waits on (a sub-workflow whose node asked a person). A run waiting
 * for a timer, or for a child run still going, is in progress.
 */
export async function waitForRun(store: Store, runId: string, options: WaitOptions = {}, diagnose?: Diagnosis): Promise<RunRecord> {
  const until = options.until ?? "settled";
  if (options.timeoutMs !== undefined && !(options.timeoutMs >= 0 && options.timeoutMs <= MAX_TIMER_MS)) {
    throw new ValidationError(`timeoutMs ${options.timeoutMs}: give milliseconds from 0 to ${MAX_TIMER_MS}`);
  }
  const timeout = options.timeoutMs !== undefined ? AbortSignal.timeout(options.timeoutMs) : undefined;
  const signals = [timeout, options.signal].filter((s): s is AbortSignal => s !== undefined);
  const signal = signals.length > 1 ? AbortSignal.any(signals) : signals[0];
  const after = await store.lastEventSeq();
  let run = await mustGetRun(store, runId);
  let links = await waitingChain(store, run);
  if (settledChain(links, until)) return run;
  // The whole store's events: a child's pause is in its own history, not in this run's.
  for await (const event of store.subscribe({ after, ...(signal ? { signal } : {}) })) {
    if (!links.some((r) => r.id === event.runId)) continue;
    run = await mustGetRun(store, runId);
    links = await waitingChain(store, run);
    if (settledChain(links, until)) return run;
  }
  if (options.signal?.aborted) throw options.signal.reason;
  const goal = until === "end" ? "end" : "settle";
  if (signal?.aborted) {
    const why = await diagnose?.(run);
    throw new PitwallError("RUN", `run ${runId} did not ${goal} within ${options.timeoutMs} ms (it is ${run.status}${why ? `; ${why}` : ""})`);
  }
  // The subscription ended by itself: the store was closed under this wait.
  run = await mustGetRun(store, runId);
  if (settledChain(await waitingChain(store, run), until)) return run;
  throw new PitwallError("RUN", `run ${runId} had not ${goal === "end" ? "ended" : "settled"} when its store was closed (it is ${run.status})`);
}

/** The pending interrupts of a run and of the child runs it waits on: what it waits on people for. */
export async function pendingInterruptsOf(store: Store, runId: string): Promise<InterruptRecord[]> {
  const links = await waitingChain(store, await mustGetRun(store, runId));
  const lists = await Promise.all(links.map((r) => store.listInterrupts({ runId: r.id, status: "pending" })));
  return lists.flat();
}
