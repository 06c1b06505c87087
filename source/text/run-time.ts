import type { AttemptRecord, RunRecord } from "../../engine/index.js";

/**
 * How long a run has run, in ms: from its start to its end (or now), less the time it spent
 * paused — waiting for a person is not running. A run paused now counts to when it paused: its
 * `pausedAt`, else (a run paused before that was kept) `pausedAt` as its run.paused event says,
 * else its last update. Undefined before it started.
 */
export function ranMs(run: RunRecord, now: number, pausedAtEvent?: number): number | undefined {
  if (run.startedAt === null) return undefined;
  const until = run.endedAt ?? (run.status === "paused" ? (run.pausedAt ?? pausedAtEvent ?? run.updatedAt) : now);
  return Math.max(0, until - run.startedAt - (run.pausedMs ?? 0));
}

/** How long attempts ran, in ms (one still running, to `now`): the waits between them — a pause, a backoff — left out. */
export function attemptsRanMs(attempts: readonly AttemptRecord[], now: number): number {
  return attempts.reduce((ms, a) => ms + (a.endedAt ?? now) - a.startedAt, 0);
}
