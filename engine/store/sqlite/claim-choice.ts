import type { RunRecord } from "../records.js";
import { claimOrder, claimable, runsAtOnceLimit } from "../rules.js";
import type { ClaimOptions } from "../store.js";
import type { ClaimCandidate, Queries } from "./queries.js";

/** How many claimable runs one look finds, and how long they serve the claims that follow it. */
const LOOK_AHEAD = 16;
const LOOK_AHEAD_MS = 200;
/** After another process took a listed run, how long each claim looks afresh instead. */
const CONTENDED_MS = 1_000;
/** How many workflows one look visits for queued runs (the next look goes on from where the turns are). */
const WORKFLOWS_PER_LOOK = 64;

/**
 * Which run a claim takes, by the rule every store applies (`pickClaim`: take-overs first, then
 * the workflows in turn, the oldest run of each first), read from the columns a claim decides on
 * before the write lock is taken; under the lock the store reads and checks that one run again
 * (`claimableRun`).
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
  /**
   * Runs chosen for claims still waiting for their write transaction: claims made at once choose
   * different runs, rather than the later ones finding the run chosen first taken under the lock.
   */
  private readonly chosen = new Set<string>();
  /** The workflow of the last queued run this process claimed: the next turn is the next workflow's. */
  private lastWorkflow: string | undefined;

  constructor(private readonly q: Queries) {}

  /** The next run the last look found (`reuse`), or the first of a new look. */
  choose(options: ClaimOptions, now: number, reuse: boolean): ClaimCandidate | undefined {
    const key = JSON.stringify([options.versions ?? null, options.runId ?? null, options.takeOver ?? true, options.runsAtOnce ?? null]);
    if (reuse && now >= this.contendedUntil && this.ahead?.key === key && this.ahead.until > now) {
      // Runs the worker took since (now its own, excluded) are passed over.
      for (let next = this.ahead.runs.shift(); next; next = this.ahead.runs.shift()) if (!this.chosen.has(next.id) && !options.exclude?.includes(next.id)) return next;
    }
    const runs = this.look(options, now);
    this.ahead = { key, until: now + LOOK_AHEAD_MS, runs: runs.slice(1) };
    return runs[0];
  }

  /** `run` is chosen for a claim until `settled`. */
  choosing(runId: string): void {
    this.chosen.add(runId);
  }

  settled(runId: string): void {
    this.chosen.delete(runId);
  }

  /** A queued run was claimed: its workflow had its turn. */
  claimed(run: Pick<RunRecord, "workflow">, recovered: boolean): void {
    if (!recovered) this.lastWorkflow = run.workflow;
  }

  /** The run chosen was no longer claimable under the lock: another process took it, most likely. */
  taken(now: number): void {
    this.ahead = undefined;
    this.contendedUntil = now + CONTENDED_MS;
  }

  /**
   * The run, read whole with its row key (in the write transaction of the claim), when it may be
   * claimed now.
   */
  claimableRun(runId: string | undefined, options: ClaimOptions, now: number): { run: RunRecord; key: number } | undefined {
    const keyed = runId === undefined ? undefined : this.q.getKeyedRun(runId);
    return keyed && this.canClaim(keyed.run, options, now) ? keyed : undefined;
  }

  /**
   * Claimable runs in claim order: take-overs, then the queued runs of the workflows in turn (of
   * a workflow with a limit, no more than it has room for: the claims that follow the look take
   * the others).
   */
  private look(options: ClaimOptions, now: number): ClaimCandidate[] {
    const running = this.runningCounts();
    const canClaim = (run: ClaimCandidate) => !this.chosen.has(run.id) && this.canClaim(run, options, now, running);
    if (options.runId !== undefined) return this.q.claimCandidates(now, options.versions, options.runId, 1).filter(canClaim);
    // As many more as are chosen already: those are passed over.
    const reach = LOOK_AHEAD + this.chosen.size;
    const takeovers = options.takeOver === false ? [] : this.q.expiredLeases(now, options.versions, reach).filter(canClaim);
    const turns: ClaimCandidate[][] = [];
    for (const workflow of this.turnOrder(this.q.queuedWorkflows(options.versions)).slice(0, WORKFLOWS_PER_LOOK)) {
      const limit = runsAtOnceLimit(workflow, options.runsAtOnce) ?? Number.POSITIVE_INFINITY;
      const runs = this.q.queuedOf(workflow, now, options.versions, reach).filter(canClaim).slice(0, Math.max(0, limit - running(workflow)));
      if (runs.length > 0) turns.push(runs);
    }
    const queued: ClaimCandidate[] = [];
    for (let i = 0; queued.length < LOOK_AHEAD && turns.some((runs) => i < runs.length); i++) {
      for (const runs of turns) if (i < runs.length) queued.push(runs[i]!);
    }
    return [...takeovers.sort(claimOrder), ...queued].slice(0, LOOK_AHEAD);
  }

  /** The workflow names from the one after the last claimed, wrapping around (`nextWorkflow`). */
  private turnOrder(names: string[]): string[] {
    const last = this.lastWorkflow;
    const from = last === undefined ? 0 : names.findIndex((name) => name > last);
    return from <= 0 ? names : [...names.slice(from), ...names.slice(0, from)];
  }

  private canClaim(run: ClaimCandidate, options: ClaimOptions, now: number, running = this.runningCounts()): boolean {
    return claimable(run, now, options, (id) => this.q.runStatus(id), running);
  }

  /** Running runs per workflow, each counted once when first asked (`runsAtOnce` limits). */
  private runningCounts(): (workflow: string) => number {
    const counted = new Map<string, number>();
    return (workflow) => {
      let n = counted.get(workflow);
      if (n === undefined) counted.set(workflow, (n = this.q.runningOf(workflow)));
      return n;
    };
  }
}
