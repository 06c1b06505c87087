import { PitwallError, ValidationError, WaitTimeoutError } from "../errors.js";
import { MAX_TIMER_MS } from "../graph/definition.js";
import { TERMINAL_RUN_STATUSES, type InterruptKind, type InterruptRecord, type PauseReason, type RunRecord } from "../store/records.js";
import type { Store } from "../store/store.js";
import { mustGetRun } from "./must-get.js";
import { Outlasting, type OutageListener } from "./store-outage.js";

/** Settled: ended, or paused for an operator (itself or a sub-workflow it waits on). End: ended. */
export type WaitUntil = "settled" | "end";

export interface WaitOptions {
  until?: WaitUntil;
  timeoutMs?: number;
  signal?: AbortSignal;
  /**
   * Given, the wait outlasts the store's passing failures (a lost connection, a file locked for
   * now), telling each outage as it begins and ends, instead of failing with the first.
   */
  onStoreFailure?: OutageListener;
}

/** Why a run may not be moving, as the process waiting knows it (its worker cannot run it, say). */
export type Diagnosis = (run: RunRecord) => Promise<string | undefined>;

/** At most this many runs are followed below a run (a mapped sub-workflow's children can be many). */
const MAX_LINKS = 64;

/**
 * The runs `run` waits on, itself first: its sub-workflows' runs that have not ended, theirs in
 * turn — all of them, not only the one it is parked on (`waitingOn`): a second child paused for
 * a person, or a child beside a parallel branch's timer, holds the run up as much.
 */
export async function waitingChain(store: Store, run: RunRecord): Promise<RunRecord[]> {
  const runs = [run];
  for (let i = 0; i < runs.length && runs.length < MAX_LINKS; i++) {
    if (TERMINAL_RUN_STATUSES.includes(runs[i]!.status)) continue;
    const { runs: children } = await store.listRuns({ parentRunId: runs[i]!.id, status: ["queued", "running", "paused"], limit: MAX_LINKS - runs.length });
    runs.push(...children);
  }
  return runs;
}

/**
 * Ended, or (`settled`) paused, itself or a run below it — but not one whose parent (or theirs)
 * still runs: a parent a worker executes goes on (other branches), and parks on the child once
 * it has nothing else to do.
 */
function settledChain(links: readonly RunRecord[], until: WaitUntil): boolean {
  if (TERMINAL_RUN_STATUSES.includes(links[0]!.status)) return true;
  if (until !== "settled") return false;
  const byId = new Map(links.map((r) => [r.id, r]));
  const aboveRunning = (run: RunRecord): boolean => {
    for (let up = run.parentRunId !== null ? byId.get(run.parentRunId) : undefined; up; up = up.parentRunId !== null ? byId.get(up.parentRunId) : undefined) {
      if (up.status === "running") return true;
    }
    return false;
  };
  return links.some((r) => r.status === "paused" && !aboveRunning(r));
}

/**
 * Resolves with the run once it has ended, or (unless `until: "end"`) paused for an operator:
 * itself, or a child run it waits on (a sub-workflow whose node asked a person). A run waiting
 * for a timer, or for a child run still going, is in progress. Past `timeoutMs` it throws a
 * WaitTimeoutError holding the run as it then was (with `diagnose`'s why); an aborted `signal`
 * throws the signal's reason; a store closed under the wait, a PitwallError RUN.
 */
export async function waitForRun(store: Store, runId: string, options: WaitOptions = {}, diagnose?: Diagnosis): Promise<RunRecord> {
  const until = options.until ?? "settled";
  if (options.timeoutMs !== undefined && !(options.timeoutMs >= 0 && options.timeoutMs <= MAX_TIMER_MS)) {
    throw new ValidationError(`timeoutMs ${options.timeoutMs}: give milliseconds from 0 to ${MAX_TIMER_MS}`);
  }
  // The deadline is kept apart from the caller's signal, so that running out of it is told
  // apart from an abort and from the store closing: a WaitTimeoutError, not a message to match.
  // Its timer is cleared when the wait ends (AbortSignal.timeout's would hold the wait's
  // listeners until it fired, however long after).
  const deadline = options.timeoutMs !== undefined ? new AbortController() : undefined;
  const timer = deadline && setTimeout(() => deadline.abort(), options.timeoutMs);
  try {
    return await waitWithin(store, runId, until, options, deadline?.signal, diagnose);
  } finally {
    clearTimeout(timer);
  }
}

