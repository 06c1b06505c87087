import { checkpointId, traceIdOf } from "../../ids.js";
import type { ChainRow } from "../../state/read.js";
import type { CheckpointRecord, EventRecord, NewEvent, RunRecord, TaskRecord } from "../records.js";

/** How records are laid out in rows, and back. */

/** A run is its JSON document, with the fields its queries filter and sort on beside it. */
export function runRow(run: RunRecord) {
  return {
    id: run.id,
    doc: JSON.stringify(run),
    status: run.status,
    workflow: run.workflow,
    version: run.version,
    parent_run_id: run.parentRunId,
    updated_at: run.updatedAt,
    wake_at: run.wakeAt,
    lease_until: run.leaseUntil,
    waiting_on: run.waitingOn,
  };
}

/** A commit's events, stored as one row: `seq` is the last one's store-wide number, `run_seq` the first one's number within the run. */
export interface EventBatchRow {
  seq: number;
  run_id: string;
  run_seq: number;
  count: number;
  events: string;
}

/** An event in its batch; a null trace id means the run's own (which almost every event has). */
type StoredEvent = [type: EventRecord["type"], taskId: string | null, traceId: string | null, spanId: string | null, actor: string, time: number, payload: unknown];

export function eventBatchRow(runId: string, firstRunSeq: number, lastSeq: number, events: readonly NewEvent[]): EventBatchRow {
  const runTrace = traceIdOf(runId);
  const stored = events.map((e): StoredEvent => [e.type, e.taskId, e.traceId === runTrace ? null : e.traceId, e.spanId, e.actor, e.time, e.payload]);
  return { seq: lastSeq, run_id: runId, run_seq: firstRunSeq, count: events.length, events: JSON.stringify(stored) };
}

export function eventRecords(row: EventBatchRow): EventRecord[] {
  const first = row.seq - row.count + 1;
  return (JSON.parse(row.events) as StoredEvent[]).map(([type, taskId, traceId, spanId, actor, time, payload], i) => ({
    seq: first + i,
    runId: row.run_id,
    runSeq: row.run_seq + i,
    taskId,
    traceId: traceId ?? traceIdOf(row.run_id),
    spanId,
    type,
    actor,
    payload: payload as EventRecord["payload"],
    time,
  }));
}

export interface CheckpointRow {
  run_id: string;
  n: number;
  snapshot_n: number;
  bytes: number;
  meta: string;
  delta: string;
  snapshot: string | null;
}

type CheckpointMeta = Pick<CheckpointRecord, "step" | "parentId" | "source" | "actor" | "nodes" | "next" | "control" | "createdAt">;

/** A checkpoint's metadata, without what almost every checkpoint has: its parent is the one before it, its step is its number. */
type StoredCheckpointMeta = Omit<CheckpointMeta, "step" | "parentId"> & Partial<Pick<CheckpointMeta, "step" | "parentId">>;

export function checkpointRow(c: CheckpointRecord): CheckpointRow {
  const meta: StoredCheckpointMeta = {
    ...(c.step !== c.n ? { step: c.step } : {}),
    ...(c.parentId !== checkpointId(c.runId, c.n - 1) ? { parentId: c.parentId } : {}),
    source: c.source,
    actor: c.actor,
    nodes: c.nodes,
    next: c.next,
    control: c.control,
    createdAt: c.createdAt,
  };
  return {
    run_id: c.runId,
    n: c.n,
    snapshot_n: c.snapshotN,
    bytes: c.bytes,
    meta: JSON.stringify(meta),
    delta: JSON.stringify(c.delta),
    snapshot: c.snapshot === undefined ? null : JSON.stringify(c.snapshot),
  };
}

export function checkpointRecord(row: CheckpointRow): CheckpointRecord {
  const { step, parentId, ...meta } = JSON.parse(row.meta) as StoredCheckpointMeta;
  return {
    id: checkpointId(row.run_id, row.n),
    runId: row.run_id,
    step: step ?? row.n,
    parentId: parentId !== undefined ? parentId : checkpointId(row.run_id, row.n - 1),
    ...meta,
    ...chainRow(row),
    bytes: row.bytes,
  };
}

export interface TaskRow {
  run_id: string;
  step: number;
  id: string;
  created_at: number;
  doc: string;
}

/** What a task has until something happens to it; its stored document leaves these out. */
const TASK_DEFAULTS = {
  index: null,
  writes: null,
  route: null,
  error: null,
  worker: null,
  startedAt: null,
  endedAt: null,
  notBefore: null,
  retriesFrom: 0,
  parent: null,
  call: null,
  waitingFor: null,
} as const satisfies Partial<TaskRecord>;

/** The key columns hold a task's id, run, step and creation time; the document holds the rest that is not a default. */
export function taskRow(task: TaskRecord): TaskRow {
  const doc: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(task)) {
    if (value === undefined || key === "id" || key === "runId" || key === "step" || key === "createdAt") continue;
    if (key === "idempotencyKey" && value === task.id) continue;
    if (key in TASK_DEFAULTS && value === TASK_DEFAULTS[key as keyof typeof TASK_DEFAULTS]) continue;
    doc[key] = value;
  }
  return { run_id: task.runId, step: task.step, id: task.id, created_at: task.createdAt, doc: JSON.stringify(doc) };
}

export function taskRecord(row: TaskRow): TaskRecord {
  const doc = JSON.parse(row.doc) as Partial<TaskRecord>;
  return { id: row.id, runId: row.run_id, step: row.step, createdAt: row.created_at, idempotencyKey: row.id, ...TASK_DEFAULTS, ...doc } as TaskRecord;
}

export function chainRow(row: Pick<CheckpointRow, "n" | "snapshot_n" | "delta" | "snapshot">): ChainRow {
  return {
    n: row.n,
    snapshotN: row.snapshot_n,
    delta: JSON.parse(row.delta) as ChainRow["delta"],
    ...(row.snapshot !== null ? { snapshot: JSON.parse(row.snapshot) as NonNullable<ChainRow["snapshot"]> } : {}),
  };
}

/** Records kept whole as one JSON document per row. */
export function parseDoc<T>(row: { doc: string } | undefined): T | undefined {
  return row ? (JSON.parse(row.doc) as T) : undefined;
}

export function parseDocs<T>(rows: readonly { doc: string }[]): T[] {
  return rows.map((r) => JSON.parse(r.doc) as T);
}
