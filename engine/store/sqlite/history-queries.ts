import type Database from "better-sqlite3";
import { parseCheckpointId, parseTaskId } from "../../ids.js";
import type { ChainRow } from "../../state/read.js";
import { numberedEvent, type CheckpointRecord, type CheckpointSummary, type EventRecord, type NewEvent, type RunStorage, type TaskRecord } from "../records.js";
import type { EventQuery, TaskRange } from "../store.js";
import { batchDocs, eventBatch, eventRecords, type EventBatchRow } from "./event-rows.js";
import type { GroupDocs } from "./group-docs.js";
import { docReference, readDocReference, unpackJson } from "./packed-json.js";
import {
  chainRow,
  checkpointMeta,
  checkpointRecord,
  checkpointRow,
  checkpointSummary,
  type CheckpointRow,
  type CheckpointSummaryRow,
  type StoredCheckpointMeta,
} from "./rows.js";
import { RUN_KEY, whereClause, type Param, type Statements } from "./statements.js";
import { TurnCache } from "./turn-cache.js";
import { stays, taskDoc, taskRecord, taskRow, type TaskRow } from "./task-rows.js";

/** The last number given to an event, also when its run was deleted since (kept in `meta`). */
const LAST_EVENT_SEQ = "max(coalesce((SELECT max(seq) FROM events), 0), coalesce((SELECT value FROM meta WHERE key = 'event_seq'), 0))";

/** Events rows whose document is kept in a blob (a `groupReference`, schema version 7). */
const IN_GROUP = "typeof(events) = 'blob' AND substr(events, 1, 1) = x'fe'";

const TASKS_PER_STATEMENT = 64;

/** What a commit writes beside its events. */
export interface CommitRecords {
  checkpoint?: CheckpointRecord | undefined;
  tasks?: readonly TaskRecord[] | undefined;
}

/**
 * A run's history, the rows its commits add: checkpoints, tasks and events. A commit writes its
 * own at once (`insertCommit`), its documents kept together with its events, and those of its
 * group transaction deflated together (group-docs.ts).
 */
export class HistoryQueries {
  /** Events rows' documents read in this turn of the event loop (`eventsRowText`). */
  private readonly inflated = new TurnCache<number, string>();
  /** The last event number given in the write transaction under way, once read (`insertCommit`). */
  private lastSeq: number | undefined;
  private readonly taskUpserts: Database.Statement[] = [];

  constructor(
    private readonly s: Statements,
    private readonly docs: GroupDocs,
  ) {}

  // checkpoints

  private insertCheckpoint(runKey: number, row: CheckpointRow): void {
    this.s.sql("INSERT INTO checkpoints (run_key, n, snapshot_n, bytes, meta, delta, snapshot) VALUES (?, ?, ?, ?, ?, ?, ?)").run(
      runKey,
      row.n,
      row.snapshot_n,
      row.bytes,
      row.meta,
      row.delta,
      row.snapshot,
    );
  }

  getCheckpoint(id: string): CheckpointRecord | undefined {
    const key = parseCheckpointId(id);
    if (!key) return undefined;
    const row = this.s.sql(`SELECT :run_id AS run_id, * FROM checkpoints WHERE run_key = ${RUN_KEY} AND n = :n`).get({ run_id: key.runId, n: key.n }) as
      | CheckpointRow
      | undefined;
    return row && checkpointRecord(row, this.unpackDoc<StoredCheckpointMeta>(row.meta, new Map()));
  }

  listCheckpoints(runId: string, afterN: number, limit: number): CheckpointRecord[] {
    const rows = this.s.sql(`SELECT :run_id AS run_id, * FROM checkpoints WHERE run_key = ${RUN_KEY} AND n > :after ORDER BY n LIMIT :limit`).all({
      run_id: runId,
      after: afterN,
      limit,
    }) as CheckpointRow[];
    const batches = new Map<number, unknown[]>();
    return rows.map((row) => checkpointRecord(row, this.unpackDoc<StoredCheckpointMeta>(row.meta, batches)));
  }

  listCheckpointSummaries(runId: string, afterN: number, limit: number): CheckpointSummary[] {
    const rows = this.s.sql(
      `SELECT :run_id AS run_id, n, snapshot_n, bytes, meta, snapshot IS NOT NULL AS has_snapshot FROM checkpoints
       WHERE run_key = ${RUN_KEY} AND n > :after ORDER BY n LIMIT :limit`,
    ).all({ run_id: runId, after: afterN, limit }) as CheckpointSummaryRow[];
    const batches = new Map<number, unknown[]>();
    return rows.map((row) => checkpointSummary(row, this.unpackDoc<StoredCheckpointMeta>(row.meta, batches)));
  }

