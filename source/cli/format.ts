import { leaseRanOut, type RunRecord } from "../../engine/index.js";

export function age(at: number | null, now = Date.now()): string {
  if (at === null) return "-";
  const s = Math.max(0, Math.round((now - at) / 1000));
  if (s < 60) return `${s}s`;
  if (s < 3600) return `${Math.floor(s / 60)}m`;
  if (s < 86_400) return `${Math.floor(s / 3600)}h`;
  return `${Math.floor(s / 86_400)}d`;
}

export function bytes(n: number): string {
  if (n < 1024) return `${n} B`;
  if (n < 1024 * 1024) return `${(n / 1024).toFixed(1)} kB`;
  if (n < 1024 * 1024 * 1024) return `${(n / 1024 / 1024).toFixed(1)} MB`;
  return `${(n / 1024 / 1024 / 1024).toFixed(1)} GB`;
}

export function clock(at: number): string {
  return new Date(at).toISOString().slice(11, 23);
}

/**
 * `paused (interrupt)`: a paused run always says why, a running one whose lease ran out says so,
 * and a queued one says when it is parked on a timer or a sub-workflow rather than waiting for a worker.
 */
export function runStatus(run: Pick<RunRecord, "status" | "reason" | "leaseUntil" | "wakeAt" | "waitingOn">, now = Date.now()): string {
  if (leaseRanOut(run, now)) return "running (lease ran out)";
  if (run.status === "queued" && run.waitingOn) return "queued (on a sub-workflow)";
  if (run.status === "queued" && run.wakeAt !== null && run.wakeAt > now) return `queued (timer, wakes in ${age(now, run.wakeAt)})`;
  return run.status === "paused" && run.reason ? `paused (${run.reason})` : run.status;
}
