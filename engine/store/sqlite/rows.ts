import { checkpointId, traceIdOf } from "../../ids.js";
import type { ChainRow } from "../../state/read.js";
import type { CheckpointRecord, EventRecord, NewEvent } from "../records.js";

/** How records are laid out in rows, and back. */

export interface EventRow {
  seq: number;
  run_id: string;
  run_seq: number;
  task_id: string | null;
  trace_id: string | null;
  span_id: string | null;
  type: string;
  actor: string;
  time: number;
  payload: string;
}

export function eventRow(event: NewEvent, runSeq: number): Omit<EventRow, "seq"> {
  return {
    run_id: event.runId,
    run_seq: runSeq,
    task_id: event.taskId,
    trace_id: event.traceId === traceIdOf(event.runId) ? null : event.traceId,
    span_id: event.spanId,
    type: event.type,
    actor: event.actor,
    time: event.time,
    payload: JSON.stringify(event.payload),
  };
}

export function eventRecord(row: EventRow): EventRecord {
  return {
    seq: row.seq,
    runId: row.run_id,
    runSeq: row.run_seq,
    taskId: row.task_id,
    traceId: row.trace_id ?? traceIdOf(row.run_id),
    spanId: row.span_id,
    type: row.type as EventRecord["type"],
    actor: row.actor,
    payload: JSON.parse(row.payload) as EventRecord["payload"],
    time: row.time,
  };
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

export function checkpointRow(c: CheckpointRecord): CheckpointRow {
  const meta: CheckpointMeta = {
    step: c.step,
    parentId: c.parentId,
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
  const meta = JSON.parse(row.meta) as CheckpointMeta;
  return {
    id: checkpointId(row.run_id, row.n),
    runId: row.run_id,
    ...meta,
    ...chainRow(row),
    bytes: row.bytes,
  };
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