  checkpointRows(runId: string, ns: readonly number[]): ChainRow[] {
    const rows = this.s.sql(
      `SELECT n, snapshot_n, delta, snapshot FROM checkpoints WHERE run_key = ${RUN_KEY} AND n IN (SELECT value FROM json_each(:ns))`,
    ).all({ run_id: runId, ns: JSON.stringify(ns) }) as CheckpointRow[];
    return rows.map(chainRow);
  }

  checkpointRowRange(runId: string, fromN: number, toN: number): ChainRow[] {
    const rows = this.s.sql(`SELECT n, snapshot_n, delta, snapshot FROM checkpoints WHERE run_key = ${RUN_KEY} AND n > :from AND n <= :to ORDER BY n`).all({
      run_id: runId,
      from: fromN,
      to: toN,
    }) as CheckpointRow[];
    return rows.map(chainRow);
  }

  // tasks

  /**
   * Writes a commit's task rows in one statement (a step's commit has two: the task it settles
   * and the one it starts), each new or replacing the document of the one with its key.
   */
  private putTasks(runKey: number, rows: readonly TaskRow[]): void {
    // At most TASKS_PER_STATEMENT rows a statement: a fan-out of thousands stays under SQLite's
    // limit on parameters, and the statements prepared are few.
    for (let i = 0; i < rows.length; i += TASKS_PER_STATEMENT) {
      const end = Math.min(rows.length, i + TASKS_PER_STATEMENT);
      const params: (string | number | Buffer)[] = [];
      for (let j = i; j < end; j++) {
        const row = rows[j]!;
        params.push(runKey, row.step, row.id, row.created_at, row.doc);
      }
      this.taskUpsert(end - i).run(params);
    }
  }

  /** The upsert of `count` task rows, by count: a step's commit writes the same few every time. */
  private taskUpsert(count: number): Database.Statement {
    return (this.taskUpserts[count] ??= this.s.sql(
      `INSERT INTO tasks (run_key, step, id, created_at, doc) VALUES ${Array(count).fill("(?, ?, ?, ?, ?)").join(", ")}
         ON CONFLICT (run_key, step, id) DO UPDATE SET doc = excluded.doc`,
    ));
  }

  getTask(id: string): TaskRecord | undefined {
    const key = parseTaskId(id);
    if (!key) return undefined;
    const row = this.s.sql(`SELECT :run_id AS run_id, * FROM tasks WHERE run_key = ${RUN_KEY} AND step = :step AND id = :id`).get({
      run_id: key.runId,
      step: key.step,
      id,
    }) as TaskRow | undefined;
    return row && taskRecord(row, this.unpackDoc<Partial<TaskRecord>>(row.doc, new Map()));
  }

  listTasks(runId: string, { step, afterStep }: TaskRange): TaskRecord[] {
    const rows =
      step !== undefined
        ? this.s.sql(`SELECT :run_id AS run_id, * FROM tasks WHERE run_key = ${RUN_KEY} AND step = :step ORDER BY created_at, id`).all({ run_id: runId, step })
        : this.s.sql(`SELECT :run_id AS run_id, * FROM tasks WHERE run_key = ${RUN_KEY} AND step > :after ORDER BY step, created_at, id`).all({ run_id: runId, after: afterStep ?? -1 });
    const batches = new Map<number, unknown[]>();
    return (rows as TaskRow[]).map((row) => taskRecord(row, this.unpackDoc<Partial<TaskRecord>>(row.doc, batches)));
  }

  // events