async function waitWithin(store: Store, runId: string, until: WaitUntil, options: WaitOptions, timeout: AbortSignal | undefined, diagnose?: Diagnosis): Promise<RunRecord> {
  const signals = [timeout, options.signal].filter((s): s is AbortSignal => s !== undefined);
  const signal = signals.length > 1 ? AbortSignal.any(signals) : signals[0];
  const outlasting = options.onStoreFailure ? new Outlasting(options.onStoreFailure, signal) : undefined;
  let run: RunRecord;
  for (;;) {
    const read = async () => {
      // Read after noting where the log ends: whatever changes the chain later is an event past it.
      const after = await store.lastEventSeq();
      const now = await mustGetRun(store, runId);
      return { after, now, links: await waitingChain(store, now) };
    };
    const { after, now, links } = outlasting ? await outlasting.attempt(read) : await read();
    run = now;
    if (settledChain(links, until)) return run;
    // A child's pause is in its own history: listen to each run of the chain, not the whole store.
    let moved: boolean;
    try {
      moved = await nextEventOf(store, links.map((r) => r.id), after, signal);
    } catch (error) {
      if (!outlasting) throw error;
      await outlasting.failed(error);
      continue;
    }
    if (!moved) break;
  }
  // Whichever of the deadline and the caller's signal ended the wait first says why.
  if (timeout?.aborted && signal?.reason === timeout.reason && options.timeoutMs !== undefined) {
    run = await mustGetRun(store, runId);
    throw new WaitTimeoutError(run, options.timeoutMs, until, await diagnose?.(run));
  }
  if (options.signal?.aborted) throw options.signal.reason;
  // The subscription ended by itself: the store was closed under this wait.
  run = await mustGetRun(store, runId);
  if (settledChain(await waitingChain(store, run), until)) return run;
  throw new PitwallError("RUN", `run ${runId} had not ${until === "end" ? "ended" : "settled"} when its store was closed (it is ${run.status})`);
}

/**
 * Whether any of `runIds` recorded an event after `after`: true as soon as one did, false when
 * `signal` (or the store closing) ended the wait first.
 */
async function nextEventOf(store: Store, runIds: readonly string[], after: number, signal: AbortSignal | undefined): Promise<boolean> {
  const done = new AbortController();
  const until = signal ? AbortSignal.any([signal, done.signal]) : done.signal;
  const firsts = runIds.map(async (runId) => {
    for await (const _event of store.subscribe({ runId, after, signal: until })) return true;
    return false;
  });
  // The losers end on the abort below; an error of theirs after the race is settled is moot.
  for (const first of firsts) first.catch(() => undefined);
  try {
    return await Promise.race(firsts);
  } finally {
    done.abort();
  }
}

/** The pending interrupts of a run and of the child runs it waits on: what it waits on people for. */
export async function pendingInterruptsOf(store: Store, runId: string): Promise<InterruptRecord[]> {
  const links = await waitingChain(store, await mustGetRun(store, runId));
  const lists = await Promise.all(links.map((r) => store.listInterrupts({ runId: r.id, status: "pending" })));
  return lists.flat();
}

/**
 * Which pauses are failures — the run stopped on something that went wrong, and an operator must
 * repair it before it goes on as meant — and which are questions the run asks a person by design.
 * `start --wait` exits 1 on a failure (`start --wait && deploy` stops there) and 0 on a question.
 * Every pause reason and interrupt kind is classed here, so that a new one must be.
 */
export const PAUSE_IS_FAILURE: Readonly<Record<Exclude<PauseReason, "interrupt">, boolean>> = {
  // An operator's breakpoint: they stopped it to look.
  breakpoint: false,
  // An operator stopped a node: its work did not finish.
  killed: true,
  "retries-exhausted": true,
  poison: true,
  // Waiting for a signal (a payment confirmed, a build finished): the run at work.
  signal: false,
};

/** For a run paused as `interrupt`: which kinds of interrupt are failures (see PAUSE_IS_FAILURE). */
export const INTERRUPT_IS_FAILURE: Readonly<Record<InterruptKind, boolean>> = {
  before: false,
  after: false,
  node: false,
  approval: false,
  breakpoint: false,
  // An at-most-once node whose worker died or shut down while it ran: it may have done part of its work.
  recovery: true,
};

/**
 * The run, or the sub-workflow run it waits on, that is paused on a failure (PAUSE_IS_FAILURE,
 * INTERRUPT_IS_FAILURE), with why in words; undefined when none is (running, ended, or paused for
 * a person's answer).
 */
export async function pausedOnFailure(store: Store, run: RunRecord): Promise<{ run: RunRecord; why: string } | undefined> {
  for (const link of await waitingChain(store, run)) {
    if (link.status !== "paused" || link.reason === null) continue;
    if (link.reason !== "interrupt") {
      if (PAUSE_IS_FAILURE[link.reason]) return { run: link, why: link.reason };
      continue;
    }
    const failed = (await store.listInterrupts({ runId: link.id, status: "pending" })).filter((i) => INTERRUPT_IS_FAILURE[i.kind]);
    if (failed.length > 0) return { run: link, why: failed.map((i) => `${i.kind} interrupt ${i.id} at ${i.node} (${i.request.decisions.join(" or ")})`).join(", ") };
  }
  return undefined;
}
