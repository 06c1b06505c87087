import { checkpointId } from "../../ids.js";
import type { ChainRow } from "../../state/read.js";
import type { CheckpointRecord, CheckpointSummary, RunRecord } from "../records.js";
import { packJson } from "./packed-json.js";
import type { Statements } from "./statements.js";

/** How records are laid out in rows, and back. */

/** A run is its JSON document, with the fields its queries filter and sort on beside it. */
export function runRow(run: RunRecord) {
  return { id: run.id, doc: JSON.stringify(run), workflow: run.workflow, ...runColumns(run) };
}

/**
 * The fields of a run that a step's commit moves (its head checkpoint, last commit, event count,
 * update time, the nodes in progress and their fan-in arrivals). A commit that changes nothing
 * else writes only these, as the row's `progress` document (schema version 12), over what its
 * `doc` says: a running run's whole document is written by its claim and by what changes its
 * course (a pause, a failure, its end), not at every step.
 */
const PROGRESS = ["head", "headN", "step", "lastCommit", "eventCount", "updatedAt", "current", "barriers"] as const satisfies readonly (keyof RunRecord)[];
const PROGRESS_FIELDS: ReadonlySet<string> = new Set(PROGRESS);

export function isProgress(field: string): boolean {
  return PROGRESS_FIELDS.has(field);
}

export function runProgress(run: RunRecord): string {
  const progress: Partial<RunRecord> = {};
  for (const field of PROGRESS) (progress as Record<string, unknown>)[field] = run[field];
  return JSON.stringify(progress);
}

/** The columns a run is read from (`runRecord`); NULL progress in a store from before schema version 12. */
export function runDocColumns(s: Statements): string {
  return s.hasColumn("runs", "progress") ? "doc, progress" : "doc, NULL AS progress";
}

export interface RunDocRow {
  doc: string;
  progress: string | null;
}

export function runRecord(row: RunDocRow): RunRecord {
  const run = JSON.parse(row.doc) as RunRecord;
  return row.progress === null ? run : Object.assign(run, JSON.parse(row.progress) as Partial<RunRecord>);
}

/** The columns beside a run's document that a write may change (its id and workflow never do). */
export function runColumns(run: RunRecord) {
  return {
    status: run.status,
    version: run.version,
    parent_run_id: run.parentRunId,
    updated_at: run.updatedAt,
    wake_at: run.wakeAt,
    lease_until: run.leaseUntil,
    waiting_on: run.waitingOn,
    deadline_at: run.deadlineAt ?? null,
  };
}

export type RunColumns = ReturnType<typeof runColumns>;

export interface CheckpointRow {
  run_id: string;
  n: number;
  snapshot_n: number;
  bytes: number;
  meta: string | Buffer;
  delta: string;
  snapshot: string | null;
}

type CheckpointMeta = Pick<CheckpointRecord, "step" | "parentId" | "source" | "actor" | "nodes" | "next" | "control" | "createdAt">;

/**
 * A checkpoint's metadata, without what almost every checkpoint has: its parent is the one before
 * it, its step is its number, its source is a step of the loop, no fan-in is waiting.
 */
export type StoredCheckpointMeta = Omit<CheckpointMeta, "step" | "parentId" | "source" | "control"> &
  Partial<Pick<CheckpointMeta, "step" | "parentId" | "source">> & { control: Omit<CheckpointMeta["control"], "barriers"> & Partial<Pick<CheckpointMeta["control"], "barriers">> };

export function checkpointMeta(c: CheckpointRecord): StoredCheckpointMeta {
  // Assigned field by field: a step's commit builds one, and conditional spreads cost several times more.
  const meta = {} as StoredCheckpointMeta;
  if (c.step !== c.n) meta.step = c.step;
  if (c.parentId !== checkpointId(c.runId, c.n - 1)) meta.parentId = c.parentId;
  if (c.source !== "loop") meta.source = c.source;
  meta.actor = c.actor;
  meta.nodes = c.nodes;
  meta.next = c.next;
  meta.control = Object.keys(c.control.barriers).length > 0 ? c.control : withoutBarriers(c.control);
  meta.createdAt = c.createdAt;
  return meta;
}

function withoutBarriers({ barriers: _barriers, ...control }: CheckpointMeta["control"]): StoredCheckpointMeta["control"] {
  return control;
}

/** `meta` is the metadata packed on its own, or a reference to it packed with the commit's events. */
export function checkpointRow(c: CheckpointRecord, meta: string | Buffer = packJson(checkpointMeta(c))): CheckpointRow {
  return {
    run_id: c.runId,
    n: c.n,
    snapshot_n: c.snapshotN,
    bytes: c.bytes,
    meta,
    delta: JSON.stringify(c.delta),
    snapshot: c.snapshot === undefined ? null : JSON.stringify(c.snapshot),
  };
}

/** `stored` is the row's metadata document, unpacked (wherever it was kept). */
export function checkpointRecord(row: CheckpointRow, stored: StoredCheckpointMeta): CheckpointRecord {
  return { ...checkpointHistory(row, stored), ...chainRow(row), bytes: row.bytes };
}

/** A summary's row: the checkpoint's columns but its state, and whether it has a snapshot. */
export type CheckpointSummaryRow = Pick<CheckpointRow, "run_id" | "n" | "snapshot_n" | "bytes" | "meta"> & { has_snapshot: 0 | 1 };

export function checkpointSummary(row: CheckpointSummaryRow, stored: StoredCheckpointMeta): CheckpointSummary {
  return { ...checkpointHistory(row, stored), snapshotN: row.snapshot_n, hasSnapshot: row.has_snapshot === 1, bytes: row.bytes };
}

/** What a checkpoint records of its run's history: the metadata, with what it left out restored. */
function checkpointHistory(row: Pick<CheckpointRow, "run_id" | "n">, stored: StoredCheckpointMeta) {
  const { step, parentId, source, control, ...meta } = stored;
  return {
    id: checkpointId(row.run_id, row.n),
    runId: row.run_id,
    n: row.n,
    step: step ?? row.n,
    parentId: parentId !== undefined ? parentId : checkpointId(row.run_id, row.n - 1),
    source: source ?? "loop",
    ...meta,
    control: { ...control, barriers: control.barriers ?? {} },
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
