import type { ChainReader } from "../state/read.js";
import type { EventType } from "../runtime/events.js";
import type {
  ArtifactRef,
  CheckpointRecord,
  CheckpointSummary,
  CommandAnswer,
  CommandRecord,
  EventRecord,
  InterruptRecord,
  NewEvent,
  RunPatch,
  RunRecord,
  RunStatus,
  RunStorage,
  ScheduleAdvance,
  ScheduleRecord,
  StoreRoom,
  TaskRecord,
  WorkerRecord,
  WorkflowRecord,
} from "./records.js";

/**
 * One atomic write to a run: everything in it is applied, or nothing is (one transaction in
 * SQLite, one script in Redis). Preconditions are checked inside the same atomic unit.
 */
export interface Commit {
  /** Unique per commit. A commit whose id is the run's last applied one is acknowledged, not re-applied. */
  id: string;
  runId: string;
  /** The writer's fencing token. A different current token → StaleFenceError, nothing written. */
  fence: number;
  /**
   * Gives the run a new fencing token in this write (the store's next, as a claim does): whoever
   * held the run can write nothing more for it. Set by an operator applying a command to a run
   * nobody holds — one whose worker's lease ran out may still have that worker, stalled, behind it.
   */
  fenceOut?: boolean;
  /** The run's head checkpoint must still be this one (ConflictError otherwise). */
  expectHead?: string | null;
  /** The run's status must be one of these (ConflictError otherwise). */
  expectStatus?: readonly RunStatus[];
  /** These interrupts must still be pending (ConflictError otherwise): exactly-once resolution. */
  expectPending?: readonly string[];
  run?: RunPatch;
  /** A new checkpoint; it becomes the run's head. Its `n` must be the head's plus one. */
  checkpoint?: CheckpointRecord;
  /** Tasks to insert or replace. */
  tasks?: readonly TaskRecord[];
  interrupts?: readonly InterruptRecord[];
  /**
   * Operator commands to store (ConflictError if one exists), for a command applied in the same
   * write that records it; their `operator.requested` events are among `events`.
   */
  submit?: readonly CommandRecord[];
  /**
   * Answers to operator commands (or to those stored by `submit`), written only while each is
   * pending: one answered already → ConflictError, nothing written. Two processes answering one
   * command (a worker letting go of its run, the operator who recorded it) never both succeed.
   */
  commands?: readonly Pick<CommandRecord, "id" | "status" | "result" | "answeredAt">[];
  events?: readonly NewEvent[];
  /** Runs waiting on this one (a parent waiting for its child) to make claimable now. */
  wake?: readonly string[];
}

export interface CommitResult {
  /** The committed events with their store-wide and per-run numbers. */
  events: EventRecord[];
}

export interface ClaimOptions {
  owner: string;
  leaseMs: number;
  /** Only runs of these workflow versions (the ones this worker can execute); all when absent. */
  versions?: readonly string[];
  /** Claim this run only (if it is claimable). */
  runId?: string;
  /**
   * Runs not to take over: those the claiming worker executes itself. Their lease may run out
   * while the store is away, and claiming one would take it from under its own executor, which
   * then runs its finished work again.
   */
  exclude?: readonly string[];
  /**
   * `false`: only runs that are not take-overs (queued ones), for a worker that has just regained
   * its store after losing it for longer than a lease: the owners of the leases that ran out
   * meanwhile were most likely cut off too, and get a lease period to renew them.
   */
  takeOver?: boolean;
  /**
   * Per workflow name, at most this many of its runs (every version together) may be running at
   * once (`limits.runsAtOnce`): a queued run of one with that many running is passed over for
   * the next claimable run of another. A take-over is never held back: its run is counted already.
   */
  runsAtOnce?: Readonly<Record<string, number>>;
}

export interface Claim {
  run: RunRecord;
  fence: number;
  /** The previous owner's lease had expired while the run was running: its tasks need recovery. */
  recovered: boolean;
  /** For a take-over (`recovered`), the worker whose lease ran out. */
  takenFrom?: string;
  /**
   * The run's head checkpoint, when the store read it with the claim: the SQLite store does for a
   * run no step was committed to yet (most runs a worker claims), whose loading is then that read
   * alone, made in the claim's transaction instead of one of its own.
   */
  head?: CheckpointRecord;
  /**
   * How far the store's clock is ahead of this process's (negative: behind), from a store that
   * judges timers by a clock of its own (Redis: the server's); absent, it is this process's.
   */
  storeAheadMs?: number;
}

