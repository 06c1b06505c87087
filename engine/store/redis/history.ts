import type { Redis } from "ioredis";
import { parseCheckpointId } from "../../ids.js";
import type { ChainRow } from "../../state/read.js";
import { deadlinesOf, inTaskRange, soonestFirst, taskOrder } from "../listing.js";
import { RUN_STATUSES, TERMINAL_RUN_STATUSES, type CheckpointRecord, type InterruptRecord, type RunRecord, type TaskRecord } from "../records.js";
import type { Deadline, TaskRange } from "../store.js";
import type { RedisKeys } from "./keys.js";
import { listOldestFirst, recordsByIds } from "./queries.js";

// The Redis store's reads of runs' histories: checkpoints (a list per run, index = n), tasks and
// interrupts (a hash per run). Events are read in queries.ts, commands in commands.ts.

type CheckpointRange = { limit?: number; afterN?: number };

export async function getCheckpoint(client: Redis, keys: RedisKeys, id: string): Promise<CheckpointRecord | undefined> {
  // The record says whether the id it was found by is its own.
  const at = parseCheckpointId(id);
  if (!at) return undefined;
  const json = await client.lindex(keys.runPart(at.runId, "checkpoints"), at.n);
  const checkpoint = json === null ? undefined : (JSON.parse(json) as CheckpointRecord);
  return checkpoint?.id === id ? checkpoint : undefined;
}

export async function listCheckpoints(client: Redis, keys: RedisKeys, runId: string, options: CheckpointRange): Promise<CheckpointRecord[]> {
  const start = options.afterN === undefined ? 0 : Math.max(0, options.afterN + 1);
  if (options.limit !== undefined && options.limit <= 0) return [];
  const stop = options.limit === undefined ? -1 : start + options.limit - 1;
  return (await client.lrange(keys.runPart(runId, "checkpoints"), start, stop)).map((json) => JSON.parse(json) as CheckpointRecord);
}

export async function checkpointRows(client: Redis, keys: RedisKeys, runId: string, ns: readonly number[]): Promise<ChainRow[]> {
  const wanted = ns.filter((n) => Number.isInteger(n) && n >= 0);
  const pipeline = client.pipeline();
  for (const n of wanted) pipeline.lindex(keys.runPart(runId, "checkpoints"), n);
  const replies = (await pipeline.exec()) ?? [];
  return replies.flatMap(([error, json]) => {
    if (error) throw error;
    return typeof json === "string" ? [JSON.parse(json) as CheckpointRecord] : [];
  });
}

export async function checkpointRowRange(client: Redis, keys: RedisKeys, runId: string, fromN: number, toN: number): Promise<ChainRow[]> {
  const start = Math.max(0, fromN + 1);
  if (toN < start) return [];
  return (await client.lrange(keys.runPart(runId, "checkpoints"), start, toN)).map((json) => JSON.parse(json) as CheckpointRecord);
}

export async function getTask(client: Redis, keys: RedisKeys, id: string): Promise<TaskRecord | undefined> {
  const runId = await client.hget(keys.global("task-runs"), id);
  const json = runId === null ? null : await client.hget(keys.runPart(runId, "tasks"), id);
  return json === null ? undefined : (JSON.parse(json) as TaskRecord);
}

/** Past this many steps, a run's later tasks are read with the rest of them (one HVALS), not step by step. */
const STEPS_READ_APART = 256;

export async function listTasks(client: Redis, keys: RedisKeys, runId: string, options: TaskRange): Promise<TaskRecord[]> {
  const tasksKey = keys.runPart(runId, "tasks");
  const ids = options.step !== undefined ? await client.smembers(keys.stepTasks(runId, options.step)) : await laterTaskIds(client, keys, runId, options.afterStep);
  const jsons = ids === undefined ? await client.hvals(tasksKey) : ids.length === 0 ? [] : await client.hmget(tasksKey, ...ids);
  return jsons
    .flatMap((json) => (json === null ? [] : [JSON.parse(json) as TaskRecord]))
    .filter((t) => t.runId === runId && inTaskRange(t, options))
    .sort(taskOrder);
}

