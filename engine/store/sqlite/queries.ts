import type Database from "better-sqlite3";
import { parseCheckpointId, parseTaskId } from "../../ids.js";
import type { ChainRow } from "../../state/read.js";
import {
  type ArtifactRef,
  type CheckpointRecord,
  type CommandRecord,
  type EventRecord,
  type InterruptRecord,
  type NewEvent,
  type RunRecord,
  type RunStatus,
  type RunStorage,
  type TaskRecord,
  type WorkflowRecord,
} from "../records.js";
import type { EventQuery } from "../store.js";
import { batchDocs, eventBatchRow, eventRecords, type EventBatchRow } from "./event-rows.js";
import { docReference, readDocReference, unpackJson } from "./packed-json.js";
import { chainRow, checkpointMeta, checkpointRecord, checkpointRow, parseDoc, parseDocs, runRow, type CheckpointRow, type StoredCheckpointMeta } from "./rows.js";
import { stays, taskDoc, taskRecord, taskRow, type TaskRow } from "./task-rows.js";

type Param = string | number | null;

/**
 * Checkpoints, tasks and events name their run by its integer key (schema version 3): statements
 * find it from the run id they are given, and rows read back name the run by that id again.
 */
const RUN_KEY = "(SELECT key FROM runs WHERE id = :run_id)";

/**
 * The runs a worker may claim (the SQL form of `claimable` in rules.ts), oldest update first: the
 * queued ones and the running ones whose lease expired, each read along the status index.
 */
const FILTER = `(:versions IS NULL OR version IN (SELECT value FROM json_each(:versions))) AND (:runId IS NULL OR id = :runId)`;
const CANDIDATE_COLUMNS = "id, status, version, updated_at, wake_at, lease_until, waiting_on";
const CLAIMABLE = [
  `SELECT ${CANDIDATE_COLUMNS} FROM runs r
   WHERE status = 'queued' AND (wake_at IS NULL OR wake_at <= :now)
     AND (waiting_on IS NULL OR NOT EXISTS (
       SELECT 1 FROM runs c WHERE c.id = r.waiting_on AND c.status NOT IN ('succeeded', 'failed', 'canceled')))
     AND ${FILTER}
   ORDER BY updated_at, id LIMIT :limit`,
  `SELECT ${CANDIDATE_COLUMNS} FROM runs WHERE status = 'running' AND lease_until < :now AND ${FILTER} ORDER BY updated_at, id LIMIT :limit`,
];

/**
 * Every SQL statement of the store, synchronous, one method per question. Statements with a
 * fixed text are prepared once; filtered listings are prepared once per shape of filter.
 */
export class Queries {
  private readonly cache = new Map<string, Database.Statement>();

  constructor(private readonly db: Database.Database) {}

  private sql(text: string): Database.Statement {
    let statement = this.cache.get(text);
    if (!statement) {
      statement = this.db.prepare(text);
      this.cache.set(text, statement);
    }
    return statement;
  }

  /** Records kept whole as one JSON document per row, with the columns their queries need beside it. */
  private getDoc<T>(table: "runs" | "interrupts" | "commands", id: string): T | undefined {
    return parseDoc<T>(this.sql(`SELECT doc FROM ${table} WHERE id = ?`).get(id) as { doc: string } | undefined);
  }

  nextFence(): number {
    return (this.sql("UPDATE meta SET value = value + 1 WHERE key = 'fence' RETURNING value").get() as { value: number }).value;
  }

  /** The database's change counter for commits of other connections (PRAGMA data_version). */
  dataVersion(): number {
    return this.sql("PRAGMA data_version").pluck().get() as number;
  }

  // workflows

  putWorkflow(w: WorkflowRecord): void {
    this.sql("INSERT OR IGNORE INTO workflows (version, name, created_at, definition) VALUES (?, ?, ?, ?)").run(
      w.version,
      w.name,
      w.createdAt,
      JSON.stringify(w.definition),
    );
  }

  getWorkflow(version: string): WorkflowRecord | undefined {
    const row = this.sql("SELECT version, name, created_at, definition FROM workflows WHERE version = ?").get(version) as
      | { version: string; name: string; created_at: number; definition: string }
      | undefined;
    return row && { version: row.version, name: row.name, createdAt: row.created_at, definition: JSON.parse(row.definition) };
  }

  listWorkflows(): Omit<WorkflowRecord, "definition">[] {
    const rows = this.sql("SELECT version, name, created_at FROM workflows ORDER BY rowid").all() as { version: string; name: string; created_at: number }[];
    return rows.map((r) => ({ version: r.version, name: r.name, createdAt: r.created_at }));
  }

