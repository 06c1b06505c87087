import { NotFoundError, StaleFenceError } from "../errors.js";
import type { EventRecord, RunRecord } from "../store/records.js";
import type { Store } from "../store/store.js";
import type { EventPayloads } from "./events.js";

/**
 * Whether the store refused a renewal or a commit because the run is no longer this worker's:
 * another holds it (a stale fence: a takeover, an operator's command applied meanwhile), or it
 * was deleted. Either way nothing more may be written for it.
 */
export function runTakenAway(error: unknown, runId: string): boolean {
  return error instanceof StaleFenceError || (error instanceof NotFoundError && error.what === "run" && error.id === runId);
}

/** The events that say who claimed a run, and who ended, paused or released it since. */
const MOVES = ["run.claimed", "run.released", "run.paused", "run.succeeded", "run.failed", "run.canceled"] as const;

/** The event that puts a run in each status but running. */
const BECAME = { queued: "run.released", paused: "run.paused", succeeded: "run.succeeded", failed: "run.failed", canceled: "run.canceled" } as const;

/**
 * What became of a run after the worker `self`, holding it with `fence`, lost its lease — as the
 * store knows it now: who took it over (the first claim with a greater fence), and whether the
 * run is running there, has ended, paused or been queued again (and by whom, when not by that
 * worker), or is gone from the store. Undefined when the store does not answer.
 */
export async function whatBecameOf(store: Store, runId: string, self: string, fence: number): Promise<string | undefined> {
  let run: RunRecord | undefined;
  let events: EventRecord[];
  try {
    [run, events] = await Promise.all([store.getRun(runId), store.readEvents({ runId, types: MOVES })]);
  } catch {
    return undefined;
  }
  if (!run) return `run ${runId} has since been deleted from the store`;
  const claimedWith = (e: EventRecord) => (e.type === "run.claimed" ? (e.payload as EventPayloads["run.claimed"]).fence : undefined);
  const mine = events.find((e) => claimedWith(e) === fence);
  const takeover = events.find((e) => (claimedWith(e) ?? 0) > fence);
  const taker = takeover && (takeover.payload as EventPayloads["run.claimed"]).worker;
  const who = (worker: string) => (worker === self ? "this worker (a new claim)" : `worker ${worker}`);
  if (run.status === "running") {
    const owner = run.owner ?? taker;
    if (taker === undefined || owner === undefined) return `run ${runId} is running${owner === undefined ? "" : ` on ${who(owner)}`}`;
    return `run ${runId} was taken over by ${who(taker)}${owner === taker ? ", which is running it now" : ` and is now running on ${who(owner)}`}`;
  }
  const status = run.status;
  const from = (takeover ?? mine)?.seq ?? 0;
  const event = events.findLast((e) => e.seq > from && e.type === BECAME[status]);
  // Said when someone else than the worker that took it over did it: an operator's cancel or kill.
  const by = event && event.actor !== `worker:${taker}` && event.actor !== "engine" ? ` by ${event.actor}` : "";
  const became = {
    queued: `been queued again${by}`,
    paused: `paused (${run.reason ?? "no reason given"})${by}`,
    succeeded: "succeeded",
    failed: `failed${by}`,
    canceled: `been canceled${by}`,
  }[status];
  return taker === undefined ? `run ${runId} has since ${became}` : `run ${runId} was taken over by ${who(taker)} and has since ${became}`;
}
