import { traceIdOf } from "../../ids.js";
import { numberedEvent, type EventRecord, type NewEvent } from "../records.js";

/**
 * A commit's events, stored as one row: `seq` is the last one's store-wide number, `run_seq` the
 * first one's number within the run; `events` the batch's document, or where it is kept
 * (group-docs.ts).
 */
export interface EventBatchRow {
  seq: number;
  run_id: string;
  run_seq: number;
  count: number;
  events: string | Buffer;
}

/**
 * The `events` document of a batch. The events of one commit nearly always share their actor and
 * time, so the batch holds them once; each event then holds only what is its own, its trailing
 * entries left out where they are the batch's (or the run's, for the trace id).
 */
interface StoredBatch {
  actor: string;
  time: number;
  events: StoredEvent[];
  /**
   * Other documents of the commit (its checkpoint's metadata, its settled tasks), packed with its
   * events in one deflate call; their rows refer to them (packed-json.ts, `docReference`).
   */
  docs?: unknown[];
}

/**
 * A null `traceId` is the run's own trace. A task id is stored without its run's id at its start
 * (":4:work" for "run-1:4:work"); another id starting with ":" is stored in an array.
 */
type StoredEvent = [type: EventRecord["type"], payload: unknown, taskId?: string | [string] | null, spanId?: string | null, traceId?: string | null, actor?: string, time?: number];

/** Schema version 2's batches, which are still read: one full tuple per event. */
type LegacyEvent = [type: EventRecord["type"], taskId: string | null, traceId: string | null, spanId: string | null, actor: string, time: number, payload: unknown];

/** A commit's events (and `docs`, the other documents kept with them) as a JSON document. */
export function eventBatch(runId: string, events: readonly NewEvent[], docs: readonly unknown[] = []): string {
  const runTrace = traceIdOf(runId);
  const { actor, time } = events[0]!;
  const stored: StoredEvent[] = [];
  for (const e of events) {
    const tuple: StoredEvent = [e.type, e.payload, storedTaskId(runId, e.taskId), e.spanId, e.traceId === runTrace ? null : e.traceId, e.actor, e.time];
    // Trailing entries that hold what they are when left out (null, or the batch's) are left out.
    let length: number = 7;
    if (tuple[6] === time) {
      length = 6;
      if (tuple[5] === actor) {
        length = 5;
        while (length > 2 && tuple[length - 1] === null) length--;
      }
    }
    tuple.length = length as StoredEvent["length"];
    stored.push(tuple);
  }
  const batch: StoredBatch = { actor, time, events: stored };
  if (docs.length > 0) batch.docs = docs as unknown[];
  return JSON.stringify(batch);
}

/** `text` is the row's document as JSON text (wherever it was kept). */
export function eventRecords(row: EventBatchRow, text: string): EventRecord[] {
  const first = row.seq - row.count + 1;
  const runTrace = traceIdOf(row.run_id);
  const record = (i: number, e: Omit<NewEvent, "runId">): EventRecord => numberedEvent({ runId: row.run_id, ...e } as NewEvent, first + i, row.run_seq + i);
  const parsed = JSON.parse(text) as StoredBatch | LegacyEvent[];
  if (Array.isArray(parsed)) {
    return parsed.map(([type, taskId, traceId, spanId, actor, time, payload], i) =>
      record(i, { taskId, traceId: traceId ?? runTrace, spanId, type, actor, payload: payload as EventRecord["payload"], time }),
    );
  }
  return parsed.events.map(([type, payload, taskId = null, spanId = null, traceId = null, actor = parsed.actor, time = parsed.time], i) =>
    record(i, {
      taskId: Array.isArray(taskId) ? taskId[0] : taskId?.startsWith(":") ? row.run_id + taskId : taskId,
      traceId: traceId ?? runTrace,
      spanId,
      type,
      actor,
      payload: payload as EventRecord["payload"],
      time,
    }),
  );
}

function storedTaskId(runId: string, taskId: string | null): string | [string] | null {
  if (taskId === null) return null;
  if (taskId.startsWith(`${runId}:`)) return taskId.slice(runId.length);
  return taskId.startsWith(":") ? [taskId] : taskId;
}

/** The documents stored with a batch's events, from its JSON text (none in batches of schema version 3 and before). */
export function batchDocs(text: string): unknown[] {
  const parsed = JSON.parse(text) as StoredBatch | LegacyEvent[];
  return Array.isArray(parsed) ? [] : (parsed.docs ?? []);
}
