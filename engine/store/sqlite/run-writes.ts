import { ConflictError, NotFoundError, StaleFenceError } from "../../errors.js";
import { headFields, type CommandAnswer, type CommandRecord, type EventRecord, type NewEvent, type RunRecord } from "../records.js";
import { alreadyAnswered, checkCommit, claimPatch, movesUpdatedAt, runClaimedEvent, wokenRun } from "../rules.js";
import type { Claim, ClaimOptions, Commit, CommitResult, NewRun } from "../store.js";
import type { ClaimChoice } from "./claim-choice.js";
import type { HistoryQueries, CommitRecords } from "./history-queries.js";
import type { Queries } from "./queries.js";
import { isProgress, runColumns } from "./rows.js";

/**
 * What each write to a run does, inside the write transaction the store runs it in (group-commit.ts):
 * its preconditions are checked under the same lock that applies it. Synchronous: a transaction
 * never waits for anything but SQLite.
 */
export class RunWrites {
  constructor(
    private readonly q: Queries,
    private readonly history: HistoryQueries,
    private readonly claims: ClaimChoice,
    /** Told of the events each write appends, to publish them once committed. */
    private readonly appended: (events: readonly EventRecord[]) => void,
  ) {}

  createRun(init: NewRun): CommitResult {
    if (this.q.runStatus(init.run.id)) throw new ConflictError(`run ${init.run.id} already exists`);
    if (init.answering) this.pendingCommand(init.answering.answer.id);
    const run: RunRecord = { ...init.run, ...headFields(init.checkpoint) };
    // The run row first, since the checkpoint and event rows refer to its key; it already
    // counts the events appended below.
    const key = this.q.insertRun({ ...run, eventCount: run.eventCount + init.events.length });
    const events = this.appendEvents(run, init.events, { checkpoint: init.checkpoint }, key);
    if (!init.answering) return { events };
    return { events: [...events, ...this.answerCommand(init.answering.answer, init.answering.event).events] };
  }

  /** Claims the run chosen before the lock was taken, or, when another process took it, another. */
  claimRun(chosenId: string, options: ClaimOptions): Claim | undefined {
    // Read the clock under the write lock: waiting for it may have taken a while.
    const now = Date.now();
    let keyed = this.claims.claimableRun(chosenId, options, now);
    if (!keyed) {
      this.claims.taken(now);
      keyed = this.claims.claimableRun(this.claims.choose(options, now, false)?.id, options, now);
    }
    if (!keyed) return undefined;
    const { run, key } = keyed;
    const was = runColumns(run);
    const recovered = run.status === "running";
    const takenFrom = recovered && run.owner !== null ? run.owner : undefined;
    const fence = this.q.nextFence();
    Object.assign(run, claimPatch(run, options.owner, options.leaseMs, fence, now));
    this.appendEvents(run, [runClaimedEvent(run, options.owner, fence, recovered, now)], {}, key);
    // Saved by its key, the row is kept for the run's first commit (`WrittenRuns`).
    this.q.saveRun(run, key, was);
    this.claims.claimed(run, recovered);
    const head = run.lastCommit === null && run.head !== null ? this.history.getCheckpoint(run.head) : undefined;
    // A copy: the record saved is kept for the run's next write (`WrittenRuns`).
    return { run: { ...run }, fence, recovered, ...(takenFrom !== undefined ? { takenFrom } : {}), ...(head ? { head } : {}) };
  }

  renewLease(runId: string, owner: string, fence: number, leaseMs: number): void {
    const run = this.mustGetRun(runId);
    if (run.fence !== fence || run.owner !== owner) throw new StaleFenceError(runId, fence, run.fence);
    const was = runColumns(run);
    run.leaseUntil = Date.now() + leaseMs;
    this.q.saveRun(run, undefined, was);
  }

  commit(commit: Commit): CommitResult {
    const keyed = this.q.getKeyedRun(commit.runId);
    if (!keyed) throw new NotFoundError("run", commit.runId);
    const { run, key } = keyed;
    const was = runColumns(run);
    if (checkCommit(run, commit, { interrupt: (id) => this.q.getInterrupt(id), command: (id) => this.q.getCommand(id) }) === "duplicate") return { events: [] };
    for (const command of commit.submit ?? []) if (this.q.getCommand(command.id)) throw new ConflictError(`command ${command.id} already exists`);
    const now = Date.now();
    const active = movesUpdatedAt(run.status, commit);
    run.lastCommit = commit.id;
    if (commit.fenceOut) run.fence = this.q.nextFence();
    if (commit.run) Object.assign(run, commit.run);
    if (commit.checkpoint) Object.assign(run, headFields(commit.checkpoint));
    for (const interrupt of commit.interrupts ?? []) this.q.putInterrupt(interrupt);
    for (const command of commit.submit ?? []) this.q.insertCommand(command);
    for (const answer of commit.commands ?? []) this.q.saveCommand({ ...this.q.getCommand(answer.id)!, ...answer });
    for (const id of commit.wake ?? []) {
      const waiting = this.q.getRun(id);
      const woken = waiting && wokenRun(waiting, now);
      if (woken) this.q.saveRun({ ...waiting, ...woken }, undefined, runColumns(waiting));
    }
    // Interrupts change only through commits: without any, the count stands.
    if (commit.interrupts?.length) run.pendingInterrupts = this.q.pendingInterrupts(run.id);
    if (active) run.updatedAt = now;
    const events = this.appendEvents(run, commit.events ?? [], { checkpoint: commit.checkpoint, tasks: commit.tasks }, key);
    // A step of a running run moves only its progress, which is then written alone.
    const progressOnly = !commit.fenceOut && !commit.interrupts?.length && Object.keys(commit.run ?? {}).every(isProgress);
    this.q.saveRun(run, key, was, progressOnly);
    return { events };
  }

  submitCommand(command: CommandRecord, event: NewEvent): CommitResult {
    const run = this.mustGetRun(command.runId);
    if (this.q.getCommand(command.id)) throw new ConflictError(`command ${command.id} already exists`);
    this.q.insertCommand(command);
    const was = runColumns(run);
    const events = this.appendEvents(run, [event]);
    this.q.saveRun(run, undefined, was);
    return { events };
  }

  answerCommand(answer: CommandAnswer, event: NewEvent): CommitResult {
    const command = this.pendingCommand(answer.id);
    this.q.saveCommand({ ...command, ...answer });
    const run = this.mustGetRun(command.runId);
    const was = runColumns(run);
    const events = this.appendEvents(run, [event]);
    this.q.saveRun(run, undefined, was);
    return { events };
  }

  private pendingCommand(id: string): CommandRecord {
    const command = this.q.getCommand(id);
    if (!command) throw new NotFoundError("command", id);
    if (command.status !== "pending") throw alreadyAnswered(id, command.status);
    return command;
  }

  mustGetRun(id: string): RunRecord {
    const run = this.q.getRun(id);
    if (!run) throw new NotFoundError("run", id);
    return run;
  }

  /**
   * Numbers events store-wide (their row id) and within the run (its event count), and writes the
   * checkpoint and tasks committed with them. `key` is the run's row key, looked up when the
   * caller did not read it with the run.
   */
  private appendEvents(run: RunRecord, events: readonly NewEvent[], records: CommitRecords = {}, key = this.q.runKey(run.id)): EventRecord[] {
    if (key === undefined) throw new NotFoundError("run", run.id);
    const numbered = this.history.insertCommit(key, run.id, run.eventCount + 1, events, records);
    run.eventCount += events.length;
    this.appended(numbered);
    return numbered;
  }
}