export interface RunFilter {
  status?: RunStatus | readonly RunStatus[];
  workflow?: string;
  /** Runs with this parent; `null` for top-level runs only. */
  parentRunId?: string | null;
  /** Runs with every one of these tags (name → value). */
  tags?: Record<string, string>;
  /** Runs on a version that starts with any of these (a version's first characters, as listings print it). */
  versions?: readonly string[];
  limit?: number;
  /** From a previous page's `nextCursor`. */
  cursor?: string;
}

export interface EventQuery {
  /** Only events with a larger store-wide sequence number. */
  after?: number;
  runId?: string;
  types?: readonly EventType[];
  /** At most this many, the oldest first. */
  limit?: number;
  /** Only the newest this many (still in order, oldest first): a run's tail. */
  last?: number;
}

/** A deadline a worker acts on (`Store.listDeadlines`): when, on the store's clock. */
export interface Deadline {
  kind: "interrupt" | "run";
  id: string;
  at: number;
}

/** Which of a run's tasks `listTasks` reads: `step`, one step's; `afterStep`, those of the steps after it. */
export interface TaskRange {
  step?: number;
  afterStep?: number;
}

export interface SubscribeOptions {
  /** Only events with a larger sequence number (default: from now on). */
  after?: number;
  runId?: string;
  types?: readonly EventType[];
  /** Ends the subscription. */
  signal?: AbortSignal;
}

export interface NewRun {
  run: RunRecord;
  checkpoint: CheckpointRecord;
  events: readonly NewEvent[];
  /**
   * The answer to the command that makes this run (a fork's, on its source run), with its event,
   * written in the same atomic write: the run is made only while that command is pending
   * (ConflictError, nothing written, once it is answered). A fork another process has answered
   * as abandoned can then never make its run after all.
   */
  answering?: { answer: CommandAnswer; event: NewEvent };
}

/** The Store methods that write: what a store opened read-only refuses (read-only.ts). */
export const STORE_WRITES = ["putWorkflow", "createRun", "claimRun", "renewLease", "commit", "submitCommand", "answerCommand", "putArtifact", "deleteRun", "putWorker", "putSchedule", "advanceSchedule", "deleteSchedule"] as const satisfies readonly (keyof Store)[];

/**
 * The Store contract (DESIGN.md §4). Every method is async so that Redis fits; memory, SQLite
 * and Redis pass the same contract test suite.
 */
export interface Store extends ChainReader {
  /** The store's URL with any password removed, for display. */
  readonly description: string;

  putWorkflow(record: WorkflowRecord): Promise<void>;
  getWorkflow(version: string): Promise<WorkflowRecord | undefined>;
  listWorkflows(): Promise<Omit<WorkflowRecord, "definition">[]>;

  /**
   * Creates a run with its input checkpoint and first events (and answers the command that makes
   * it, `answering`); ConflictError if the id exists, or if that command was answered already.
   */
  createRun(init: NewRun): Promise<CommitResult>;
  getRun(id: string): Promise<RunRecord | undefined>;
  /** Most recently updated first. */
  listRuns(filter?: RunFilter): Promise<{ runs: RunRecord[]; nextCursor?: string }>;
  countRuns(): Promise<Record<RunStatus, number>>;

  /**
   * Claims one runnable run: queued (and due, and not waiting on an unfinished child), or
   * running with an expired lease. Sets the owner and lease and a new, larger fencing token.
   */
  claimRun(options: ClaimOptions): Promise<Claim | undefined>;
  /** Extends the lease; StaleFenceError if the run was taken over. */
  renewLease(runId: string, owner: string, fence: number, leaseMs: number): Promise<void>;

  commit(commit: Commit): Promise<CommitResult>;

  getCheckpoint(id: string): Promise<CheckpointRecord | undefined>;
  /** A run's checkpoints, oldest first. */
  listCheckpoints(runId: string, options?: { limit?: number; afterN?: number }): Promise<CheckpointRecord[]>;
  /** The same without their state: cheap for a long run whose snapshots hold megabytes. */
  listCheckpointSummaries(runId: string, options?: { limit?: number; afterN?: number }): Promise<CheckpointSummary[]>;

  getTask(id: string): Promise<TaskRecord | undefined>;
  /** A run's tasks: all of them, those of one `step`, or those of the steps after `afterStep`. */
  listTasks(runId: string, options?: TaskRange): Promise<TaskRecord[]>;

