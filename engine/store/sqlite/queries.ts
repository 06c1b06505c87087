import type Database from "better-sqlite3";
import {
  TERMINAL_RUN_STATUSES,
  type ArtifactRef,
  type CommandRecord,
  type InterruptRecord,
  type RunRecord,
  type RunStatus,
  type WorkerRecord,
  type WorkflowRecord,
} from "../records.js";
import { parseDoc, parseDocs, runColumns, runDocColumns, runProgress, runRecord, runRow, type RunColumns, type RunDocRow } from "./rows.js";
import { whereClause, type Param, type Statements } from "./statements.js";
import type { WrittenRuns } from "./written-runs.js";

/**
 * The runs a worker may claim (the SQL form of `claimable` in rules.ts), oldest update first: the
 * queued ones and the running ones whose lease expired, each read along the status index.
 */
const FILTER = `(:versions IS NULL OR version IN (SELECT value FROM json_each(:versions))) AND (:runId IS NULL OR id = :runId)`;
const CANDIDATE_COLUMNS = "id, status, workflow, version, updated_at, wake_at, lease_until, waiting_on";
const QUEUED = `SELECT ${CANDIDATE_COLUMNS} FROM runs r
   WHERE status = 'queued' AND (wake_at IS NULL OR wake_at <= :now)
     AND (waiting_on IS NULL OR NOT EXISTS (
       SELECT 1 FROM runs c WHERE c.id = r.waiting_on AND c.status NOT IN ('succeeded', 'failed', 'canceled')))
     AND ${FILTER}`;
/** Along the index of queued runs by workflow (schema version 5), one workflow's oldest first. */
const QUEUED_OF_WORKFLOW = `${QUEUED} AND workflow = :workflow ORDER BY updated_at, id LIMIT :limit`;
const RUN_COLUMNS = Object.keys(runColumns({} as RunRecord)) as (keyof RunColumns)[];
const EXPIRED = `SELECT ${CANDIDATE_COLUMNS} FROM runs WHERE status = 'running' AND lease_until < :now AND ${FILTER} ORDER BY updated_at, id LIMIT :limit`;

/**
 * The store's SQL statements for its records — workflows, runs and claims, interrupts, commands,
 * artifacts — synchronous, one method per question. A run's history (checkpoints, tasks,
 * events) is history-queries.ts.
 */
export class Queries {
  constructor(
    private readonly s: Statements,
    /** The run rows this connection wrote, which a commit reads without asking SQLite. */
    private readonly written: WrittenRuns,
  ) {}

  /** Run updates by the columns they set (`runUpdate`). */
  private readonly runUpdates = new Map<number, Database.Statement>();

  /** Records kept whole as one JSON document per row, with the columns their queries need beside it. */
  private getDoc<T>(table: "interrupts" | "commands", id: string): T | undefined {
    return parseDoc<T>(this.s.sql(`SELECT doc FROM ${table} WHERE id = ?`).get(id) as { doc: string } | undefined);
  }

  nextFence(): number {
    return (this.s.sql("UPDATE meta SET value = value + 1 WHERE key = 'fence' RETURNING value").get() as { value: number }).value;
  }

  /** The database's change counter for commits of other connections (PRAGMA data_version). */
  dataVersion(): number {
    return this.s.sql("PRAGMA data_version").pluck().get() as number;
  }

  // workflows

  putWorkflow(w: WorkflowRecord): void {
    this.s.sql("INSERT OR IGNORE INTO workflows (version, name, created_at, definition) VALUES (?, ?, ?, ?)").run(
      w.version,
      w.name,
      w.createdAt,
      JSON.stringify(w.definition),
    );
  }

  getWorkflow(version: string): WorkflowRecord | undefined {
    const row = this.s.sql("SELECT version, name, created_at, definition FROM workflows WHERE version = ?").get(version) as
      | { version: string; name: string; created_at: number; definition: string }
      | undefined;
    return row && { version: row.version, name: row.name, createdAt: row.created_at, definition: JSON.parse(row.definition) };
  }

  listWorkflows(): Omit<WorkflowRecord, "definition">[] {
    const rows = this.s.sql("SELECT version, name, created_at FROM workflows ORDER BY rowid").all() as { version: string; name: string; created_at: number }[];
    return rows.map((r) => ({ version: r.version, name: r.name, createdAt: r.created_at }));
  }

  // runs

  getRun(id: string): RunRecord | undefined {
    const row = this.s.sql(`SELECT ${runDocColumns(this.s)} FROM runs WHERE id = ?`).get(id) as RunDocRow | undefined;
    return row && runRecord(row);
  }

