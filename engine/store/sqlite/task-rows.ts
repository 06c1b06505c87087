import { taskId } from "../../ids.js";
import type { AttemptRecord, TaskRecord } from "../records.js";
import { packJson } from "./packed-json.js";

export interface TaskRow {
  run_id: string;
  step: number;
  id: string;
  created_at: number;
  doc: string | Buffer;
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

/** The key columns: they are not repeated in the document. */
const KEYS = new Set(["id", "runId", "step", "createdAt"]);

/**
 * An attempt leaves out what it shares with its task (the last attempt usually has the task's
 * worker, times and outcome) and its number when that is its position.
 */
type StoredAttempt = Partial<AttemptRecord>;

/**
 * The key columns hold a task's id, run, step and creation time; the document holds the rest that
 * is not a default and cannot be read from the id (the node, the idempotency key). Only a document
 * that stays is packed: a pending or running task's is replaced when the task moves on, and a
 * succeeded one holding its writes when its step's checkpoint takes them.
 */
export function taskDoc(task: TaskRecord): Record<string, unknown> {
  const doc: Record<string, unknown> = {};
  const record = task as unknown as Record<string, unknown>;
  // for...in, not Object.entries: a commit stores one or two tasks, and the entries' arrays were
  // most of what this cost.
  for (const key in record) {
    const value = record[key];
    if (value === undefined || KEYS.has(key)) continue;
    if (key === "idempotencyKey" && value === task.id) continue;
    if (key === "node" && task.id === taskId(task.runId, task.step, task.node, task.index)) continue;
    if (key in TASK_DEFAULTS && value === TASK_DEFAULTS[key as keyof typeof TASK_DEFAULTS]) continue;
    doc[key] = key === "attempts" ? task.attempts.map((a, i) => storedAttempt(task, a, i)) : value;
  }
  return doc;
}

/**
 * `doc` is the task's document as stored: by default packed on its own when it stays, or a
 * reference to it packed with the commit's events.
 */
export function taskRow(task: TaskRecord, doc: string | Buffer = stays(task) ? packJson(taskDoc(task)) : JSON.stringify(taskDoc(task))): TaskRow {
  return { run_id: task.runId, step: task.step, id: task.id, created_at: task.createdAt, doc };
}

/** `doc` is the row's document, unpacked (wherever it was kept). */
export function taskRecord(row: TaskRow, doc: Partial<TaskRecord>): TaskRecord {
  const task = { id: row.id, runId: row.run_id, step: row.step, createdAt: row.created_at, idempotencyKey: row.id, ...TASK_DEFAULTS, ...doc } as TaskRecord;
  if (task.node === undefined) task.node = nodeOf(task);
  // What an attempt left out is what it shares with its task.
  task.attempts = (doc.attempts ?? []).map((a: StoredAttempt, i) => ({
    n: i + 1,
    worker: task.worker!,
    startedAt: task.startedAt!,
    endedAt: task.endedAt,
    outcome: task.status as AttemptRecord["outcome"],
    ...a,
  }));
  return task;
}

function storedAttempt(task: TaskRecord, attempt: AttemptRecord, i: number): StoredAttempt {
  // Built up rather than copied and deleted from: a deleted property makes a slow object.
  const stored: StoredAttempt = {};
  if (attempt.n !== i + 1) stored.n = attempt.n;
  if (attempt.worker !== task.worker) stored.worker = attempt.worker;
  if (attempt.startedAt !== task.startedAt) stored.startedAt = attempt.startedAt;
  if (attempt.endedAt !== task.endedAt) stored.endedAt = attempt.endedAt;
  if (attempt.outcome !== task.status) stored.outcome = attempt.outcome;
  for (const key in attempt) if (!ATTEMPT_SHARED.has(key)) (stored as Record<string, unknown>)[key] = attempt[key as keyof AttemptRecord];
  return stored;
}

/** An attempt's fields that `storedAttempt` leaves out where they are its task's or its position. */
const ATTEMPT_SHARED = new Set(["n", "worker", "startedAt", "endedAt", "outcome"]);

/** Whether a task's document stays as it is: worth packing. */
export function stays(task: TaskRecord): boolean {
  return !(task.status === "pending" || task.status === "running" || task.writes !== null);
}

/** The node named in a task id made by `taskId` (`<run>:<step>:<node>` or `...#<index>`). */
function nodeOf(task: TaskRecord): string {
  const name = task.id.slice(`${task.runId}:${task.step}:`.length);
  return task.index === null ? name : name.slice(0, name.lastIndexOf("#"));
}
