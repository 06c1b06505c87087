import { ConflictError, StoreError, errorMessage, isPitwallError } from "../errors.js";
import { headFields, type RunRecord } from "../store/records.js";
import { Batch } from "./batch.js";
import type { ExecutorHost } from "./executor-host.js";
import type { InflightTasks } from "./inflight.js";
import { runTakenAway } from "./lease-loss.js";
import type { RunState } from "./run-state.js";
import { waitingWhy } from "./step.js";

/** Thrown out of a commit that ended the execution (a lost lease, a store refusing for good): the loop stops. */
export class Stopped extends Error {}

/** What a commit tells the executor that owns it. */
export interface CommitOwner {
  /** The execution ends, and why (the first reason given stands). */
  finish(why: string): void;
  /** Another worker holds the run now: nothing more may be written. */
  leaseLost(): Promise<void>;
}

/**
 * Commits a run's batch under its fencing token, then starts the tasks the batch marked running.
 * Its commits are numbered, so that one whose reply was lost is known by its id when tried again.
 */
export class Committer {
  private commits = 0;
  /** Read at once by a commit waiting for the store to answer: the executor's loop cannot take messages then. */
  shutdownAsked = false;

  constructor(
    private readonly rs: RunState,
    private readonly fence: number,
    private readonly host: ExecutorHost,
    private readonly inflight: InflightTasks,
    private readonly owner: CommitOwner,
  ) {}

  /**
   * Sends the batch. A lost lease stops the executor without writing anything more; a failing
   * store is retried with the same commit id (so a commit whose reply was lost is not applied
   * twice) until the lease would have run out. `ending`: why the run stopped, should this commit
   * stop it, when its record cannot tell (who canceled it).
   */
  async commit(expect: { expectHead?: string } = {}, ending?: string): Promise<void> {
    const rs = this.rs;
    if (rs.batch.empty) {
      this.launchPending();
      return;
    }
    const batch = rs.batch;
    rs.batch = new Batch();
    // A committed step is progress: workers lost before it no longer count towards poison.
    if (batch.checkpoint && (rs.run.lostInARow ?? 0) > 0) batch.patchRun({ lostInARow: 0 });
    // Unique without randomness: no two owners share a fence, and this owner counts its commits.
    const commit = batch.toCommit(rs.run.id, this.fence, expect, `c${this.fence}.${++this.commits}`);
    // The store away for a while (locked, a disk error, Redis restarting) loses nothing: the commit
    // is tried again until it lands (a commit that landed unseen is known by its id), or until
    // another worker took the run over once the lease ran out (StaleFenceError), which then does
    // the work again, or the run was deleted. Giving up sooner would throw away finished work and
    // call its worker lost.
    let warned = false;
    for (let delay = 50; ; delay = Math.min(delay * 2, 2000)) {
      try {
        await this.host.store.commit(commit);
        if (warned) this.host.commitSettled?.(rs.run.id, true);
        break;
      } catch (error) {
        if (runTakenAway(error, rs.run.id)) {
          if (warned) this.host.commitSettled?.(rs.run.id, false);
          rs.launch = [];
          await this.owner.leaseLost();
          throw new Stopped();
        }
        // An error that is not the store's (a value it cannot write) would come back each time:
        // it is recorded as the step's failure (the executor's recordBreakdown), not tried again.
        if (!isPitwallError(error)) {
          if (warned) this.host.commitSettled?.(rs.run.id, false);
          throw error;
        }
        const retryable = error instanceof StoreError && !error.gone && !error.damaged;
        if (error instanceof ConflictError || !retryable || this.shutdownAsked) {
          if (warned) this.host.commitSettled?.(rs.run.id, false);
          rs.launch = [];
          this.inflight.abortAll("lease-lost");
          this.owner.finish(`commit failed: ${errorMessage(error)}`);
          throw new Stopped();
        }
        if (!warned) this.host.commitWaiting?.(rs.run.id, errorMessage(error));
        warned = true;
        await new Promise((resolve) => setTimeout(resolve, delay));
      }
    }
    if (batch.run) Object.assign(rs.run, batch.run);
    if (batch.checkpoint) Object.assign(rs.run, headFields(batch.checkpoint));
    for (const interrupt of batch.interrupts.values()) rs.interrupts.set(interrupt.id, interrupt);
    if (rs.run.status !== "running") {
      rs.launch = [];
      this.owner.finish(ending ?? endedWhy(rs.run));
      return;
    }
    this.launchPending();
  }

  private launchPending(): void {
    const launch = this.rs.launch;
    this.rs.launch = [];
    for (const task of launch) this.inflight.launch(task);
  }
}

/** Why a run stopped, in a worker's words: the error of a failed run, what a paused one waits on. */
function endedWhy(run: RunRecord): string {
  if (run.status === "failed" && run.error) return `${run.error.node ? `${run.error.node}: ` : ""}${run.error.message}`;
  if (run.status === "paused") return `${run.reason ?? "paused"}${run.current.length > 0 ? ` at ${run.current.join(", ")}` : ""}`;
  if (run.status === "queued") return run.waitingOn || run.wakeAt ? waitingWhy(run.waitingOn, run.wakeAt ?? Infinity) : "for another worker";
  if (run.status === "succeeded") return `after ${run.step} step${run.step === 1 ? "" : "s"}`;
  return "by an operator";
}