/**
 * The ids of a run's tasks of the steps after `afterStep`, from each step's set (the run's step
 * in progress is the last with tasks); undefined when the whole hash is read instead: no step
 * given, or more steps than STEPS_READ_APART.
 */
async function laterTaskIds(client: Redis, keys: RedisKeys, runId: string, afterStep: number | undefined): Promise<string[] | undefined> {
  if (afterStep === undefined) return undefined;
  const step = await client.hget(keys.run(runId), "step");
  if (step === null) return [];
  const last = Number(step) + 1;
  if (last - afterStep > STEPS_READ_APART) return undefined;
  const pipeline = client.pipeline();
  for (let s = Math.max(0, afterStep + 1); s <= last; s++) pipeline.smembers(keys.stepTasks(runId, s));
  return ((await pipeline.exec()) ?? []).flatMap(([error, ids]) => {
    if (error) throw error;
    return ids as string[];
  });
}

export async function interruptsByIds(client: Redis, keys: RedisKeys, ids: string[]): Promise<InterruptRecord[]> {
  const rows = await recordsByIds(client, keys, "interrupt-runs", ["interrupts"], ids);
  return rows.map(([json]) => JSON.parse(json!) as InterruptRecord);
}

export function listInterrupts(client: Redis, keys: RedisKeys, filter: { status?: "pending" | "resolved"; runId?: string; limit?: number }): Promise<InterruptRecord[]> {
  return listOldestFirst(client, keys, "interrupts", filter, {
    ofRun: async (runId) => (await client.hvals(keys.runPart(runId, "interrupts"))).map((json) => JSON.parse(json) as InterruptRecord),
    byIds: (ids) => interruptsByIds(client, keys, ids),
  });
}

/**
 * The deadlines of the runs not ended and of the pending interrupts (`Store.listDeadlines`), from
 * their indexes (lua/deadlines.ts). A store written by a release without them has them built by
 * `index` (the first read of a process that writes); where that cannot be done (the store is open
 * read-only, or the server is full) they are read from the runs not ended and the pending
 * interrupts themselves.
 */
export async function listDeadlines(client: Redis, keys: RedisKeys, index?: () => Promise<unknown>): Promise<Deadline[]> {
  const read = async () =>
    (
      await client
        .multi()
        .exists(keys.global("deadlines-indexed"))
        .zrange(keys.global("deadlines:runs"), 0, -1, "WITHSCORES")
        .zrange(keys.global("deadlines:interrupts"), 0, -1, "WITHSCORES")
        .exec()
    )!.map(([error, reply]) => {
      if (error) throw error;
      return reply;
    }) as [number, string[], string[]];
  let [indexed, runs, interrupts] = await read();
  if (indexed === 0 && index && (await index().then(() => true, () => false))) [indexed, runs, interrupts] = await read();
  if (indexed === 0) return deadlinesOf(await runsNotEnded(client, keys), await listInterrupts(client, keys, { status: "pending" }));
  return [...scored(runs, "run"), ...scored(interrupts, "interrupt")].sort(soonestFirst);
}

function scored(reply: readonly string[], kind: Deadline["kind"]): Deadline[] {
  const found: Deadline[] = [];
  for (let i = 0; i < reply.length; i += 2) found.push({ kind, id: reply[i]!, at: Number(reply[i + 1]) });
  return found;
}

/** The runs not ended, with the fields a deadline needs (read only where the indexes are missing). */
async function runsNotEnded(client: Redis, keys: RedisKeys): Promise<Pick<RunRecord, "id" | "status" | "deadlineAt">[]> {
  const runs: Pick<RunRecord, "id" | "status" | "deadlineAt">[] = [];
  for (const status of RUN_STATUSES.filter((s) => !TERMINAL_RUN_STATUSES.includes(s))) {
    const ids = await client.zrange(keys.runsByStatus(status), 0, -1);
    const pipeline = client.pipeline();
    for (const id of ids) pipeline.hget(keys.run(id), "deadlineAt");
    const replies = (await pipeline.exec()) ?? [];
    ids.forEach((id, i) => {
      const at = replies[i]?.[1];
      if (typeof at === "string") runs.push({ id, status, deadlineAt: Number(at) });
    });
  }
  return runs;
}