  /**
   * Appends a commit's events as one row, numbered after the last event of the store and after
   * `runSeq - 1` within their run, and writes the commit's checkpoint and tasks; `runKey` is the
   * run's row key, which they name it by. The documents of the checkpoint and of the tasks that
   * stay are kept with the events, and their rows refer to them there; that document is deflated
   * with those of the other commits of the group transaction, in one call at its end
   * (group-docs.ts). The last event number is read once per write transaction, under its lock,
   * and counted on from there (no other connection writes meanwhile).
   * The records returned are the events as given, numbered (their payloads are not copied).
   */
  insertCommit(runKey: number, runId: string, runSeq: number, events: readonly NewEvent[], { checkpoint, tasks = [] }: CommitRecords = {}): EventRecord[] {
    // Every record belongs to the run (checkCommit): deleting the run deletes its events row.
    if (events.length === 0) {
      if (checkpoint) this.insertCheckpoint(runKey, checkpointRow(checkpoint));
      this.putTasks(runKey, tasks.map((task) => taskRow(task)));
      return [];
    }
    const docs: unknown[] = [];
    const metaIndex = checkpoint ? docs.push(checkpointMeta(checkpoint)) - 1 : -1;
    const taskIndexes = tasks.map((task) => (stays(task) ? docs.push(taskDoc(task)) - 1 : -1));
    const seq = (this.lastSeq ??= this.lastEventSeq()) + events.length;
    this.s.sql("INSERT INTO events (seq, run_key, run_seq, count, events) VALUES (?, ?, ?, ?, ?)").run(seq, runKey, runSeq, events.length, this.docs.add(eventBatch(runId, events, docs), seq));
    this.lastSeq = seq;
    if (checkpoint) this.insertCheckpoint(runKey, checkpointRow(checkpoint, docReference({ seq, index: metaIndex })));
    this.putTasks(
      runKey,
      tasks.map((task, i) => {
        const index = taskIndexes[i]!;
        return index >= 0 ? taskRow(task, docReference({ seq, index })) : taskRow(task);
      }),
    );
    const first = seq - events.length + 1;
    return events.map((event, i) => numberedEvent(event, first + i, runSeq + i));
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
      const text = this.eventsRowText(reference.seq);
      docs = text === undefined ? [] : batchDocs(text);
      batches.set(reference.seq, docs);
    }
    // A damaged reference reads as damaged JSON does: the store reports the file corrupt.
    if (reference.index >= docs.length) throw new SyntaxError(`a record refers to document ${reference.index} of event row ${reference.seq}, which has ${docs.length}`);
    return docs[reference.index] as T;
  }

  /**
   * An events row's document as JSON text, kept until the end of this turn of the event loop: a
   * run's checkpoints and its tasks, read together (the console's run view), refer to the same
   * rows, and inflating is most of what reading them costs.
   */
  private eventsRowText(seq: number): string | undefined {
    return this.inflated.get(seq, () => {
      const row = this.s.sql("SELECT events FROM events WHERE seq = ?").pluck().get(seq) as string | Buffer | undefined;
      return row === undefined ? undefined : this.docs.text(row);
    });
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
    const rows = this.s.sql(
      `SELECT e.seq, r.id AS run_id, e.run_seq, e.count, e.events FROM events e JOIN runs r ON r.key = e.run_key ${whereClause(where)} ORDER BY e.seq ${newestFirst ? "DESC" : ""}`,
    ).iterate(params) as IterableIterator<EventBatchRow>;
    const found: EventRecord[][] = [];
    let count = 0;
    const enough = newestFirst ? query.last! : (query.limit ?? Infinity);
    for (const row of rows) {
      const events = eventRecords(row, this.docs.text(row.events)).filter(wanted);
      found.push(events);
      count += events.length;
      // Leaving the loop ends the statement (for...of returns the iterator).
      if (count >= enough) break;
    }
    if (!newestFirst) return found.flat().slice(0, query.limit);
    return found.reverse().flat().slice(-query.last!).slice(0, query.limit);
  }

  /** Each write transaction, when it begins or is rolled back, reads the last event number afresh. */
  newTransaction(): void {
    this.lastSeq = undefined;
  }

  /** The last number given to an event, also when its run was deleted since (kept in `meta`). */
  lastEventSeq(): number {
    return this.s.sql(`SELECT ${LAST_EVENT_SEQ}`).pluck().get() as number;
  }

  /**
   * Deletes a run's history. Event numbers only grow, even when the newest events were the run's:
   * the last one given is kept in `meta`.
   */
  deleteHistory(runId: string): void {
    const lastSeq = this.lastEventSeq();
    this.docs.release(this.s.sql(`SELECT events FROM events WHERE run_key = ${RUN_KEY} AND ${IN_GROUP}`).pluck().all({ run_id: runId }) as Buffer[]);
    for (const table of ["checkpoints", "tasks", "events"]) this.s.sql(`DELETE FROM ${table} WHERE run_key = ${RUN_KEY}`).run({ run_id: runId });
    this.s.sql("INSERT INTO meta (key, value) VALUES ('event_seq', ?) ON CONFLICT (key) DO UPDATE SET value = max(value, excluded.value)").run(lastSeq);
  }

  /**
   * Bytes of a run's checkpoint and event rows as stored (row contents, not the pages around them),
   * with its documents' share of the blobs they are kept in.
   */
  storage(runId: string): Pick<RunStorage, "checkpoints" | "events"> {
    const checkpoints = this.s.sql(
      `SELECT coalesce(sum(octet_length(meta) + octet_length(delta) + coalesce(octet_length(snapshot), 0) + 16), 0) FROM checkpoints WHERE run_key = ${RUN_KEY}`,
    ).pluck().get({ run_id: runId }) as number;
    const rows = this.s.sql(`SELECT coalesce(sum(octet_length(events) + 24), 0) FROM events WHERE run_key = ${RUN_KEY}`).pluck().get({ run_id: runId }) as number;
    const shares = this.docs.share(this.s.sql(`SELECT events FROM events WHERE run_key = ${RUN_KEY} AND ${IN_GROUP}`).pluck().all({ run_id: runId }) as Buffer[]);
    return { checkpoints, events: rows + shares };
  }
}
