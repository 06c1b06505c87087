import type { Redis } from "ioredis";
import { hasTags } from "../../tags.js";
import { inFilter, oldestFirst } from "../listing.js";
import { decodeCursor, encodeCursor, onVersion } from "../rules.js";
import { numberedEvent, type EventRecord, type NewEvent, type RunRecord, type RunStatus } from "../records.js";
import type { EventQuery, RunFilter } from "../store.js";
import type { RedisKeys, RunPart } from "./keys.js";
import { decodeRun } from "./run-codec.js";

type StreamEntry = [id: string, fields: string[]];

/** A stream entry (id `<seq>-0`, fields `r` runSeq and `e` the event's JSON) as an event. */
export function decodeEvent([id, fields]: StreamEntry): EventRecord {
  let runSeq = 0;
  let json = "{}";
  for (let i = 0; i + 1 < fields.length; i += 2) {
    if (fields[i] === "r") runSeq = Number(fields[i + 1]);
    else if (fields[i] === "e") json = fields[i + 1]!;
  }
  return numberedEvent(JSON.parse(json) as NewEvent, Number(id.slice(0, id.indexOf("-"))), runSeq);
}

/** Events after a sequence number: a run's own stream, or the store-wide one. */
export async function readEvents(client: Redis, keys: RedisKeys, query: EventQuery): Promise<EventRecord[]> {
  const key = query.runId !== undefined ? keys.runPart(query.runId, "events") : keys.global("events");
  if (query.last !== undefined) return readTail(client, key, query, query.last);
  const limit = query.limit ?? Infinity;
  const out: EventRecord[] = [];
  let start = `(${query.after ?? 0}-0`;
  while (out.length < limit) {
    const page = query.types ? 1000 : Math.min(1000, limit - out.length);
    const entries = (await client.xrange(key, start, "+", "COUNT", page)) as StreamEntry[];
    for (const entry of entries) {
      const event = decodeEvent(entry);
      if (query.types && !query.types.includes(event.type)) continue;
      out.push(event);
      if (out.length >= limit) break;
    }
    if (entries.length < page) break;
    start = `(${entries[entries.length - 1]![0]}`;
  }
  return out;
}

/** The newest `count` matching events, read backwards from the stream's end, returned oldest first. */
async function readTail(client: Redis, key: string, query: EventQuery, count: number): Promise<EventRecord[]> {
  const out: EventRecord[] = [];
  const floor = `(${query.after ?? 0}-0`;
  let end = "+";
  while (out.length < count) {
    const page = query.types ? 1000 : Math.min(1000, count - out.length);
    const entries = (await client.xrevrange(key, end, floor, "COUNT", page)) as StreamEntry[];
    for (const entry of entries) {
      const event = decodeEvent(entry);
      if (query.types && !query.types.includes(event.type)) continue;
      out.push(event);
      if (out.length >= count) break;
    }
    if (entries.length < page) break;
    end = `(${entries[entries.length - 1]![0]}`;
  }
  return out.reverse().slice(0, query.limit ?? out.length);
}

interface IndexEntry {
  id: string;
  at: number;
}

/** Most recently updated first; same time: larger id first (as ZRANGE ... REV orders them). */
const newer = (a: IndexEntry, b: IndexEntry) => a.at > b.at || (a.at === b.at && a.id > b.id);

/** One sorted run index (score: updatedAt), newest first, strictly after the cursor. */
async function* scanIndex(client: Redis, key: string, after: IndexEntry | undefined, pageSize: number): AsyncGenerator<IndexEntry> {
  const max = after ? String(after.at) : "+inf";
  for (let offset = 0; ; offset += pageSize) {
    const flat = await client.zrange(key, max, "-inf", "BYSCORE", "REV", "LIMIT", offset, pageSize, "WITHSCORES");
    for (let i = 0; i + 1 < flat.length; i += 2) {
      const entry = { id: flat[i]!, at: Number(flat[i + 1]) };
      if (!after || newer(after, entry)) yield entry;
    }
    if (flat.length < pageSize * 2) return;
  }
}

/** Several indexes merged, newest first. */
async function* mergeIndexes(scans: AsyncGenerator<IndexEntry>[]): AsyncGenerator<IndexEntry> {
  const heads = await Promise.all(scans.map((s) => s.next()));
  for (;;) {
    let best = -1;
    for (let i = 0; i < heads.length; i++) {
      const head = heads[i]!;
      if (!head.done && (best < 0 || newer(head.value, (heads[best] as IteratorYieldResult<IndexEntry>).value))) best = i;
    }
    if (best < 0) return;
    yield (heads[best] as IteratorYieldResult<IndexEntry>).value;
    heads[best] = await scans[best]!.next();
  }
}

/**
 * `Store.listRuns`: walks the most selective index (parent, workflow, status or all runs), reads
 * the runs in batches and keeps those matching every filter.
 */
