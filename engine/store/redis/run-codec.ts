import { StoreError } from "../../errors.js";
import type { RunPatch, RunRecord } from "../records.js";

/**
 * How a run record is kept in its Redis hash: one field per property, so that the scripts read
 * and change the few fields they reason about (status, fence, lease, head...) without parsing
 * JSON. Nullable scalars are absent fields; structured values are JSON text.
 */
/** `count`: a number that runs stored before the field existed lack, read as 0. */
/** `json?`: structured, absent from runs that have none (left out of the record). */
type FieldKind = "string" | "string?" | "number" | "number?" | "count" | "json" | "json?";

const RUN_FIELDS = {
  id: "string",
  workflow: "string",
  version: "string",
  status: "string",
  reason: "string?",
  error: "json",
  parentRunId: "string?",
  parentTaskId: "string?",
  forkOf: "json",
  createdAt: "number",
  updatedAt: "number",
  startedAt: "number?",
  endedAt: "number?",
  head: "string?",
  headN: "number",
  step: "number",
  firstStep: "count",
  owner: "string?",
  leaseUntil: "number?",
  fence: "number",
  wakeAt: "number?",
  waitingOn: "string?",
  pausedAt: "number?",
  pausedMs: "count",
  breakpoints: "json",
  deadlineAt: "number?",
  tags: "json?",
  interruptBefore: "json",
  interruptAfter: "json",
  current: "json",
  pendingInterrupts: "number",
  recoveries: "number",
  lostInARow: "count",
  eventCount: "number",
  barriers: "json",
  lastCommit: "string?",
} as const satisfies { [K in keyof RunRecord]-?: FieldKind };

type RunField = keyof typeof RUN_FIELDS;

/** A run change as hash writes: fields to set (name, text) and fields to delete. */
export interface HashChange {
  set: [field: string, value: string][];
  del: string[];
}

export function encodeRunFields(values: Partial<RunRecord> | RunPatch): HashChange {
  const change: HashChange = { set: [], del: [] };
  for (const [field, value] of Object.entries(values)) {
    const kind = RUN_FIELDS[field as RunField];
    if (kind === undefined || value === undefined) continue;
    if (kind === "json") change.set.push([field, JSON.stringify(value)]);
    else if (kind === "json?" && value !== null) change.set.push([field, JSON.stringify(value)]);
    else if (value === null) change.del.push(field);
    else change.set.push([field, String(value)]);
  }
  return change;
}

/** The record of a run hash (from HGETALL), or undefined for an absent run. */
export function decodeRun(hash: Record<string, string>): RunRecord | undefined {
  if (hash.id === undefined) return undefined;
  const run: Record<string, unknown> = {};
  for (const [field, kind] of Object.entries(RUN_FIELDS) as [RunField, FieldKind][]) {
    const text = hash[field];
    if (text === undefined) {
      if (kind === "string?" || kind === "number?") run[field] = null;
      else if (kind === "count") run[field] = 0;
      else if (kind === "json?") continue;
      else throw new StoreError(`run ${hash.id} in Redis has no field "${field}": the store is damaged or was written by another program`);
    } else if (kind === "json" || kind === "json?") run[field] = JSON.parse(text);
    else if (kind === "number" || kind === "number?" || kind === "count") run[field] = Number(text);
    else run[field] = text;
  }
  return run as unknown as RunRecord;
}

/** A flat HGETALL reply (as scripts return it) as an object. */
export function pairsToHash(flat: readonly string[]): Record<string, string> {
  const hash: Record<string, string> = {};
  for (let i = 0; i + 1 < flat.length; i += 2) hash[flat[i]!] = flat[i + 1]!;
  return hash;
}
