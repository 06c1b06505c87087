import { leaseRanOut, nextRetry, type RetryWait, type RunRecord, type Store, type TaskRecord } from "../../engine/index.js";
import { inline } from "../text/plain.js";

export function age(at: number | null, now = Date.now()): string {
  if (at === null) return "-";
  const s = Math.max(0, Math.round((now - at) / 1000));
  if (s < 60) return `${s}s`;
  if (s < 3600) return `${Math.floor(s / 60)}m`;
  if (s < 86_400) return `${Math.floor(s / 3600)}h`;
  return `${Math.floor(s / 86_400)}d`;
}

export { formatBytes as bytes } from "../../engine/index.js";

export function clock(at: number): string {
  return new Date(at).toISOString().slice(11, 23);
}

/**
 * `paused (interrupt)`: a paused run always says why, a running one whose lease ran out says so,
 * and a queued one says when it is parked on a timer, a retry's backoff or a sub-workflow rather
 * than waiting for a worker. `retry` (retryWaitOf) is the failed node it waits to run again.
 */
export function runStatus(run: Pick<RunRecord, "status" | "reason" | "leaseUntil" | "wakeAt" | "waitingOn">, retry?: RetryWait, now = Date.now()): string {
  if (leaseRanOut(run, now)) return "running (lease ran out)";
  if (run.status === "queued" && run.waitingOn) return "queued (on a sub-workflow)";
  // A worker holding a run through a short backoff keeps it running; a longer one releases it until then.
  const retrying = retry && retry.at > now && (run.status === "running" || (run.status === "queued" && run.wakeAt !== null && retry.at <= run.wakeAt));
  if (retrying) return `${run.status} (retry of ${retry.node} in ${age(now, retry.at)}, attempt ${retry.attempt}${retry.maxAttempts ? ` of ${retry.maxAttempts}` : ""})`;
  if (run.status === "queued" && run.wakeAt !== null && run.wakeAt > now) return `queued (timer, wakes in ${age(now, run.wakeAt)})`;
  return run.status === "paused" && run.reason ? `paused (${run.reason})` : run.status;
}

/**
 * The retry a queued or running run waits out, from the tasks of its step in progress (read
 * unless given) and its workflow's retry policy; undefined for any other run.
 */
export async function retryWaitOf(store: Store, run: RunRecord, tasks?: readonly TaskRecord[]): Promise<RetryWait | undefined> {
  if (run.status !== "running" && !(run.status === "queued" && run.wakeAt !== null)) return undefined;
  const stepTasks = (tasks ?? (await store.listTasks(run.id, { step: run.step + 1 }))).filter((t) => t.step === run.step + 1);
  if (!nextRetry(stepTasks)) return undefined;
  return nextRetry(stepTasks, (await store.getWorkflow(run.version))?.definition);
}

/**
 * A child run as its parent waits on it (`show`, `start --wait`): its status and, paused, what
 * gets it going again — an answer for a question, a retry or a cancel for a failure.
 */
export function childRunState(child: RunRecord): string {
  const status = runStatus(child);
  if (child.status !== "paused") return status;
  const fix = `retry it (${retryCommands(child)}) or cancel it (pitwall cancel ${child.id} --reason TEXT)`;
  switch (child.reason) {
    case "interrupt":
    case "breakpoint":
    case null:
      return `${status}: answer its pending interrupts (pitwall interrupts --run ${child.id})`;
    case "retries-exhausted":
      return `${status}${child.error ? `: ${inline(child.error.message, 100)}` : ""}; once the cause is fixed, ${fix}`;
    case "killed":
      return `${status}: an operator killed its task; ${fix}`;
    case "poison":
      return `${status}: workers kept dying while they ran it; once the cause is fixed, ${fix}`;
    case "signal":
      return `${status}: waiting for a signal (pitwall signal ${child.id} NAME)`;
  }
}

function retryCommands(run: RunRecord): string {
  const nodes = run.error?.node ? [run.error.node] : run.current;
  return nodes.length === 0 ? `pitwall retry ${run.id} NODE` : nodes.map((node) => `pitwall retry ${run.id} ${node}`).join("; ");
}