  // runs

  getRun(id: string): RunRecord | undefined {
    return this.getDoc<RunRecord>("runs", id);
  }

  runStatus(id: string): RunStatus | undefined {
    return this.sql("SELECT status FROM runs WHERE id = ?").pluck().get(id) as RunStatus | undefined;
  }

  insertRun(run: RunRecord): void {
    this.sql(
      `INSERT INTO runs (id, doc, status, workflow, version, parent_run_id, updated_at, wake_at, lease_until, waiting_on)
       VALUES (:id, :doc, :status, :workflow, :version, :parent_run_id, :updated_at, :wake_at, :lease_until, :waiting_on)`,
    ).run(runRow(run));
  }

  saveRun(run: RunRecord): void {
    this.sql(
      `UPDATE runs SET doc = :doc, status = :status, parent_run_id = :parent_run_id, updated_at = :updated_at,
         wake_at = :wake_at, lease_until = :lease_until, waiting_on = :waiting_on WHERE id = :id`,
    ).run(runRow(run));
  }

  listRuns(filter: { statuses?: RunStatus[]; workflow?: string; parentRunId?: string | null; before?: { updatedAt: number; id: string }; limit: number }): RunRecord[] {
    const where: string[] = [];
    const params: Param[] = [];
    if (filter.statuses) {
      where.push(`status IN (${filter.statuses.map(() => "?").join(", ")})`);
      params.push(...filter.statuses);
    }
    if (filter.workflow !== undefined) {
      where.push("workflow = ?");
      params.push(filter.workflow);
    }
    if (filter.parentRunId === null) where.push("parent_run_id IS NULL");
    else if (filter.parentRunId !== undefined) {
      where.push("parent_run_id = ?");
      params.push(filter.parentRunId);
    }
    if (filter.before) {
      where.push("(updated_at < ? OR (updated_at = ? AND id < ?))");
      params.push(filter.before.updatedAt, filter.before.updatedAt, filter.before.id);
    }
    const text = `SELECT doc FROM runs ${whereClause(where)} ORDER BY updated_at DESC, id DESC LIMIT ?`;
    return parseDocs<RunRecord>(this.sql(text).all(...params, filter.limit) as { doc: string }[]);
  }

  countRuns(): { status: RunStatus; n: number }[] {
    return this.sql("SELECT status, count(*) AS n FROM runs GROUP BY status").all() as { status: RunStatus; n: number }[];
  }

  /**
   * The runs a claim would pick first, in its order of preference. This is an indexed
   * pre-selection written after `claimable` and `pickClaim` (the rules every store shares),
   * which the caller still applies to the rows returned. Only the columns those rules read are
   * read: the chosen run's document is read once it is chosen.
   */
  claimCandidates(now: number, versions: readonly string[] | undefined, runId: string | undefined, limit: number): ClaimCandidate[] {
    const params = claimParams(now, versions, runId, limit);
    return CLAIMABLE.flatMap((text) => (this.sql(text).all(params) as CandidateRow[]).map(claimCandidate));
  }

  // checkpoints

  private insertCheckpoint(row: CheckpointRow): void {
    this.sql(
      `INSERT INTO checkpoints (run_key, n, snapshot_n, bytes, meta, delta, snapshot)
       VALUES (${RUN_KEY}, :n, :snapshot_n, :bytes, :meta, :delta, :snapshot)`,
    ).run(row);
  }

  getCheckpoint(id: string): CheckpointRecord | undefined {
    const key = parseCheckpointId(id);
    if (!key) return undefined;
    const row = this.sql(`SELECT :run_id AS run_id, * FROM checkpoints WHERE run_key = ${RUN_KEY} AND n = :n`).get({ run_id: key.runId, n: key.n }) as
      | CheckpointRow
      | undefined;
    return row && checkpointRecord(row, this.unpackDoc<StoredCheckpointMeta>(row.meta, new Map()));
  }

  listCheckpoints(runId: string, afterN: number, limit: number): CheckpointRecord[] {
    const rows = this.sql(`SELECT :run_id AS run_id, * FROM checkpoints WHERE run_key = ${RUN_KEY} AND n > :after ORDER BY n LIMIT :limit`).all({
      run_id: runId,
      after: afterN,
      limit,
    }) as CheckpointRow[];
    const batches = new Map<number, unknown[]>();
    return rows.map((row) => checkpointRecord(row, this.unpackDoc<StoredCheckpointMeta>(row.meta, batches)));
  }

