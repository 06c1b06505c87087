import { createHash } from "node:crypto";
import { statfs } from "node:fs/promises";
import { statSync } from "node:fs";
import { dirname, resolve } from "node:path";
import type Database from "better-sqlite3";
import { ConflictError, NotFoundError, StaleFenceError, StoreError } from "../../errors.js";
import type { ChainRow } from "../../state/read.js";
import { EventFeed } from "../event-feed.js";
import {
  RUN_STATUSES,
  headFields,
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
  type StoreRoom,
  type TaskRecord,
  type WorkerRecord,
  type WorkflowRecord,
} from "../records.js";
import { WORKER_RECORDS_KEPT_MS, checkCommit, checkDeletion, claimPatch, decodeCursor, encodeCursor, movesUpdatedAt, runClaimedEvent, storeRoom } from "../rules.js";
import type { Claim, ClaimOptions, Commit, CommitResult, EventQuery, NewRun, RunFilter, Store, SubscribeOptions } from "../store.js";
import { backupStore, type BackupResult } from "./backup.js";
import { connect, type Durability } from "./connect.js";
import { ClaimChoice } from "./claim-choice.js";
import { storeFailure } from "./failure.js";
import { Erasure } from "./erasure.js";
import { GroupCommit } from "./group-commit.js";
import { GroupDocs } from "./group-docs.js";
import { HistoryQueries, type CommitRecords } from "./history-queries.js";
import { Queries } from "./queries.js";
import { SCHEMA_VERSION } from "./schema.js";
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
  private readonly history: HistoryQueries;
  private readonly claims: ClaimChoice;
  private readonly feed: EventFeed;
  private readonly busyTimeoutMs: number;
  private readonly erasure: Erasure;
  private readonly writes: GroupCommit;
  /** The file opened (device and inode), to notice it deleted or replaced under this process. */
  private readonly identity: { dev: number; ino: number } | undefined;
  private lastIdentityCheck = 0;

  constructor(
    readonly file: string,
    options: SqliteStoreOptions = {},
  ) {
    this.description = `sqlite:${file}`;
    this.busyTimeoutMs = options.busyTimeoutMs ?? 5000;
    this.db = connect(file, { durability: options.durability ?? "process", busyTimeoutMs: this.busyTimeoutMs, readOnly: options.readOnly ?? false, create: options.create ?? true });
    const statements = new Statements(this.db);
    const written = new WrittenRuns(() => this.q.dataVersion());
    this.q = new Queries(statements, written);
    const docs = new GroupDocs(statements);
    this.history = new HistoryQueries(statements, docs);
    this.claims = new ClaimChoice(this.q);
    this.writes = new GroupCommit(this.db, (error) => this.failure(error), (events) => this.feed.publish(events), {
      begin: () => {
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
    this.identity = fileIdentity(file);
  }

  /** `checkStillThere` on the path of every commit: at most once a second (a stat is not free). */
  private checkStillThereNow(): void {
    const now = Date.now();
    if (now - this.lastIdentityCheck < IDENTITY_CHECK_MS) return;
    this.checkStillThere();
    this.lastIdentityCheck = now;
  }

  /**
   * The file at the store's path is still the one this process opened. Deleted or replaced (a
   * restore, a mistaken `rm`), what this process reads is a store nobody else sees and what it
   * writes is lost: asked by the console's health check and every claim of a worker.
   */
  private checkStillThere(): void {
    if (!this.identity) return;
    const now = fileIdentity(this.file);
    if (now?.dev === this.identity.dev && now.ino === this.identity.ino) return;
    throw new StoreError(`store ${this.file} was ${now ? "replaced by another file" : "deleted"} while this process had it open: what it reads and writes is no longer that store; restart this process`, { gone: true });
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
    this.checkStillThere();
    await this.writes.write(() => this.q.putWorkflow(record), false);
  }

  async getWorkflow(version: string): Promise<WorkflowRecord | undefined> {
    return this.read(() => this.q.getWorkflow(version));
  }

  async listWorkflows(): Promise<Omit<WorkflowRecord, "definition">[]> {
    return this.read(() => this.q.listWorkflows());
  }

  async createRun(init: NewRun): Promise<CommitResult> {
    // A run started in a file nobody else sees would be lost without a word: say so now.
    this.checkStillThere();
    return this.writes.write(() => {
      if (this.q.runStatus(init.run.id)) throw new ConflictError(`run ${init.run.id} already exists`);
      const run: RunRecord = { ...init.run, ...headFields(init.checkpoint) };
      // The run row first, since the checkpoint and event rows refer to its key; it already
      // counts the events appended below.
      const key = this.q.insertRun({ ...run, eventCount: run.eventCount + init.events.length });
      const events = this.appendEvents(run, init.events, { checkpoint: init.checkpoint }, key);
      return { events };
    });
  }

  async getRun(id: string): Promise<RunRecord | undefined> {
    return this.read(() => this.q.getRun(id));
  }

  async listRuns(filter: RunFilter = {}): Promise<{ runs: RunRecord[]; nextCursor?: string }> {
    const limit = filter.limit ?? 100;
    const before = filter.cursor ? decodeCursor(filter.cursor) : undefined;
    const runs = this.read(() =>
      this.q.listRuns({
        ...(filter.status !== undefined ? { statuses: ([] as RunStatus[]).concat(filter.status) } : {}),
        ...(filter.workflow !== undefined ? { workflow: filter.workflow } : {}),
        ...(filter.parentRunId !== undefined ? { parentRunId: filter.parentRunId } : {}),
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
    this.checkStillThere();
    const chosen = this.read(() => this.claims.choose(options, Date.now(), true));
    if (!chosen) return undefined;
    return this.writes.write(() => {
      // Read the clock under the write lock: waiting for it may have taken a while.
      const now = Date.now();
      let run = this.claims.claimableRun(chosen.id, options, now);
      if (!run) {
        this.claims.taken(now);
        run = this.claims.claimableRun(this.claims.choose(options, now, false)?.id, options, now);
      }
      if (!run) return undefined;
      const recovered = run.status === "running";
      const takenFrom = recovered && run.owner !== null ? run.owner : undefined;
      const fence = this.q.nextFence();
      Object.assign(run, claimPatch(run, options.owner, options.leaseMs, fence, now));
      this.appendEvents(run, [runClaimedEvent(run, options.owner, fence, recovered, now)]);
      this.q.saveRun(run);
      this.claims.claimed(run, recovered);
      return { run, fence, recovered, ...(takenFrom !== undefined ? { takenFrom } : {}) };
    });
  }

  async renewLease(runId: string, owner: string, fence: number, leaseMs: number): Promise<void> {
    this.checkStillThereNow();
    await this.writes.write(() => {
      const run = this.mustGetRun(runId);
      if (run.fence !== fence || run.owner !== owner) throw new StaleFenceError(runId, fence, run.fence);
      run.leaseUntil = Date.now() + leaseMs;
      this.q.saveRun(run);
    }, false);
  }

  async commit(commit: Commit): Promise<CommitResult> {
    // A worker holding runs goes on committing them: it too must stop when its file is gone.
    this.checkStillThereNow();
    return this.writes.write(() => {
      const keyed = this.q.getKeyedRun(commit.runId);
      if (!keyed) throw new NotFoundError("run", commit.runId);
      const { run, key } = keyed;
      if (checkCommit(run, commit, (id) => this.q.getInterrupt(id)) === "duplicate") return { events: [] };
      for (const command of commit.submit ?? []) if (this.q.getCommand(command.id)) throw new ConflictError(`command ${command.id} already exists`);
      const now = Date.now();
      const active = movesUpdatedAt(run.status, commit);
      run.lastCommit = commit.id;
      if (commit.run) Object.assign(run, commit.run);
      if (commit.checkpoint) Object.assign(run, headFields(commit.checkpoint));
      for (const interrupt of commit.interrupts ?? []) this.q.putInterrupt(interrupt);
      for (const command of commit.submit ?? []) this.q.insertCommand(command);
      for (const answer of commit.commands ?? []) {
        const command = this.q.getCommand(answer.id);
        if (command) this.q.saveCommand({ ...command, ...answer });
      }
      for (const id of commit.wake ?? []) {
        const waiting = this.q.getRun(id);
        if (waiting && waiting.status === "queued" && waiting.waitingOn === run.id) {
          this.q.saveRun({ ...waiting, waitingOn: null, updatedAt: now });
        }
      }
      // Interrupts change only through commits: without any, the count stands.
      if (commit.interrupts?.length) run.pendingInterrupts = this.q.pendingInterrupts(run.id);
      if (active) run.updatedAt = now;
      const events = this.appendEvents(run, commit.events ?? [], { checkpoint: commit.checkpoint, tasks: commit.tasks }, key);
      this.q.saveRun(run);
      return { events };
    });
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

  async listTasks(runId: string, options: { step?: number } = {}): Promise<TaskRecord[]> {
    return this.read(() => this.history.listTasks(runId, options.step));
  }

  async getInterrupt(id: string): Promise<InterruptRecord | undefined> {
    return this.read(() => this.q.getInterrupt(id));
  }

  async listInterrupts(filter: { status?: "pending" | "resolved"; runId?: string; limit?: number } = {}): Promise<InterruptRecord[]> {
    return this.read(() => this.q.listInterrupts(filter));
  }

  async submitCommand(command: CommandRecord, event: NewEvent): Promise<CommitResult> {
    this.checkStillThere();
    return this.writes.write(() => {
      const run = this.mustGetRun(command.runId);
      if (this.q.getCommand(command.id)) throw new ConflictError(`command ${command.id} already exists`);
      this.q.insertCommand(command);
      const events = this.appendEvents(run, [event]);
      this.q.saveRun(run);
      return { events };
    });
  }

  async answerCommand(answer: Pick<CommandRecord, "id" | "status" | "result" | "answeredAt">, event: NewEvent): Promise<CommitResult> {
    return this.writes.write(() => {
      const command = this.q.getCommand(answer.id);
      if (!command) throw new NotFoundError("command", answer.id);
      if (command.status !== "pending") throw new ConflictError(`command ${answer.id} was already ${command.status}`);
      this.q.saveCommand({ ...command, ...answer });
      const run = this.mustGetRun(command.runId);
      const events = this.appendEvents(run, [event]);
      this.q.saveRun(run);
      return { events };
    });
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
    this.checkStillThere();
    return this.read(() => this.history.lastEventSeq());
  }

  subscribe(options: SubscribeOptions = {}): AsyncIterable<EventRecord> {
    return this.feed.subscribe(this, options);
  }

  async putArtifact(runId: string, data: Uint8Array, mediaType: string): Promise<ArtifactRef> {
    const ref: ArtifactRef = { sha256: createHash("sha256").update(data).digest("hex"), size: data.byteLength, mediaType };
    await this.writes.write(() => {
      this.mustGetRun(runId);
      this.q.putArtifact(runId, ref, data);
    }, false);
    return ref;
  }

  async getArtifact(sha256: string): Promise<{ data: Uint8Array; mediaType: string } | undefined> {
    return this.read(() => this.q.getArtifact(sha256));
  }

  async runStorage(runId: string): Promise<RunStorage> {
    return this.read(() => {
      this.mustGetRun(runId);
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
      const run = this.mustGetRun(runId);
      const tree = [run];
      for (let i = 0; i < tree.length; i++) for (const child of this.q.childRunIds(tree[i]!.id)) tree.push(this.mustGetRun(child));
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

  private mustGetRun(id: string): RunRecord {
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
    this.writes.appended(numbered);
    return numbered;
  }
}

/** How often the commit path looks whether the store's file is still the one opened. */
const IDENTITY_CHECK_MS = 1_000;

function fileIdentity(file: string): { dev: number; ino: number } | undefined {
  try {
    const { dev, ino } = statSync(file);
    return { dev, ino };
  } catch {
    return undefined;
  }
}
