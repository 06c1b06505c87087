import type { Redis } from "ioredis";
import { ConflictError, NotFoundError } from "../../errors.js";
import type { ScheduleAdvance, ScheduleRecord } from "../records.js";
import { changedMeanwhile } from "../schedule-writes.js";
import type { RedisKeys } from "./keys.js";
import { refusal } from "./replies.js";
import type { ScriptWriter } from "./script-writer.js";

// Schedules on Redis: the layout is in lua/schedules.ts.

type Fired = ScheduleAdvance;

export async function putSchedule(w: ScriptWriter, record: ScheduleRecord, expectRevision: number | null): Promise<ScheduleRecord> {
  const { nextAt, lastFiredAt, lastRunId, lastSkip, revision: _revision, ...config } = record;
  const fired: Fired = { nextAt, lastFiredAt, lastRunId, lastSkip };
  const reply = await w.write("putSchedule", w.args().add(record.id, expectRevision ?? "n", JSON.stringify(config), JSON.stringify(fired), nextAtText(nextAt)));
  if (reply[0] === "exists") throw new ConflictError(`schedule ${record.id} already exists`);
  if (reply[0] === "notfound") throw new NotFoundError("schedule", record.id);
  if (reply[0] === "changed") throw changedMeanwhile(record.id);
  if (reply[0] !== "ok") throw refusal(reply);
  return { ...record, revision: Number(reply[1]) };
}

export async function advanceSchedule(w: ScriptWriter, id: string, expectNextAt: number, advance: ScheduleAdvance): Promise<boolean> {
  const reply = await w.write("advanceSchedule", w.args().add(id, nextAtText(expectNextAt), JSON.stringify(advance), nextAtText(advance.nextAt)));
  return reply[0] === "ok";
}

export async function deleteSchedule(w: ScriptWriter, id: string): Promise<boolean> {
  const reply = await w.write("deleteSchedule", w.args().add(id));
  return Number(reply[1]) > 0;
}

export async function getSchedule(client: Redis, keys: RedisKeys, id: string): Promise<ScheduleRecord | undefined> {
  return decode(await client.hgetall(keys.schedule(id)));
}

export async function listSchedules(client: Redis, keys: RedisKeys): Promise<ScheduleRecord[]> {
  const ids = (await client.smembers(keys.global("schedules"))).sort();
  if (ids.length === 0) return [];
  const pipeline = client.pipeline();
  for (const id of ids) pipeline.hgetall(keys.schedule(id));
  const replies = (await pipeline.exec()) ?? [];
  return replies.flatMap(([error, hash]) => {
    if (error) throw error;
    const record = decode(hash as Record<string, string>);
    return record ? [record] : [];
  });
}

function decode(hash: Record<string, string>): ScheduleRecord | undefined {
  if (hash.config === undefined || hash.fired === undefined) return undefined;
  return { ...(JSON.parse(hash.config) as Omit<ScheduleRecord, keyof Fired | "revision">), ...(JSON.parse(hash.fired) as Fired), revision: Number(hash.revision) };
}

/** `nextAt` as the scripts compare it. */
function nextAtText(nextAt: number | null): string {
  return nextAt === null ? "" : String(nextAt);
}