  checkpointRows(runId: string, ns: readonly number[]): ChainRow[] {
    const rows = this.sql(
      `SELECT n, snapshot_n, delta, snapshot FROM checkpoints WHERE run_key = ${RUN_KEY} AND n IN (SELECT value FROM json_each(:ns))`,
    ).all({ run_id: runId, ns: JSON.stringify(ns) }) as CheckpointRow[];
    return rows.map(chainRow);
  }

  checkpointRowRange(runId: string, fromN: number, toN: number): ChainRow[] {
    const rows = this.sql(`SELECT n, snapshot_n, delta, snapshot FROM checkpoints WHERE run_key = ${RUN_KEY} AND n > :from AND n <= :to ORDER BY n`).all({
      run_id: runId,
      from: fromN,
      to: toN,
    }) as CheckpointRow[];
    return rows.map(chainRow);
  }

  // tasks

  private putTask(row: TaskRow): void {
    this.sql(
      `INSERT INTO tasks (run_key, step, id, created_at, doc) VALUES (${RUN_KEY}, :step, :id, :created_at, :doc)
       ON CONFLICT (run_key, step, id) DO UPDATE SET doc = excluded.doc`,
    ).run(row);
  }

  getTask(id: string): TaskRecord | undefined {
    const key = parseTaskId(id);
    if (!key) return undefined;
    const row = this.sql(`SELECT :run_id AS run_id, * FROM tasks WHERE run_key = ${RUN_KEY} AND step = :step AND id = :id`).get({
      run_id: key.runId,
      step: key.step,
      id,
    }) as TaskRow | undefined;
    return row && taskRecord(row, this.unpackDoc<Partial<TaskRecord>>(row.doc, new Map()));
  }

  listTasks(runId: string, step: number | undefined): TaskRecord[] {
    const rows =
      step === undefined
        ? this.sql(`SELECT :run_id AS run_id, * FROM tasks WHERE run_key = ${RUN_KEY} ORDER BY step, created_at, id`).all({ run_id: runId })
        : this.sql(`SELECT :run_id AS run_id, * FROM tasks WHERE run_key = ${RUN_KEY} AND step = :step ORDER BY created_at, id`).all({ run_id: runId, step });
    const batches = new Map<number, unknown[]>();
    return (rows as TaskRow[]).map((row) => taskRecord(row, this.unpackDoc<Partial<TaskRecord>>(row.doc, batches)));
  }

  // interrupts

  putInterrupt(interrupt: InterruptRecord): void {
    this.sql(
      `INSERT INTO interrupts (id, run_id, status, created_at, doc) VALUES (?, ?, ?, ?, ?)
       ON CONFLICT (id) DO UPDATE SET status = excluded.status, doc = excluded.doc`,
    ).run(interrupt.id, interrupt.runId, interrupt.status, interrupt.createdAt, JSON.stringify(interrupt));
  }

  getInterrupt(id: string): InterruptRecord | undefined {
    return this.getDoc<InterruptRecord>("interrupts", id);
  }

  pendingInterrupts(runId: string): number {
    return this.sql("SELECT count(*) FROM interrupts WHERE run_id = ? AND status = 'pending'").pluck().get(runId) as number;
  }

  listInterrupts(filter: { status?: "pending" | "resolved"; runId?: string; limit?: number }): InterruptRecord[] {
    const { where, params } = equalities({ status: filter.status, run_id: filter.runId });
    const text = `SELECT doc FROM interrupts ${whereClause(where)} ORDER BY created_at, id LIMIT ?`;
    return parseDocs<InterruptRecord>(this.sql(text).all(...params, filter.limit ?? -1) as { doc: string }[]);
  }

  // commands

  insertCommand(command: CommandRecord): void {
    this.sql("INSERT INTO commands (id, run_id, status, created_at, doc) VALUES (?, ?, ?, ?, ?)").run(
      command.id,
      command.runId,
      command.status,
      command.createdAt,
      JSON.stringify(command),
    );
  }

  saveCommand(command: CommandRecord): void {
    this.sql("UPDATE commands SET status = ?, doc = ? WHERE id = ?").run(command.status, JSON.stringify(command), command.id);
  }

  getCommand(id: string): CommandRecord | undefined {
    return this.getDoc<CommandRecord>("commands", id);
  }

  listCommands(filter: { runId?: string; status?: CommandRecord["status"]; limit?: number }): CommandRecord[] {
    const { where, params } = equalities({ run_id: filter.runId, status: filter.status });
    const text = `SELECT doc FROM commands ${whereClause(where)} ORDER BY created_at, rowid LIMIT ?`;
    return parseDocs<CommandRecord>(this.sql(text).all(...params, filter.limit ?? -1) as { doc: string }[]);
  }

