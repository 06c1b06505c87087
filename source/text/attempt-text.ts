import { countTries, resumesText, tryCountText, type AttemptRecord, type TaskStatus } from "../../engine/index.js";

/**
 * A node's attempts as tries (`1`, `2`, `1 (+1 resume)`): an attempt that paused and the one that
 * resumed it are one try, not a failure and another go (the engine's `triesOf`).
 */
export function triesText(attempts: readonly AttemptRecord[]): string {
  const { tries, resumes } = countTries(attempts);
  return `${tries}${resumesText(resumes)}`;
}

/**
 * The tries of one or more tasks (a mapped node's items) in words, as the engine's failures count
 * them: `1 attempt`, `4 attempts`, `1 attempt (+1 resume)`.
 */
export function attemptsText(tasks: readonly { attempts: readonly AttemptRecord[] }[]): string {
  const counts = tasks.map((t) => countTries(t.attempts));
  return tryCountText({ tries: counts.reduce((n, c) => n + c.tries, 0), resumes: counts.reduce((n, c) => n + c.resumes, 0) });
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
