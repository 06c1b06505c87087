import type { RunRecord } from "../records.js";
import { claimOrder, claimable } from "../rules.js";
import type { ClaimOptions } from "../store.js";
import type { ClaimCandidate, Queries } from "./queries.js";

/** How many claimable runs one look finds, and how long they serve the claims that follow it. */
const LOOK_AHEAD = 16;
const LOOK_AHEAD_MS = 200;
/** After another process took a listed run, how long each claim looks afresh instead. */
const CONTENDED_MS = 1_000;

/**
 * Which run a claim takes: the claimable run that has waited longest (`claimable`, `claimOrder`),
 * read from the columns a claim decides on, before the write lock is taken; under the lock the
 * store reads and checks that one run again (`claimableRun`).
 */
export class ClaimChoice {
  /**
   * The claimable runs the last look found, in claim order, kept for the claims that follow it
   * within LOOK_AHEAD_MS with the same options: a worker with free slots claims several runs in a
   * row, and one look serves them all. When another process took one meanwhile, the check under
   * the lock fails and the claim looks again there (`taken`); processes that claim from the same
   * runs then each look afresh for a while, as their lists would keep colliding.
   */
  private ahead: { key: string; until: number; runs: ClaimCandidate[] } | undefined;
  private contendedUntil = 0;

  constructor(private readonly q: Queries) {}

  /** The next run the last look found (`reuse`), or the first of a new look. */
  choose(options: ClaimOptions, now: number, reuse: boolean): ClaimCandidate | undefined {
    const key = JSON.stringify([options.versions ?? null, options.runId ?? null]);
    if (reuse && now >= this.contendedUntil && this.ahead?.key === key && this.ahead.until > now) {
      // Runs the worker took since (now its own, excluded) are passed over.
      for (let next = this.ahead.runs.shift(); next; next = this.ahead.runs.shift()) if (!options.exclude?.includes(next.id)) return next;
    }
    const runs = this.q.claimCandidates(now, options.versions, options.runId, LOOK_AHEAD).filter((run) => this.canClaim(run, options, now));
    runs.sort(claimOrder);
    this.ahead = { key, until: now + LOOK_AHEAD_MS, runs: runs.slice(1) };
    return runs[0];
  }

  /** The run chosen was no longer claimable under the lock: another process took it, most likely. */
  taken(now: number): void {
    this.ahead = undefined;
    this.contendedUntil = now + CONTENDED_MS;
  }

  /** The run, read whole, when it may be claimed now. */
  claimableRun(runId: string | undefined, options: ClaimOptions, now: number): RunRecord | undefined {
    const run = runId === undefined ? undefined : this.q.getRun(runId);
    return run && this.canClaim(run, options, now) ? run : undefined;
  }

  private canClaim(run: ClaimCandidate, options: ClaimOptions, now: number): boolean {
    return claimable(run, now, options, (id) => this.q.runStatus(id));
  }
}
