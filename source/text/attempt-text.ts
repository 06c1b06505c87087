import type { AttemptRecord, TaskStatus } from "../../engine/index.js";

/** An attempt that stopped to wait (asked a question, parked on a timer or a child run), with no error: the next one resumes it. */
function paused(attempt: AttemptRecord): boolean {
  return attempt.outcome === "interrupted" && attempt.error === undefined;
}

/** A node's attempts counted as people mean them: an attempt that paused and the one that resumed it are one try. */
function tryCount(attempts: readonly AttemptRecord[]): { tries: number; resumes: number } {
  const resumes = attempts.filter((a, i) => paused(a) && i < attempts.length - 1).length;
  return { tries: attempts.length - resumes, resumes };
}

function resumesText(resumes: number): string {
  return resumes === 0 ? "" : ` (+${resumes} resume${resumes === 1 ? "" : "s"})`;
}

/**
 * A node's attempts as tries (`1`, `2`, `1 (+1 resume)`): an attempt that paused and the one that
 * resumed it are one try, not a failure and another go.
 */
export function triesText(attempts: readonly AttemptRecord[]): string {
  const { tries, resumes } = tryCount(attempts);
  return `${tries}${resumesText(resumes)}`;
}

/**
 * The tries of one or more tasks (a mapped node's items) in words, as `triesText` counts them:
 * `1 attempt`, `4 attempts`, `1 attempt (+1 resume)`.
 */
export function attemptsText(tasks: readonly { attempts: readonly AttemptRecord[] }[]): string {
  const counts = tasks.map((t) => tryCount(t.attempts));
  const tries = counts.reduce((n, c) => n + c.tries, 0);
  return `${tries} attempt${tries === 1 ? "" : "s"}${resumesText(counts.reduce((n, c) => n + c.resumes, 0))}`;
}

/**
 * How often a durable call was made: a call its node made again on a retry succeeded each time
 * (`made 2 times`), which is not a failed try (`3 tries, 1 failed`).
 */
export function madeText(attempts: readonly AttemptRecord[]): string {
  const failed = attempts.filter((a) => a.outcome === "failed").length;
  if (failed === 0) return attempts.length === 1 ? "made once" : `made ${attempts.length} times`;
  return `${attempts.length} tries, ${failed === attempts.length ? "all" : failed} failed`;
}

/** A durable call's status, with how often it was made when that was more than once. */
export function callStatusText(status: TaskStatus, attempts: readonly AttemptRecord[]): string {
  return attempts.length <= 1 ? status : `${status} (${madeText(attempts)})`;
}
