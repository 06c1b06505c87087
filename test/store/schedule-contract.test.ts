import { describe, expect, it } from "vitest";
import { ConflictError, NotFoundError, type ScheduleRecord, type Store } from "../../engine/index.js";
import { storeEach, storeFactories } from "../support/stores.js";

function schedule(id: string, patch: Partial<ScheduleRecord> = {}): ScheduleRecord {
  return {
    id,
    workflow: "nightly",
    version: null,
    cron: "0 3 * * *",
    timezone: "Europe/Berlin",
    // A number no 14-digit float format keeps: the stores must not round-trip it through one.
    input: { topic: "news", weight: 0.12345678901234567, nested: { list: [1, "two", null] } },
    overlap: "skip",
    catchUp: "one",
    paused: false,
    nextAt: 1_767_232_800_000,
    lastFiredAt: null,
    lastRunId: null,
    lastSkip: null,
    createdAt: 1_767_200_000_000,
    updatedAt: 1_767_200_000_000,
    revision: 0,
    ...patch,
  };
}

describe.each(storeFactories)("Store contract, schedules: $name", (factory) => {
  let store: Store;
  storeEach(factory, (opened) => (store = opened));

  it("stores, reads, lists by id and deletes schedules", async () => {
    const stored = await store.putSchedule(schedule("b", { tags: { team: "ops" } }), null);
    expect(stored.revision).toBe(1);
    await store.putSchedule(schedule("a"), null);
    expect(await store.getSchedule("b")).toEqual(stored);
    expect((await store.listSchedules()).map((s) => s.id)).toEqual(["a", "b"]);
    expect(await store.getSchedule("nope")).toBeUndefined();
    expect(await store.deleteSchedule("a")).toBe(true);
    expect(await store.deleteSchedule("a")).toBe(false);
    expect((await store.listSchedules()).map((s) => s.id)).toEqual(["b"]);
  });

  it("refuses a second schedule of one id, and a change made from an older read", async () => {
    await store.putSchedule(schedule("s"), null);
    await expect(store.putSchedule(schedule("s", { cron: "* * * * *" }), null)).rejects.toThrow(ConflictError);
    const read = (await store.getSchedule("s"))!;
    const paused = await store.putSchedule({ ...read, paused: true, updatedAt: read.updatedAt + 1 }, read.revision);
    expect(paused).toMatchObject({ paused: true, revision: read.revision + 1 });
    // Another operator's edit from the first read is refused, and changes nothing.
    await expect(store.putSchedule({ ...read, cron: "*/5 * * * *" }, read.revision)).rejects.toThrow(/changed meanwhile/);
    expect(await store.getSchedule("s")).toEqual(paused);
    await expect(store.putSchedule(schedule("gone"), 1)).rejects.toThrow(NotFoundError);
    expect(await store.getSchedule("gone")).toBeUndefined();
  });

  it("advances a schedule only while its next time is the one read: one of two workers firing a time wins", async () => {
    const read = await store.putSchedule(schedule("s"), null);
    const fired = (runId: string) => ({ nextAt: read.nextAt! + 86_400_000, lastFiredAt: read.nextAt, lastRunId: runId, lastSkip: null });
    const outcomes = await Promise.all([store.advanceSchedule("s", read.nextAt!, fired("s-1")), store.advanceSchedule("s", read.nextAt!, fired("s-2"))]);
    expect(outcomes.filter(Boolean)).toHaveLength(1);
    const after = (await store.getSchedule("s"))!;
    expect(after).toMatchObject({ nextAt: read.nextAt! + 86_400_000, lastFiredAt: read.nextAt, lastRunId: outcomes[0] ? "s-1" : "s-2", revision: read.revision + 1 });
    // What the operator set is kept: an advance writes only what firing changes.
    expect(after.input).toEqual(read.input);
    // A stale time, a schedule gone: nothing written.
    expect(await store.advanceSchedule("s", read.nextAt!, fired("s-3"))).toBe(false);
    expect(await store.advanceSchedule("nope", read.nextAt!, fired("s-4"))).toBe(false);
    expect((await store.getSchedule("s"))!.lastRunId).toBe(after.lastRunId);
    expect(await store.getSchedule("nope")).toBeUndefined();
  });

  it("an advance after an operator changed the next time is refused; an operator's change after an advance needs a new read", async () => {
    const read = await store.putSchedule(schedule("s"), null);
    const moved = await store.putSchedule({ ...read, cron: "0 4 * * *", nextAt: read.nextAt! + 3_600_000 }, read.revision);
    expect(await store.advanceSchedule("s", read.nextAt!, { nextAt: read.nextAt! + 86_400_000, lastFiredAt: read.nextAt, lastRunId: "r", lastSkip: null })).toBe(false);
    expect(await store.getSchedule("s")).toEqual(moved);
    expect(await store.advanceSchedule("s", moved.nextAt!, { nextAt: null, lastFiredAt: moved.nextAt, lastRunId: null, lastSkip: { at: moved.nextAt!, reason: "why" } })).toBe(true);
    await expect(store.putSchedule({ ...moved, paused: true }, moved.revision)).rejects.toThrow(ConflictError);
    expect(await store.getSchedule("s")).toMatchObject({ nextAt: null, lastSkip: { at: moved.nextAt, reason: "why" }, paused: false });
  });

  it("tells the time on its clock", async () => {
    const before = Date.now();
    const now = await store.clock();
    // A local redis-server shares this machine's clock.
    expect(now).toBeGreaterThanOrEqual(before - 1000);
    expect(now).toBeLessThanOrEqual(Date.now() + 1000);
  });
});