  getInterrupt(id: string): Promise<InterruptRecord | undefined>;
  /**
   * The deadlines workers act on, the soonest first: those of the pending interrupts (answered at
   * them) and of the runs not ended (canceled at them). Read from indexes of their own, so that
   * it costs what the deadlines are, not what the store holds.
   */
  listDeadlines(): Promise<Deadline[]>;
  /** Oldest first. */
  listInterrupts(filter?: { status?: "pending" | "resolved"; runId?: string; limit?: number }): Promise<InterruptRecord[]>;

  /** Stores a command and its `operator.requested` event together. */
  submitCommand(command: CommandRecord, event: NewEvent): Promise<CommitResult>;
  /** Answers a pending command (ConflictError if already answered), with its `operator.*` event. */
  answerCommand(answer: Pick<CommandRecord, "id" | "status" | "result" | "answeredAt">, event: NewEvent): Promise<CommitResult>;
  getCommand(id: string): Promise<CommandRecord | undefined>;
  listCommands(filter?: { runId?: string; status?: CommandRecord["status"]; limit?: number }): Promise<CommandRecord[]>;

  readEvents(query?: EventQuery): Promise<EventRecord[]>;
  lastEventSeq(): Promise<number>;
  /**
   * New events as they are committed, after `after` (default: from now). Ends when the signal
   * aborts. Idle cost is near zero: no busy loop.
   */
  subscribe(options?: SubscribeOptions): AsyncIterable<EventRecord>;

  putArtifact(runId: string, data: Uint8Array, mediaType: string): Promise<ArtifactRef>;
  getArtifact(sha256: string): Promise<{ data: Uint8Array; mediaType: string } | undefined>;

  runStorage(runId: string): Promise<RunStorage>;
  /**
   * Room left for the store to grow, so that operators see a full disk (SQLite: the file system
   * of its file; Redis: `maxmemory`) before, or while, workers fail to commit. Undefined where
   * the store cannot tell (memory; Redis without a memory limit).
   */
  room(): Promise<StoreRoom | undefined>;

  /**
   * Deletes a run that has ended, with its child runs, and everything of theirs: checkpoints,
   * tasks, interrupts, commands, events and the artifacts no other run holds. Returns the ids
   * deleted (the run first). NotFoundError for an unknown run; ConflictError (nothing deleted)
   * for a child run (delete its top-level run) or a tree where a run has not ended. Store-wide
   * event numbers are never reused: the numbers of deleted events are left as gaps.
   */
  deleteRun(runId: string): Promise<string[]>;

  /**
   * Records a worker's heartbeat, replacing the record of the same id, and returns the record it
   * replaced: one written by another instance since this one last wrote says that two processes
   * run with one id. Records not seen for `WORKER_RECORDS_KEPT_MS` are dropped meanwhile.
   */
  putWorker(record: WorkerRecord): Promise<WorkerRecord | undefined>;
  /** The workers' records, the most recently seen first. */
  listWorkers(): Promise<WorkerRecord[]>;

  /**
   * Stores a schedule: a new one (`expectRevision` null; ConflictError if its id is taken), or a
   * change to one read at `expectRevision` (ConflictError if it was written since, NotFoundError
   * if it is gone). The store gives it the next revision, and returns it as stored.
   */
  putSchedule(record: ScheduleRecord, expectRevision: number | null): Promise<ScheduleRecord>;
  getSchedule(id: string): Promise<ScheduleRecord | undefined>;
  /** Every schedule, by id. */
  listSchedules(): Promise<ScheduleRecord[]>;
  /** Whether there was one to delete. */
  deleteSchedule(id: string): Promise<boolean>;
  /**
   * Moves a fired schedule on (compare-and-set): writes `advance` only while its `nextAt` is still
   * `expectNextAt`, so that of the workers that read one due time exactly one moves it on. Whether
   * it did (false: another did first, an operator changed its times, or it is gone).
   */
  advanceSchedule(id: string, expectNextAt: number, advance: ScheduleAdvance): Promise<boolean>;
  /** Now on the store's clock, which schedules' times are on (Redis: the server's; else this process's). */
  clock(): Promise<number>;

  /**
   * Deletions made in a row (a prune) may leave the erasure of what they deleted from the store's
   * files to a moment later (SQLite: emptying its WAL, at most once a second): this makes it now.
   * Stores without such files do not have it.
   */
  eraseDeleted?(): Promise<void>;

  close(): Promise<void>;
}
