import type { AttemptRecord, TaskStatus } from "../../engine/index.js";

/** An attempt that stopped to wait (asked a question, parked on a timer or a child run), with no error: the next one resumes it. */
function paused(attempt: AttemptRecord): boolean {
  return attempt.outcome === "interrupted" && attempt.error === undefined;
}

/**
 * A node's attempts as people mean them, grouped into tries: an attempt that paused and the ones
 * that resumed it are one try; an attempt after a failed or canceled one is another try (a retry).
 */
export function triesOf<A extends AttemptRecord>(attempts: readonly A[]): A[][] {
  const tries: A[][] = [];
  attempts.forEach((attempt, i) => (i > 0 && paused(attempts[i - 1]!) ? tries.at(-1)!.push(attempt) : tries.push([attempt])));
  return tries;
}

function tryCount(attempts: readonly AttemptRecord[]): { tries: number; resumes: number } {
  const tries = triesOf(attempts).length;
  return { tries, resumes: attempts.length - tries };
}

/** ` (+1 resume)`, ` (+2 resumes)`; nothing for none. */
export function resumesText(resumes: number): string {
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
