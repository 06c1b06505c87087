import { createHash } from "node:crypto";
import { statfs } from "node:fs/promises";
import { dirname, resolve } from "node:path";
import type Database from "better-sqlite3";
import { StoreError } from "../../errors.js";
import type { ChainRow } from "../../state/read.js";
import { EventFeed } from "../event-feed.js";
import {
  RUN_STATUSES,
  type ArtifactRef,
  type CheckpointRecord,
  type CheckpointSummary,
  type CommandRecord,
  type EventRecord,
  type InterruptRecord,
  type NewEvent,
  type RunRecord,
  type RunStatus,
  type RunStorage,
  type ScheduleAdvance,
  type ScheduleRecord,
  type StoreRoom,
  type TaskRecord,
  type WorkerRecord,
  type WorkflowRecord,
} from "../records.js";
import { WORKER_RECORDS_KEPT_MS, checkDeletion, decodeCursor, encodeCursor, storeRoom } from "../rules.js";
import type { Claim, ClaimOptions, Commit, CommitResult, Deadline, EventQuery, NewRun, RunFilter, Store, SubscribeOptions, TaskRange } from "../store.js";
import { backupStore } from "./backup.js";
import { connect } from "./connect.js";
import type { BackupResult, Durability } from "./store-types.js";
import { ClaimChoice } from "./claim-choice.js";
import { storeFailure } from "./failure.js";
import { Erasure } from "./erasure.js";
import { GroupCommit } from "./group-commit.js";
import { GroupDocs } from "./group-docs.js";
import { FileIdentity } from "./file-identity.js";
import { HistoryQueries } from "./history-queries.js";
import { Queries } from "./queries.js";
import { RunListings } from "./run-listings.js";
import { RunWrites } from "./run-writes.js";
import { SCHEMA_VERSION } from "./schema.js";
import { ScheduleRows } from "./schedule-rows.js";
import { Statements } from "./statements.js";
import { DataVersionWatch } from "./watch.js";
import { WrittenRuns } from "./written-runs.js";

export interface SqliteStoreOptions {
  /** `process` (default): survives a process crash. `os`: every commit is fsynced, survives power loss. */
  durability?: Durability;
  /** How long an operation waits for another process's write before failing (default 5000 ms). */
  busyTimeoutMs?: number;
  /** While a subscriber waits, how often other processes' commits are looked for (default 30 ms). */
  watchMs?: number;
  /**
   * Opens the file read-only: it must exist and be a store this pitwall reads (schema version 3
   * or later); it is neither created nor upgraded. Writes then fail (openStore refuses them before
   * they reach it).
   */
  readOnly?: boolean;
  /** Creates the file when it is missing (default); false makes a missing file an error. */
  create?: boolean;
}

/**
 * The embedded, durable store: one SQLite file shared by every process on the host (workers, the
 * console, the CLI). Each write runs inside a `BEGIN IMMEDIATE` transaction (shared with the writes
 * issued in the same turn: group-commit.ts), so its preconditions (fence, head, pending
 * interrupts) are checked under the same write lock that applies it.
 */
export class SqliteStore implements Store {
  readonly description: string;
  private readonly db: Database.Database;
  private readonly q: Queries;
  private readonly listings: RunListings;
  private readonly history: HistoryQueries;
  private readonly claims: ClaimChoice;
  private readonly feed: EventFeed;
  private readonly busyTimeoutMs: number;
  private readonly erasure: Erasure;
  private readonly writes: GroupCommit;
  /**
   * The file opened, to notice it deleted or replaced under this process: looked at by every write
   * transaction under its lock (so no write lands in a file nobody else sees), and by the reads
   * that stand for the store's health (the console's check, a claim's look for runs).
   */
  private readonly identity: FileIdentity;
  private readonly runWrites: RunWrites;
  private readonly schedules: ScheduleRows;