export async function listRuns(client: Redis, keys: RedisKeys, filter: RunFilter): Promise<{ runs: RunRecord[]; nextCursor?: string }> {
  const statuses = filter.status === undefined ? undefined : ([] as RunStatus[]).concat(filter.status);
  const limit = filter.limit ?? 100;
  const cursor = filter.cursor ? decodeCursor(filter.cursor) : undefined;
  const after = cursor ? { id: cursor.id, at: cursor.updatedAt } : undefined;
  const pageSize = Math.min(500, Math.max(50, limit + 1));
  const indexes =
    filter.parentRunId !== undefined
      ? [keys.runsByParent(filter.parentRunId)]
      : filter.workflow !== undefined
        ? [keys.runsByWorkflow(filter.workflow)]
        : statuses
          ? statuses.map((s) => keys.runsByStatus(s))
          : [keys.global("runs")];
  const matches = (run: RunRecord) =>
    (!statuses || statuses.includes(run.status)) &&
    (filter.workflow === undefined || run.workflow === filter.workflow) &&
    (filter.parentRunId === undefined || run.parentRunId === filter.parentRunId) &&
    hasTags(run, filter.tags) &&
    onVersion(run, filter.versions);

  const found: RunRecord[] = [];
  let batch: string[] = [];
  const flush = async () => {
    const pipeline = client.pipeline();
    for (const id of batch) pipeline.hgetall(keys.run(id));
    const replies = (await pipeline.exec()) ?? [];
    for (const [error, hash] of replies) {
      if (error) throw error;
      const run = decodeRun(hash as Record<string, string>);
      if (run && matches(run)) found.push(run);
    }
    batch = [];
  };
  for await (const entry of mergeIndexes(indexes.map((key) => scanIndex(client, key, after, pageSize)))) {
    batch.push(entry.id);
    if (batch.length >= pageSize) await flush();
    if (found.length > limit) break;
  }
  if (found.length <= limit && batch.length > 0) await flush();
  const page = found.slice(0, limit);
  const last = page[page.length - 1];
  return { runs: page, ...(found.length > limit && last ? { nextCursor: encodeCursor(last) } : {}) };
}

/**
 * Records kept per run (one hash per part, field = record id) and found by id through a
 * store-wide index (id → run id). For each id found: its JSON in each part (null where absent).
 */
export async function recordsByIds(
  client: Redis,
  keys: RedisKeys,
  index: string,
  parts: readonly RunPart[],
  ids: readonly string[],
): Promise<(string | null)[][]> {
  if (ids.length === 0) return [];
  const runs = await client.hmget(keys.global(index), ...ids);
  const located = ids.flatMap((id, i) => (runs[i] ? [[id, runs[i]!] as const] : []));
  const pipeline = client.pipeline();
  for (const [id, runId] of located) for (const part of parts) pipeline.hget(keys.runPart(runId, part), id);
  const replies = (await pipeline.exec()) ?? [];
  const rows: (string | null)[][] = [];
  for (let i = 0; i < located.length; i++) {
    const row = replies.slice(i * parts.length, (i + 1) * parts.length).map(([error, json]) => {
      if (error) throw error;
      return typeof json === "string" ? json : null;
    });
    if (row[0] !== null) rows.push(row);
  }
  return rows;
}

/** Walks a sorted set oldest first in pages, keeping what `keep` accepts, until `limit`. */
export async function scanOldestFirst<T>(
  client: Redis,
  key: string,
  limit: number,
  fetch: (ids: string[]) => Promise<T[]>,
  keep: (item: T) => boolean,
): Promise<T[]> {
  const out: T[] = [];
  const pageSize = Math.min(500, Math.max(50, limit));
  for (let offset = 0; out.length < limit; offset += pageSize) {
    const ids = await client.zrange(key, offset, offset + pageSize - 1);
    for (const item of await fetch(ids)) {
      if (keep(item)) out.push(item);
      if (out.length >= limit) break;
    }
    if (ids.length < pageSize) break;
  }
  return out;
}

/**
 * Interrupts or commands, oldest first: a run's from its own hash, else through the store-wide
 * index (`<kind>`, or `<kind>:pending` for pending ones only) read in pages by id.
 */
export async function listOldestFirst<T extends { id: string; runId: string; createdAt: number; status: S }, S extends string>(
  client: Redis,
  keys: RedisKeys,
  kind: "interrupts" | "commands",
  filter: { status?: S; runId?: string; limit?: number },
  read: { ofRun: (runId: string) => Promise<T[]>; byIds: (ids: string[]) => Promise<T[]> },
): Promise<T[]> {
  const keep = (record: T) => inFilter(record, filter);
  const limit = filter.limit ?? Infinity;
  if (filter.runId !== undefined) return (await read.ofRun(filter.runId)).filter(keep).sort(oldestFirst).slice(0, limit);
  const index = keys.global(filter.status === "pending" ? `${kind}:pending` : kind);
  return scanOldestFirst(client, index, limit, read.byIds, keep);
}