  // events

  /**
   * Appends a commit's events as one row, numbered after the last event of the store and after
   * `runSeq - 1` within their run, and writes the commit's checkpoint and tasks. The documents of
   * the checkpoint and of the tasks that stay are packed with the events, in one deflate call for
   * the commit (zlib's fixed cost per call was most of what packing a step cost), and their rows
   * refer to them there. The records returned are the events as given, numbered (their payloads
   * are not copied).
   */
  insertCommit(runId: string, runSeq: number, events: readonly NewEvent[], { checkpoint, tasks = [] }: CommitRecords = {}): EventRecord[] {
    // Every record belongs to the run (checkCommit): deleting the run deletes its events row.
    if (events.length === 0) {
      if (checkpoint) this.insertCheckpoint(checkpointRow(checkpoint));
      for (const task of tasks) this.putTask(taskRow(task));
      return [];
    }
    const first = this.lastEventSeq() + 1;
    const seq = first + events.length - 1;
    const docs: unknown[] = [];
    const withEvents = (doc: unknown) => docReference({ seq, index: docs.push(doc) - 1 });
    if (checkpoint) this.insertCheckpoint(checkpointRow(checkpoint, withEvents(checkpointMeta(checkpoint))));
    for (const task of tasks) this.putTask(stays(task) ? taskRow(task, withEvents(taskDoc(task))) : taskRow(task));
    this.sql(`INSERT INTO events (seq, run_key, run_seq, count, events) VALUES (:seq, ${RUN_KEY}, :run_seq, :count, :events)`).run(
      eventBatchRow(runId, runSeq, seq, events, docs),
    );
    return events.map((event, i) => ({ seq: first + i, runSeq: runSeq + i, ...event }));
  }

  /**
   * A checkpoint's or task's document: in its own row, or with its commit's events (`batches`
   * keeps the events rows read, for the other documents of the same commit).
   */
  private unpackDoc<T>(stored: string | Buffer, batches: Map<number, unknown[]>): T {
    const reference = readDocReference(stored);
    if (!reference) return unpackJson<T>(stored);
    let docs = batches.get(reference.seq);
    if (!docs) {
      const row = this.sql("SELECT events FROM events WHERE seq = ?").pluck().get(reference.seq) as string | Buffer | undefined;
      docs = row === undefined ? [] : batchDocs(row);
      batches.set(reference.seq, docs);
    }
    // A damaged reference reads as damaged JSON does: the store reports the file corrupt.
    if (reference.index >= docs.length) throw new SyntaxError(`a record refers to document ${reference.index} of event row ${reference.seq}, which has ${docs.length}`);
    return docs[reference.index] as T;
  }

  /** Reads the batches in order (newest first for `last`) only as far as the query needs. */
  readEvents(query: EventQuery): EventRecord[] {
    if (query.last === 0 || query.limit === 0) return [];
    const after = query.after ?? 0;
    const where = ["e.seq > :after"];
    const params: Record<string, Param> = { after };
    if (query.runId !== undefined) {
      where.push(`e.run_key = ${RUN_KEY}`);
      params.run_id = query.runId;
    }
    const wanted = (e: EventRecord) => e.seq > after && (!query.types || query.types.includes(e.type));
    const newestFirst = query.last !== undefined;
    const rows = this.sql(
      `SELECT e.seq, r.id AS run_id, e.run_seq, e.count, e.events FROM events e JOIN runs r ON r.key = e.run_key ${whereClause(where)} ORDER BY e.seq ${newestFirst ? "DESC" : ""}`,
    ).iterate(params) as IterableIterator<EventBatchRow>;
    const found: EventRecord[][] = [];
    let count = 0;
    const enough = newestFirst ? query.last! : (query.limit ?? Infinity);
    for (const row of rows) {
      const events = eventRecords(row).filter(wanted);
      found.push(events);
      count += events.length;
      // Leaving the loop ends the statement (for...of returns the iterator).
      if (count >= enough) break;
    }
    if (!newestFirst) return found.flat().slice(0, query.limit);
    return found.reverse().flat().slice(-query.last!).slice(0, query.limit);
  }

  /** The last number given to an event, also when its run was deleted since (kept in `meta`). */
  lastEventSeq(): number {
    return this.sql("SELECT max(coalesce((SELECT max(seq) FROM events), 0), coalesce((SELECT value FROM meta WHERE key = 'event_seq'), 0))").pluck().get() as number;
  }

  // deleting runs