  constructor(
    readonly file: string,
    options: SqliteStoreOptions = {},
  ) {
    this.description = `sqlite:${file}`;
    this.busyTimeoutMs = options.busyTimeoutMs ?? 5000;
    this.db = connect(file, { durability: options.durability ?? "process", busyTimeoutMs: this.busyTimeoutMs, readOnly: options.readOnly ?? false, create: options.create ?? true });
    const statements = new Statements(this.db);
    this.schedules = new ScheduleRows(statements);
    const written = new WrittenRuns(() => this.q.dataVersion());
    this.q = new Queries(statements, written);
    this.listings = new RunListings(statements);
    const docs = new GroupDocs(statements);
    this.history = new HistoryQueries(statements, docs);
    this.claims = new ClaimChoice(this.q);
    this.identity = new FileIdentity(file);
    this.writes = new GroupCommit(this.db, (error) => this.failure(error), (events) => this.feed.publish(events), {
      begin: () => {
        this.identity.check();
        written.begin();
        this.history.newTransaction();
      },
      end: () => docs.end(),
      rolledBack: () => {
        written.rolledBack();
        this.history.newTransaction();
        docs.clear();
      },
    });
    this.erasure = new Erasure(this.db);
    const watch = new DataVersionWatch(() => this.q.dataVersion(), options.watchMs ?? 30);
    this.feed = new EventFeed(watch);
    this.runWrites = new RunWrites(this.q, this.history, this.claims, (events) => this.writes.appended(events));
  }

  /** The connection's settings as SQLite reports them (for diagnostics). */
  settings(): { journalMode: string; synchronous: "NORMAL" | "FULL"; busyTimeoutMs: number } {
    return this.read(() => ({
      journalMode: this.db.pragma("journal_mode", { simple: true }) as string,
      synchronous: this.db.pragma("synchronous", { simple: true }) === 2 ? "FULL" : "NORMAL",
      busyTimeoutMs: this.db.pragma("busy_timeout", { simple: true }) as number,
    }));
  }

  async putWorkflow(record: WorkflowRecord): Promise<void> {
    await this.writes.write(() => this.q.putWorkflow(record), false);
  }

  async getWorkflow(version: string): Promise<WorkflowRecord | undefined> {
    return this.read(() => this.q.getWorkflow(version));
  }

  async listWorkflows(): Promise<Omit<WorkflowRecord, "definition">[]> {
    return this.read(() => this.q.listWorkflows());
  }

  async createRun(init: NewRun): Promise<CommitResult> {
    return this.writes.write(() => this.runWrites.createRun(init));
  }

  async getRun(id: string): Promise<RunRecord | undefined> {
    return this.read(() => this.q.getRun(id));
  }

  async listRuns(filter: RunFilter = {}): Promise<{ runs: RunRecord[]; nextCursor?: string }> {
    const limit = filter.limit ?? 100;
    const before = filter.cursor ? decodeCursor(filter.cursor) : undefined;
    const runs = this.read(() =>
      this.listings.listRuns({
        ...(filter.status !== undefined ? { statuses: ([] as RunStatus[]).concat(filter.status) } : {}),
        ...(filter.workflow !== undefined ? { workflow: filter.workflow } : {}),
        ...(filter.parentRunId !== undefined ? { parentRunId: filter.parentRunId } : {}),
        ...(filter.tags !== undefined ? { tags: filter.tags } : {}),
        ...(filter.versions !== undefined ? { versions: filter.versions } : {}),
        ...(before ? { before } : {}),
        limit: limit + 1,
      }),
    );
    const page = runs.slice(0, limit);
    const last = page[page.length - 1];
    return { runs: page, ...(runs.length > limit && last ? { nextCursor: encodeCursor(last) } : {}) };
  }

  async countRuns(): Promise<Record<RunStatus, number>> {
    const counts = Object.fromEntries(RUN_STATUSES.map((s) => [s, 0])) as Record<RunStatus, number>;
    for (const { status, n } of this.read(() => this.q.countRuns())) counts[status] = n;
    return counts;
  }

  async claimRun(options: ClaimOptions): Promise<Claim | undefined> {
    // The run is chosen before taking the write lock, which most calls (finding nothing) never
    // need; under the lock only that run is checked again, unless another process took it first.
    // A file deleted or replaced under this process is noticed as that write begins, or here
    // when nothing is found: an idle worker would otherwise poll a store nobody else sees.
    const chosen = this.read(() => this.claims.choose(options, Date.now(), true));
    if (!chosen) return void this.identity.check();
    this.claims.choosing(chosen.id);
    return this.writes.write(() => this.runWrites.claimRun(chosen.id, options)).finally(() => this.claims.settled(chosen.id));
  }

