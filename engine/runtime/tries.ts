import type { AttemptRecord } from "../store/records.js";

/**
 * An attempt that stopped to wait (asked a question, parked on a timer or a child run), with no
 * error: the next one resumes it. One closed "interrupted" with an error (an at-most-once node
 * stopped part-way, asking whether to run again) did not pause: what follows is another try.
 */
function paused(attempt: AttemptRecord): boolean {
  return attempt.outcome === "interrupted" && attempt.error === undefined;
}

/**
 * A node's attempts as people mean them, grouped into tries: an attempt that paused and the ones
 * that resumed it are one try; an attempt after a failed or canceled one is another try (a retry).
 * The retry policy counts neither: it counts failures (retry.ts `failuresCounted`).
 */
export function triesOf<A extends AttemptRecord>(attempts: readonly A[]): A[][] {
  const tries: A[][] = [];
  attempts.forEach((attempt, i) => (i > 0 && paused(attempts[i - 1]!) ? tries.at(-1)!.push(attempt) : tries.push([attempt])));
  return tries;
}

/** How many tries a node's attempts make, and how many of the attempts resumed a pause. */
export interface TryCount {
  tries: number;
  resumes: number;
}

export function countTries(attempts: readonly AttemptRecord[]): TryCount {
  const tries = triesOf(attempts).length;
  return { tries, resumes: attempts.length - tries };
}

/** ` (+1 resume)`, ` (+2 resumes)`; nothing for none. */
export function resumesText(resumes: number): string {
  return resumes === 0 ? "" : ` (+${resumes} resume${resumes === 1 ? "" : "s"})`;
}

/** Tries in words, as failures and listings say them: `1 attempt`, `4 attempts`, `1 attempt (+1 resume)`. */
export function tryCountText({ tries, resumes }: TryCount): string {
  return `${tries} attempt${tries === 1 ? "" : "s"}${resumesText(resumes)}`;
}