  childRunIds(id: string): string[] {
    return this.sql("SELECT id FROM runs WHERE parent_run_id = ?").pluck().all(id) as string[];
  }

  /** Deletes a run's rows in every table, and the artifacts that no other run holds. */
  deleteRun(id: string): void {
    const lastSeq = this.lastEventSeq();
    const key = { run_id: id };
    for (const table of ["checkpoints", "tasks", "events"]) this.sql(`DELETE FROM ${table} WHERE run_key = ${RUN_KEY}`).run(key);
    for (const table of ["interrupts", "commands"]) this.sql(`DELETE FROM ${table} WHERE run_id = ?`).run(id);
    const artifacts = this.sql("DELETE FROM artifact_runs WHERE run_id = ? RETURNING sha256").pluck().all(id) as string[];
    const orphan = this.sql("DELETE FROM artifacts WHERE sha256 = ? AND NOT EXISTS (SELECT 1 FROM artifact_runs WHERE sha256 = ?)");
    for (const sha256 of artifacts) orphan.run(sha256, sha256);
    this.sql("DELETE FROM runs WHERE id = ?").run(id);
    // Event numbers only grow, even when the newest events were this run's.
    this.sql("INSERT INTO meta (key, value) VALUES ('event_seq', ?) ON CONFLICT (key) DO UPDATE SET value = max(value, excluded.value)").run(lastSeq);
  }

  // artifacts

  putArtifact(runId: string, ref: ArtifactRef, data: Uint8Array): void {
    this.sql("INSERT OR IGNORE INTO artifacts (sha256, media_type, size, data) VALUES (?, ?, ?, ?)").run(ref.sha256, ref.mediaType, ref.size, data);
    this.sql("INSERT OR IGNORE INTO artifact_runs (run_id, sha256) VALUES (?, ?)").run(runId, ref.sha256);
  }

  getArtifact(sha256: string): { data: Uint8Array; mediaType: string } | undefined {
    const row = this.sql("SELECT data, media_type FROM artifacts WHERE sha256 = ?").get(sha256) as { data: Buffer; media_type: string } | undefined;
    return row && { data: new Uint8Array(row.data), mediaType: row.media_type };
  }

  /** Bytes of a run's rows as stored (row contents, not the pages around them). */
  runStorage(runId: string): RunStorage {
    const checkpoints = this.sql(
      `SELECT coalesce(sum(octet_length(meta) + octet_length(delta) + coalesce(octet_length(snapshot), 0) + 16), 0) FROM checkpoints WHERE run_key = ${RUN_KEY}`,
    ).pluck().get({ run_id: runId }) as number;
    const events = this.sql(`SELECT coalesce(sum(octet_length(events) + 24), 0) FROM events WHERE run_key = ${RUN_KEY}`).pluck().get({ run_id: runId }) as number;
    const artifacts = this.sql(
      "SELECT coalesce(sum(a.size), 0) FROM artifact_runs r JOIN artifacts a ON a.sha256 = r.sha256 WHERE r.run_id = ?",
    ).pluck().get(runId) as number;
    return { checkpoints, events, artifacts, total: checkpoints + events + artifacts };
  }
}

/** What a commit writes beside its events. */
export interface CommitRecords {
  checkpoint?: CheckpointRecord | undefined;
  tasks?: readonly TaskRecord[] | undefined;
}

/** What deciding a claim reads of a run. */
export type ClaimCandidate = Pick<RunRecord, "id" | "status" | "version" | "updatedAt" | "wakeAt" | "leaseUntil" | "waitingOn">;

interface CandidateRow {
  id: string;
  status: RunStatus;
  version: string;
  updated_at: number;
  wake_at: number | null;
  lease_until: number | null;
  waiting_on: string | null;
}

function claimCandidate(row: CandidateRow): ClaimCandidate {
  return { id: row.id, status: row.status, version: row.version, updatedAt: row.updated_at, wakeAt: row.wake_at, leaseUntil: row.lease_until, waitingOn: row.waiting_on };
}

function claimParams(now: number, versions: readonly string[] | undefined, runId: string | undefined, limit: number) {
  return { now, versions: versions ? JSON.stringify(versions) : null, runId: runId ?? null, limit };
}

function whereClause(where: string[]): string {
  return where.length > 0 ? `WHERE ${where.join(" AND ")}` : "";
}

function equalities(fields: Record<string, string | undefined>): { where: string[]; params: Param[] } {
  const where: string[] = [];
  const params: Param[] = [];
  for (const [column, value] of Object.entries(fields)) {
    if (value === undefined) continue;
    where.push(`${column} = ?`);
    params.push(value);
  }
  return { where, params };
}