  async renewLease(runId: string, owner: string, fence: number, leaseMs: number): Promise<void> {
    await this.writes.write(() => this.runWrites.renewLease(runId, owner, fence, leaseMs), false);
  }

  async commit(commit: Commit): Promise<CommitResult> {
    return this.writes.write(() => this.runWrites.commit(commit));
  }

  async getCheckpoint(id: string): Promise<CheckpointRecord | undefined> {
    return this.read(() => this.history.getCheckpoint(id));
  }

  async listCheckpoints(runId: string, options: { limit?: number; afterN?: number } = {}): Promise<CheckpointRecord[]> {
    return this.read(() => this.history.listCheckpoints(runId, options.afterN ?? -1, options.limit ?? -1));
  }

  async listCheckpointSummaries(runId: string, options: { limit?: number; afterN?: number } = {}): Promise<CheckpointSummary[]> {
    return this.read(() => this.history.listCheckpointSummaries(runId, options.afterN ?? -1, options.limit ?? -1));
  }

  async checkpointRows(runId: string, ns: readonly number[]): Promise<ChainRow[]> {
    return this.read(() => this.history.checkpointRows(runId, ns));
  }

  async checkpointRowRange(runId: string, fromN: number, toN: number): Promise<ChainRow[]> {
    return this.read(() => this.history.checkpointRowRange(runId, fromN, toN));
  }

  async getTask(id: string): Promise<TaskRecord | undefined> {
    return this.read(() => this.history.getTask(id));
  }

  async listTasks(runId: string, options: TaskRange = {}): Promise<TaskRecord[]> {
    return this.read(() => this.history.listTasks(runId, options));
  }

  async getInterrupt(id: string): Promise<InterruptRecord | undefined> {
    return this.read(() => this.q.getInterrupt(id));
  }

  async listDeadlines(): Promise<Deadline[]> {
    return this.read(() => this.listings.listDeadlines());
  }

  async listInterrupts(filter: { status?: "pending" | "resolved"; runId?: string; limit?: number } = {}): Promise<InterruptRecord[]> {
    return this.read(() => this.q.listInterrupts(filter));
  }

  async submitCommand(command: CommandRecord, event: NewEvent): Promise<CommitResult> {
    return this.writes.write(() => this.runWrites.submitCommand(command, event));
  }

  async answerCommand(answer: Pick<CommandRecord, "id" | "status" | "result" | "answeredAt">, event: NewEvent): Promise<CommitResult> {
    return this.writes.write(() => this.runWrites.answerCommand(answer, event));
  }

  async getCommand(id: string): Promise<CommandRecord | undefined> {
    return this.read(() => this.q.getCommand(id));
  }

  async listCommands(filter: { runId?: string; status?: CommandRecord["status"]; limit?: number } = {}): Promise<CommandRecord[]> {
    return this.read(() => this.q.listCommands(filter));
  }

  async readEvents(query: EventQuery = {}): Promise<EventRecord[]> {
    return this.read(() => this.history.readEvents(query));
  }

  async lastEventSeq(): Promise<number> {
    this.identity.check();
    return this.read(() => this.history.lastEventSeq());
  }

  subscribe(options: SubscribeOptions = {}): AsyncIterable<EventRecord> {
    return this.feed.subscribe(this, options);
  }

  async putArtifact(runId: string, data: Uint8Array, mediaType: string): Promise<ArtifactRef> {
    const ref: ArtifactRef = { sha256: createHash("sha256").update(data).digest("hex"), size: data.byteLength, mediaType };
    await this.writes.write(() => {
      this.runWrites.mustGetRun(runId);
      this.q.putArtifact(runId, ref, data);
    }, false);
    return ref;
  }

  async getArtifact(sha256: string): Promise<{ data: Uint8Array; mediaType: string } | undefined> {
    return this.read(() => this.q.getArtifact(sha256));
  }