  /**
   * A run and its row's key, which its history rows name it by (schema version 3). Only in a
   * write transaction: the row may come from those this connection wrote (`WrittenRuns`).
   */
  getKeyedRun(id: string): { key: number; run: RunRecord } | undefined {
    const kept = this.written.get(id);
    if (kept) return kept;
    const row = this.s.sql(`SELECT key, ${runDocColumns(this.s)} FROM runs WHERE id = ?`).get(id) as (RunDocRow & { key: number }) | undefined;
    if (!row) return undefined;
    const run = runRecord(row);
    this.written.set(id, row.key, run, false);
    return { key: row.key, run };
  }

  runKey(id: string): number | undefined {
    return this.s.sql("SELECT key FROM runs WHERE id = ?").pluck().get(id) as number | undefined;
  }

  runStatus(id: string): RunStatus | undefined {
    return this.s.sql("SELECT status FROM runs WHERE id = ?").pluck().get(id) as RunStatus | undefined;
  }

  /** How many runs of a workflow (every version) are running, counted in runs_running_by_workflow. */
  runningOf(workflow: string): number {
    return this.s.sql("SELECT COUNT(*) FROM runs WHERE status = 'running' AND workflow = ?").pluck().get(workflow) as number;
  }

  /** Returns the new row's key. */
  insertRun(run: RunRecord): number {
    const row = runRow(run);
    const key = Number(
      this.s
        .sql(
          `INSERT INTO runs (id, doc, status, workflow, version, parent_run_id, updated_at, wake_at, lease_until, waiting_on, deadline_at)
           VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
        )
        .run(row.id, row.doc, row.status, row.workflow, row.version, row.parent_run_id, row.updated_at, row.wake_at, row.lease_until, row.waiting_on, row.deadline_at).lastInsertRowid,
    );
    this.written.set(run.id, key, run, ended(run));
    return key;
  }

  /**
   * Writes a run's document, and of the columns beside it those that differ from `was` (the
   * run's as read): SQLite rewrites the entry of every index on a column an update sets, even to
   * the value it had, and a step's commit changes only the update time of its run. `key` is the
   * run's row key when the caller has it (a commit reads it with the run): the row is then found
   * by its primary key, without a look-up in the index of ids. `progressOnly`: the run changed
   * only in its progress fields (rows.ts), which are written alone.
   */
  saveRun(run: RunRecord, key: number | undefined, was: RunColumns, progressOnly = false): void {
    const columns = runColumns(run);
    const values: Param[] = [progressOnly ? runProgress(run) : JSON.stringify(run)];
    let changed = 0;
    for (let i = 0; i < RUN_COLUMNS.length; i++) {
      const column = RUN_COLUMNS[i]!;
      if (columns[column] !== was[column]) {
        changed |= 1 << i;
        values.push(columns[column]);
      }
    }
    values.push(key ?? run.id);
    this.runUpdate(changed, key !== undefined, progressOnly).run(values);
    if (key === undefined) this.written.saved(run.id, run, ended(run));
    else this.written.set(run.id, key, run, ended(run));
  }

  /**
   * The UPDATE of a run's document (or of its progress alone) and of the columns in `changed` (a
   * bit per RUN_COLUMNS entry), found by key or by id.
   */
  private runUpdate(changed: number, byKey: boolean, progressOnly: boolean): Database.Statement {
    const id = changed * 4 + (byKey ? 2 : 0) + (progressOnly ? 1 : 0);
    let statement = this.runUpdates.get(id);
    if (!statement) {
      const set = RUN_COLUMNS.filter((_, i) => changed & (1 << i)).map((column) => `, ${column} = ?`).join("");
      statement = this.s.sql(`UPDATE runs SET ${progressOnly ? "progress = ?" : "doc = ?, progress = NULL"}${set} WHERE ${byKey ? "key" : "id"} = ?`);
      this.runUpdates.set(id, statement);
    }
    return statement;
  }

  countRuns(): { status: RunStatus; n: number }[] {
    return this.s.sql("SELECT status, count(*) AS n FROM runs GROUP BY status").all() as { status: RunStatus; n: number }[];
  }

  /**
   * The runs a claim would pick first, in its order of preference. This is an indexed
   * pre-selection written after `claimable` and `pickClaim` (the rules every store shares),
   * which the caller still applies to the rows returned. Only the columns those rules read are
   * read: the chosen run's document is read once it is chosen.
   */
  claimCandidates(now: number, versions: readonly string[] | undefined, runId: string | undefined, limit: number): ClaimCandidate[] {
    const params = claimParams(now, versions, runId, limit);
    return [`${QUEUED} ORDER BY updated_at, id LIMIT :limit`, EXPIRED].flatMap((text) => (this.s.sql(text).all(params) as CandidateRow[]).map(claimCandidate));
  }

  /** Running runs whose lease ran out, the oldest first: take-overs. */
  expiredLeases(now: number, versions: readonly string[] | undefined, limit: number): ClaimCandidate[] {
    return (this.s.sql(EXPIRED).all(claimParams(now, versions, undefined, limit)) as CandidateRow[]).map(claimCandidate);
  }

  /** One workflow's claimable queued runs, the oldest first. */
  queuedOf(workflow: string, now: number, versions: readonly string[] | undefined, limit: number): ClaimCandidate[] {
    return (this.s.sql(QUEUED_OF_WORKFLOW).all({ ...claimParams(now, versions, undefined, limit), workflow }) as CandidateRow[]).map(claimCandidate);
  }

  /**
   * The workflows with queued runs, in name order, narrowed to those of these versions when the
   * store knows each version's workflow. One index seek per workflow (a skip scan written out),
   * not a read of every queued run.
   */
  queuedWorkflows(versions: readonly string[] | undefined): string[] {
    const names = this.s
      .sql(
        `WITH RECURSIVE w(name) AS (
           SELECT (SELECT workflow FROM runs INDEXED BY runs_queued_by_workflow WHERE status = 'queued' ORDER BY workflow LIMIT 1)
           UNION ALL
           SELECT (SELECT workflow FROM runs INDEXED BY runs_queued_by_workflow WHERE status = 'queued' AND workflow > w.name ORDER BY workflow LIMIT 1)
           FROM w WHERE w.name IS NOT NULL
         ) SELECT name FROM w WHERE name IS NOT NULL`,
      )
      .pluck()
      .all() as string[];
    if (!versions) return names;
    const known = this.s.sql("SELECT version, name FROM workflows WHERE version IN (SELECT value FROM json_each(?))").all(JSON.stringify(versions)) as { version: string; name: string }[];
    if (known.length < new Set(versions).size) return names;
    const allowed = new Set(known.map((k) => k.name));
    return names.filter((name) => allowed.has(name));
  }

  // workers

  /** The record of this id, and the new one in its place; records not seen since `staleBefore` go. */
  putWorker(record: WorkerRecord, staleBefore: number): WorkerRecord | undefined {
    const replaced = parseDoc<WorkerRecord>(this.s.sql("SELECT doc FROM workers WHERE id = ?").get(record.id) as { doc: string } | undefined);
    this.s.sql("DELETE FROM workers WHERE last_seen < ?").run(staleBefore);
    this.s.sql("INSERT INTO workers (id, last_seen, doc) VALUES (?, ?, ?) ON CONFLICT (id) DO UPDATE SET last_seen = excluded.last_seen, doc = excluded.doc").run(
      record.id,
      record.lastSeen,
      JSON.stringify(record),
    );
    return replaced;
  }

  /** Every worker's record, the most recently seen first; none in a store older than the table (read-only). */
  listWorkers(): WorkerRecord[] {
    if (!this.s.sql("SELECT 1 FROM sqlite_schema WHERE type = 'table' AND name = 'workers'").get()) return [];
    return parseDocs<WorkerRecord>(this.s.sql("SELECT doc FROM workers ORDER BY last_seen DESC, id").all() as { doc: string }[]);
  }

  // interrupts

  putInterrupt(interrupt: InterruptRecord): void {
    this.s.sql(
      `INSERT INTO interrupts (id, run_id, status, created_at, doc, deadline_at) VALUES (?, ?, ?, ?, ?, ?)
       ON CONFLICT (id) DO UPDATE SET status = excluded.status, doc = excluded.doc, deadline_at = excluded.deadline_at`,
    ).run(interrupt.id, interrupt.runId, interrupt.status, interrupt.createdAt, JSON.stringify(interrupt), interrupt.deadline?.at ?? null);
  }

  getInterrupt(id: string): InterruptRecord | undefined {
    return this.getDoc<InterruptRecord>("interrupts", id);
  }

  pendingInterrupts(runId: string): number {
    return this.s.sql("SELECT count(*) FROM interrupts WHERE run_id = ? AND status = 'pending'").pluck().get(runId) as number;
  }

  listInterrupts(filter: { status?: "pending" | "resolved"; runId?: string; limit?: number }): InterruptRecord[] {
    const { where, params } = equalities({ run_id: filter.runId, [statusWithin(filter.runId)]: filter.status });
    const text = `SELECT doc FROM interrupts ${whereClause(where)} ORDER BY created_at, id LIMIT ?`;
    return parseDocs<InterruptRecord>(this.s.sql(text).all(...params, filter.limit ?? -1) as { doc: string }[]);
  }

  // commands

  insertCommand(command: CommandRecord): void {
    this.s.sql("INSERT INTO commands (id, run_id, status, created_at, doc) VALUES (?, ?, ?, ?, ?)").run(
      command.id,
      command.runId,
      command.status,
      command.createdAt,
      JSON.stringify(command),
    );
  }

  saveCommand(command: CommandRecord): void {
    this.s.sql("UPDATE commands SET status = ?, doc = ? WHERE id = ?").run(command.status, JSON.stringify(command), command.id);
  }

  getCommand(id: string): CommandRecord | undefined {
    return this.getDoc<CommandRecord>("commands", id);
  }

  listCommands(filter: { runId?: string; status?: CommandRecord["status"]; limit?: number }): CommandRecord[] {
    const { where, params } = equalities({ run_id: filter.runId, [statusWithin(filter.runId)]: filter.status });
    const text = `SELECT doc FROM commands ${whereClause(where)} ORDER BY created_at, rowid LIMIT ?`;
    return parseDocs<CommandRecord>(this.s.sql(text).all(...params, filter.limit ?? -1) as { doc: string }[]);
  }

  // deleting runs

  childRunIds(id: string): string[] {
    return this.s.sql("SELECT id FROM runs WHERE parent_run_id = ?").pluck().all(id) as string[];
  }

  /**
   * Deletes a run's record, interrupts and commands, and the artifacts that no other run holds
   * (its history first: `HistoryQueries.deleteHistory`, whose rows name the run by its key).
   */
  deleteRun(id: string): void {
    for (const table of ["interrupts", "commands"]) this.s.sql(`DELETE FROM ${table} WHERE run_id = ?`).run(id);
    const artifacts = this.s.sql("DELETE FROM artifact_runs WHERE run_id = ? RETURNING sha256").pluck().all(id) as string[];
    const orphan = this.s.sql("DELETE FROM artifacts WHERE sha256 = ? AND NOT EXISTS (SELECT 1 FROM artifact_runs WHERE sha256 = ?)");
    for (const sha256 of artifacts) orphan.run(sha256, sha256);
    this.s.sql("DELETE FROM runs WHERE id = ?").run(id);
    this.written.forget(id);
  }

  // artifacts

  putArtifact(runId: string, ref: ArtifactRef, data: Uint8Array): void {
    this.s.sql("INSERT OR IGNORE INTO artifacts (sha256, media_type, size, data) VALUES (?, ?, ?, ?)").run(ref.sha256, ref.mediaType, ref.size, data);
    this.s.sql("INSERT OR IGNORE INTO artifact_runs (run_id, sha256) VALUES (?, ?)").run(runId, ref.sha256);
  }

  getArtifact(sha256: string): { data: Uint8Array; mediaType: string } | undefined {
    const row = this.s.sql("SELECT data, media_type FROM artifacts WHERE sha256 = ?").get(sha256) as { data: Buffer; media_type: string } | undefined;
    return row && { data: new Uint8Array(row.data), mediaType: row.media_type };
  }

  /** Bytes of the artifacts a run holds. */
  artifactBytes(runId: string): number {
    return this.s.sql("SELECT coalesce(sum(a.size), 0) FROM artifact_runs r JOIN artifacts a ON a.sha256 = r.sha256 WHERE r.run_id = ?").pluck().get(runId) as number;
  }
}

/** What deciding a claim reads of a run. */
export type ClaimCandidate = Pick<RunRecord, "id" | "status" | "workflow" | "version" | "updatedAt" | "wakeAt" | "leaseUntil" | "waitingOn">;

interface CandidateRow {
  id: string;
  status: RunStatus;
  workflow: string;
  version: string;
  updated_at: number;
  wake_at: number | null;
  lease_until: number | null;
  waiting_on: string | null;
}

function ended(run: RunRecord): boolean {
  return TERMINAL_RUN_STATUSES.includes(run.status);
}

function claimCandidate(row: CandidateRow): ClaimCandidate {
  return { id: row.id, status: row.status, workflow: row.workflow, version: row.version, updatedAt: row.updated_at, wakeAt: row.wake_at, leaseUntil: row.lease_until, waitingOn: row.waiting_on };
}

function claimParams(now: number, versions: readonly string[] | undefined, runId: string | undefined, limit: number) {
  return { now, versions: versions ? JSON.stringify(versions) : null, runId: runId ?? null, limit };
}

/**
 * How a listing compares the status: within one run as `+status`, which keeps SQLite from the
 * status index. Without statistics it prefers that index to the run's (either is one equality),
 * and then walks every pending record of the store to find the run's few: ~100 µs with 2,000
 * pending elsewhere, against ~5 along the run's index.
 */
function statusWithin(runId: string | undefined): string {
  return runId === undefined ? "status" : "+status";
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