  async runStorage(runId: string): Promise<RunStorage> {
    return this.read(() => {
      this.runWrites.mustGetRun(runId);
      const artifacts = this.q.artifactBytes(runId);
      const { checkpoints, events } = this.history.storage(runId);
      return { checkpoints, events, artifacts, total: checkpoints + events + artifacts };
    });
  }

  /** The room left on the file system of the store's folder, for this process's user. */
  async room(): Promise<StoreRoom> {
    const folder = dirname(resolve(this.file));
    try {
      const fs = await statfs(folder);
      return storeRoom(fs.bavail * fs.bsize, fs.blocks * fs.bsize, `the file system of ${folder}`);
    } catch (error) {
      throw this.failure(error);
    }
  }

  async deleteRun(runId: string): Promise<string[]> {
    const deleted = await this.writes.write(() => {
      const run = this.runWrites.mustGetRun(runId);
      const tree = [run];
      for (let i = 0; i < tree.length; i++) for (const child of this.q.childRunIds(tree[i]!.id)) tree.push(this.runWrites.mustGetRun(child));
      checkDeletion(run, tree);
      this.erasure.overwriting(() => {
        for (const r of tree) {
          this.history.deleteHistory(r.id);
          this.q.deleteRun(r.id);
        }
      });
      return tree.map((r) => r.id);
    }, false);
    this.read(() => this.erasure.deleted());
    return deleted;
  }

  async eraseDeleted(): Promise<void> {
    this.read(() => this.erasure.now());
  }

  /**
   * Writes a consistent copy of the store to `file` (a new file) while other processes keep
   * working; see backup.ts. It blocks this process while it copies: run it from a process of its
   * own (`pitwall backup`) for a large store.
   */
  async backup(file: string): Promise<BackupResult> {
    this.writes.flush();
    return this.read(() => backupStore(this.db, file));
  }

  async close(): Promise<void> {
    if (this.db.open) this.writes.flush();
    if (this.db.open) this.erasure.now();
    this.feed.close();
    if (this.db.open) this.db.close();
  }

  async putWorker(record: WorkerRecord): Promise<WorkerRecord | undefined> {
    return this.writes.write(() => {
      const now = Date.now();
      return this.q.putWorker({ ...record, lastSeen: now }, now - WORKER_RECORDS_KEPT_MS);
    }, false);
  }

  async listWorkers(): Promise<WorkerRecord[]> {
    return this.read(() => this.q.listWorkers());
  }

  async putSchedule(record: ScheduleRecord, expectRevision: number | null): Promise<ScheduleRecord> {
    return this.writes.write(() => this.schedules.put(record, expectRevision), false);
  }

  async getSchedule(id: string): Promise<ScheduleRecord | undefined> {
    return this.read(() => this.schedules.get(id));
  }

  async listSchedules(): Promise<ScheduleRecord[]> {
    return this.read(() => this.schedules.list());
  }

  async deleteSchedule(id: string): Promise<boolean> {
    return this.writes.write(() => this.schedules.delete(id), false);
  }

  async advanceSchedule(id: string, expectNextAt: number, advance: ScheduleAdvance): Promise<boolean> {
    return this.writes.write(() => this.schedules.advance(id, expectNextAt, advance), false);
  }

  async clock(): Promise<number> {
    return Date.now();
  }

  private read<T>(fn: () => T): T {
    try {
      return fn();
    } catch (error) {
      throw this.failure(error);
    }
  }

  /**
   * What a failed operation is reported as (failure.ts). A record this process cannot read may
   * have been written by a newer pitwall that upgraded the store while this process ran: that is
   * what is said then, not that the store is corrupt.
   */
  private failure(error: unknown): Error {
    if (error instanceof SyntaxError) {
      const version = this.schemaVersion();
      if (version !== undefined && version > SCHEMA_VERSION) {
        return new StoreError(
          `store ${this.file} was upgraded by a newer pitwall (schema version ${version}; this process knows up to ${SCHEMA_VERSION}) while this process used it: restart it with the newer pitwall`,
          { cause: error },
        );
      }
    }
    return storeFailure(this.file, error, this.busyTimeoutMs);
  }

  private schemaVersion(): number | undefined {
    try {
      return this.db.pragma("user_version", { simple: true }) as number;
    } catch {
      return undefined;
    }
  }
}
