import { describe, expect, it } from "vitest";
import { z } from "zod";
import { ConflictError, Operator, ValidationError, Worker, fireInstant, nextCronTime, scheduleRunId, startRun, storeWorkflow, workflow, type Engine, type Fired, type ScheduleRecord, type Store } from "../../engine/index.js";
import { fireSchedule } from "../../engine/operator/schedule-fire.js";
import { ended, engineHarness, until } from "../support/engine.js";
import { storeFactories } from "../support/stores.js";

const state = z.object({ topic: z.string().default("news"), count: z.number().int().max(5).default(0), done: z.boolean().default(false) });
const quick = workflow("digest", { state }).node("work", (s) => ({ done: true, count: s.count + 1 }), { next: "END" }).compile();
/** Waits for a person: a run of it does not end by itself. */
const asking = workflow("asking", { state }).approval("ask", { question: "Go?", routes: { approve: "END", reject: "END" } }).compile();

const MINUTE = 60_000;

describe.each(storeFactories)("schedules ($name store)", (factory) => {
  const harness = engineHarness(factory);

  /** A store holding the workflows, and an operator on it (no worker yet: the test makes its schedules first). */
  async function storeWith(...workflows: (typeof quick)[]): Promise<{ store: Store; ops: Operator }> {
    const { store } = await harness.engine(workflows, { worker: false });
    for (const wf of workflows) await storeWorkflow(store, wf);
    return { store, ops: new Operator(store, { actor: "operator:ann" }) };
  }

  /** Moves a schedule's next time to `at` (the past, to make it due now), as if a worker had not been there. */
  async function dueAt(store: Store, id: string, at: number): Promise<ScheduleRecord> {
    const s = (await store.getSchedule(id))!;
    return store.putSchedule({ ...s, nextAt: at }, s.revision);
  }

  /** A worker on the store, which lists the schedules as it starts. */
  function workerOn(store: Store, ...workflows: (typeof quick)[]): Promise<Engine> {
    return harness.engine(workflows, { store });
  }

  it("makes a schedule with its next time from the cron in its time zone, and checks every field first", async () => {
    const { store, ops } = await storeWith(quick);
    const before = await store.clock();
    const made = await ops.schedules.create({ id: "nightly", workflow: "digest", cron: "30 2 * * *", timezone: "Europe/Berlin", input: { topic: "sport" } });
    expect(made).toMatchObject({ workflow: "digest", version: null, timezone: "Europe/Berlin", overlap: "skip", catchUp: "one", paused: false, lastRunId: null, revision: 1 });
    expect(made.nextAt).toBe(nextCronTime("30 2 * * *", "Europe/Berlin", made.createdAt));
    expect(made.nextAt! - before).toBeLessThanOrEqual(24 * 60 * MINUTE);
    expect(new Intl.DateTimeFormat("en-GB", { timeZone: "Europe/Berlin", hour: "2-digit", minute: "2-digit" }).format(made.nextAt!)).toBe("02:30");
    const bad: [Parameters<typeof ops.schedules.create>[0], RegExp][] = [
      [{ id: "bad cron", workflow: "digest", cron: "61 * * * *" }, /^schedule id "bad cron" may only use/],
      [{ id: "c", workflow: "digest", cron: "61 * * * *" }, /^cron "61 \* \* \* \*": invalid value for minute: 61$/],
      [{ id: "c", workflow: "digest", cron: "* * * *" }, /^cron "\* \* \* \*": give five fields \(minute hour day-of-month month day-of-week\), not 4$/],
      [{ id: "c", workflow: "digest", cron: "@every 15m" }, /^cron "@every 15m": @every is not a nickname pitwall reads; give five fields \(minute hour day-of-month month day-of-week\) or one of @hourly, @daily, @midnight, @weekly, @monthly, @yearly, @annually \(every 15 minutes: \*\/15 \* \* \* \*\)$/],
      [{ id: "c", workflow: "digest", cron: "@every 90m" }, /\(every 90 minutes is no cron: its steps must divide the hour; a workflow that loops through a wait node repeats at any length\)$/],
      [{ id: "c", workflow: "digest", cron: "@daily 3" }, /^cron "@daily 3": @daily stands alone; give it without the fields after it, or five fields$/],
      [{ id: "c", workflow: "digest", cron: "0 0 31 2 *" }, /^cron "0 0 31 2 \*" has no time after now in UTC$/],
      [{ id: "c", workflow: "digest", cron: "@daily", timezone: "Europe/Berln" }, /^timezone "Europe\/Berln" is not an IANA time zone \(did you mean "Europe\/Berlin"\?\)/],
      [{ id: "c", workflow: "digets", cron: "@daily" }, /^workflow digets: no version of it is stored/],
      [{ id: "c", workflow: "digest", version: "nope", cron: "@daily" }, /^workflow digest: no stored version of it starts with nope \(stored: \w{8}\)$/],
      [{ id: "c", workflow: "digest", cron: "@daily", input: { count: 7 } }, /^run input is invalid at \$\.count: must be at most 5, got 7$/],
      [{ id: "c", workflow: "digest", cron: "@daily", overlap: "sometimes" as never }, /^overlap "sometimes": give skip/],
      [{ id: "c", workflow: "digest", cron: "@daily", tags: { schedule: "x" } }, /^tag schedule is the schedule's id/],
    ];
    for (const [spec, message] of bad) {
      const error = await ops.schedules.create(spec).catch((e: unknown) => e);
      expect(error, JSON.stringify(spec)).toBeInstanceOf(ValidationError);
      expect((error as Error).message).toMatch(message);
      expect((error as Error).message).not.toContain("\n");
    }
    await expect(ops.schedules.create({ id: "nightly", workflow: "digest", cron: "@daily" })).rejects.toThrow(ConflictError);
    expect((await ops.schedules.list()).map((s) => s.id)).toEqual(["nightly"]);
    // An update is checked the same way, and a new cron moves the next time.
    await expect(ops.schedules.update("nightly", { timezone: "Mars/Base" })).rejects.toThrow(/^timezone "Mars\/Base"/);
    const hourly = await ops.schedules.update("nightly", { cron: "@hourly" });
    expect(hourly.nextAt).toBe(nextCronTime("@hourly", "Europe/Berlin", hourly.updatedAt));
    expect(hourly.input).toEqual({ topic: "sport" });
  });

  it("keeps who made and changed it, when, what and why; a firing or a change that changes nothing adds none", async () => {
    const { store, ops } = await storeWith(quick);
    await ops.schedules.create({ id: "nightly", workflow: "digest", cron: "0 3 * * *" });
    const bob = new Operator(store, { actor: "operator:bob" });
    await bob.schedules.pause("nightly", { reason: "db maintenance" });
    await bob.schedules.pause("nightly");
    await ops.schedules.update("nightly", { cron: "0 4 * * *", overlap: "allow", tags: { team: "data" } }, { reason: "later" });
    await ops.schedules.resume("nightly");
    await ops.schedules.trigger("nightly");
    const history = (await store.getSchedule("nightly"))!.history!;
    expect(history.map(({ by, what, reason }) => ({ by, what, ...(reason ? { reason } : {}) }))).toEqual([
      { by: "operator:ann", what: "created" },
      { by: "operator:bob", what: "paused", reason: "db maintenance" },
      { by: "operator:ann", what: "cron 0 3 * * * → 0 4 * * *; overlap skip → allow; tags none → team=data", reason: "later" },
      { by: "operator:ann", what: "resumed" },
    ]);
    expect(history.map((c) => c.at)).toEqual([...history.map((c) => c.at)].sort((a, b) => a - b));
    // It keeps the last twenty.
    for (let i = 0; i < 12; i++) {
      await ops.schedules.pause("nightly");
      await ops.schedules.resume("nightly");
    }
    const kept = (await store.getSchedule("nightly"))!.history!;
    expect(kept).toHaveLength(20);
    expect(kept.at(-1)!.what).toBe("resumed");
    expect(kept[0]!.what).toBe("paused");
    // A long input is said cut short: the history is kept on the schedule.
    await ops.schedules.update("nightly", { input: { topic: "x".repeat(500) } });
    const long = (await store.getSchedule("nightly"))!.history!.at(-1)!.what;
    expect(long).toBe(`input {} → {"topic":"${"x".repeat(49)}…`);
  });

  it("a worker starts a due schedule's run once, by the start path, with an id from the time, and moves it to its next time", async () => {
    const { store, ops } = await storeWith(quick);
    await ops.schedules.create({ id: "every-minute", workflow: "digest", cron: "* * * * *", input: { topic: "sport" }, tags: { team: "ops" } });
    const at = Math.floor((Date.now() - 5 * MINUTE) / MINUTE) * MINUTE;
    await dueAt(store, "every-minute", at);
    const engine = await workerOn(store, quick);
    const runId = `every-minute-${new Date(at).toISOString().slice(0, 19).replace(/[-:]/g, "")}Z`;
    const run = await ended(engine, runId);
    expect(run).toMatchObject({ status: "succeeded", workflow: "digest", tags: { team: "ops", schedule: "every-minute" } });
    const [created] = await store.readEvents({ runId, types: ["run.created"] });
    expect(created!.actor).toMatch(/^worker:/);
    expect(created!.payload).toMatchObject({ schedule: "every-minute", scheduledFor: at });
    expect(await engine.operator().state(runId)).toMatchObject({ topic: "sport", done: true });
    const after = await until(async () => ((await store.getSchedule("every-minute"))!.lastRunId === runId ? store.getSchedule("every-minute") : undefined));
    // The time missed five minutes ago fires once (catch-up one); the next is the next minute after now.
    expect(after).toMatchObject({ lastFiredAt: at, lastSkip: null });
    expect(after!.nextAt! - Date.now()).toBeLessThanOrEqual(MINUTE);
    expect(after!.nextAt! % MINUTE).toBe(0);
    expect((await store.listRuns({ tags: { schedule: "every-minute" } })).runs).toHaveLength(1);
    const notice = await until(() => harness.notices.of("schedule-fired")[0], 5_000, "the worker's notice");
    expect(notice.message).toBe(`schedule every-minute (digest) started run ${runId} for ${new Date(at).toISOString()}`);
  });

  it("fires at the time its timer set, and starts the latest stored version of the workflow", async () => {
    const { store, ops } = await storeWith(quick);
    await ops.schedules.create({ id: "soon", workflow: "digest", cron: "* * * * *" });
    const v2 = workflow("digest", { state }).node("work-v2", () => ({ done: true, topic: "v2" }), { next: "END" }).compile();
    await new Promise((resolve) => setTimeout(resolve, 5));
    await storeWorkflow(store, v2);
    const at = Date.now() + 700;
    await dueAt(store, "soon", at);
    const engine = await workerOn(store, quick, v2);
    const fired = await until(async () => (await store.getSchedule("soon"))!.lastRunId, 5_000, "the schedule to fire");
    expect(Date.now()).toBeGreaterThanOrEqual(at);
    const run = await ended(engine, fired);
    expect(run.version).toBe(v2.version);
  });

  it("skips a time while the run it started last has not ended (overlap skip), and says why; allow starts one", async () => {
    const { store, ops } = await storeWith(asking);
    await ops.schedules.create({ id: "ask", workflow: "asking", cron: "* * * * *" });
    await ops.schedules.create({ id: "ask-any", workflow: "asking", cron: "* * * * *", overlap: "allow" });
    const first = await ops.schedules.trigger("ask");
    await ops.schedules.trigger("ask-any");
    expect(first.existed).toBe(false);
    // A trigger keeps to the overlap rule, unless forced.
    await expect(ops.schedules.trigger("ask")).rejects.toThrow(new RegExp(`^run ${first.runId} it started has not ended \\(queued\\): overlap is skip$`));
    const at = Math.floor(Date.now() / MINUTE) * MINUTE - MINUTE;
    await dueAt(store, "ask", at);
    await dueAt(store, "ask-any", at);
    await workerOn(store, asking);
    const skipped = await until(async () => (await store.getSchedule("ask"))!.lastSkip, 5_000, "the time to be skipped");
    expect(skipped).toEqual({ at, reason: expect.stringMatching(new RegExp(`^run ${first.runId} it started has not ended \\((queued|running|paused)\\): overlap is skip$`)) as unknown });
    expect((await store.getSchedule("ask"))!.lastRunId).toBe(first.runId);
    expect((await store.listRuns({ tags: { schedule: "ask" } })).runs).toHaveLength(1);
    await until(async () => (await store.listRuns({ tags: { schedule: "ask-any" } })).runs.length === 2, 5_000, "the overlapping run");
    const forced = await ops.schedules.trigger("ask", { force: true });
    expect(forced.runId).not.toBe(first.runId);
  });

  it("a time's run that another worker made while this one fired the same time is the time's run, not an overlap", async () => {
    const { store, ops } = await storeWith(asking);
    await ops.schedules.create({ id: "ask", workflow: "asking", cron: "* * * * *" });
    const schedule = (await store.getSchedule("ask"))!;
    const at = schedule.nextAt!;
    const runId = scheduleRunId("ask", at);
    // This worker looks for the time's run before the other has made it; the other fires the time
    // in between, and this one goes on to the overlap rule, which then finds the other's run.
    let other: Promise<Fired> | undefined;
    const racing = new Proxy(store, {
      get(target, key, receiver) {
        const value = Reflect.get(target, key, receiver) as unknown;
        if (key !== "getRun") return typeof value === "function" ? (value as (...a: unknown[]) => unknown).bind(target) : value;
        return async (id: string) => {
          const found = await target.getRun(id);
          if (id === runId && !other) await (other = fireSchedule(target, schedule, at, { actor: "worker:other" }));
          return found;
        };
      },
    });
    expect(await fireSchedule(racing, schedule, at, { actor: "worker:this" })).toEqual({ runId, existed: true });
    expect(await other).toEqual({ runId, existed: false });
    expect((await store.listRuns({ tags: { schedule: "ask" } })).runs.map((r) => r.id)).toEqual([runId]);
  });

  it("catch-up none skips a time missed while no worker ran; a paused schedule fires nothing, and resumes from now", async () => {
    const { store, ops } = await storeWith(quick);
    await ops.schedules.create({ id: "strict", workflow: "digest", cron: "*/5 * * * *", catchUp: "none" });
    await ops.schedules.create({ id: "held", workflow: "digest", cron: "* * * * *" });
    const missed = Math.floor(Date.now() / (5 * MINUTE)) * 5 * MINUTE - 60 * MINUTE;
    await dueAt(store, "strict", missed);
    await dueAt(store, "held", Date.now() - 10 * MINUTE);
    await ops.schedules.pause("held");
    const engine = await workerOn(store, quick);
    const strict = await until(async () => ((await store.getSchedule("strict"))!.lastSkip ? store.getSchedule("strict") : undefined), 5_000, "the missed time to be skipped");
    expect(strict).toMatchObject({ lastFiredAt: missed, lastRunId: null, lastSkip: { at: missed, reason: "missed: no worker ran at that time (catch-up none)" } });
    expect(strict!.nextAt).toBeGreaterThan(Date.now());
    expect((await store.listRuns({ tags: { schedule: "strict" } })).runs).toEqual([]);
    await engine.close();
    expect((await store.getSchedule("held"))!.lastFiredAt).toBeNull();
    const resumed = await ops.schedules.resume("held");
    expect(resumed.paused).toBe(false);
    expect(resumed.nextAt).toBeGreaterThan(Date.now() - 1000);
    expect((await store.listRuns({ tags: { schedule: "held" } })).runs).toEqual([]);
  });

  it("skips a time whose input the latest version refuses, saying so as a warning, and goes on to the next", async () => {
    const { store, ops } = await storeWith(quick);
    await ops.schedules.create({ id: "strict-input", workflow: "digest", cron: "* * * * *", input: { count: 3 } });
    const narrower = workflow("digest", { state: z.object({ topic: z.string().default("x"), count: z.number().int().max(2).default(0), done: z.boolean().default(false) }) })
      .node("work", () => ({ done: true }), { next: "END" })
      .compile();
    await new Promise((resolve) => setTimeout(resolve, 5));
    await storeWorkflow(store, narrower);
    const at = Math.floor(Date.now() / MINUTE) * MINUTE - MINUTE;
    await dueAt(store, "strict-input", at);
    await workerOn(store, quick, narrower);
    const skip = await until(async () => (await store.getSchedule("strict-input"))!.lastSkip, 5_000, "the time to be skipped");
    expect(skip.reason).toBe("run input is invalid at $.count: must be at most 2, got 3");
    // The worker says so once it has written it.
    const notice = await until(() => harness.notices.of("schedule-fired")[0], 5_000, "the worker's notice");
    expect(notice).toMatchObject({ level: "warn", message: `schedule strict-input (digest) started no run for ${new Date(at).toISOString()}: run input is invalid at $.count: must be at most 2, got 3` });
  });

  it("a draining worker (worker --once) fires the due schedules and runs what they started before it returns", async () => {
    const { store, ops } = await storeWith(quick);
    await ops.schedules.create({ id: "once", workflow: "digest", cron: "@daily" });
    const due = await dueAt(store, "once", Date.now() - MINUTE);
    const engine = await harness.engine([quick], { store, worker: false });
    await new Worker(store, engine.registry, { pollMs: 50, onNotice: harness.notices.listen }).drain();
    expect((await store.getRun(scheduleRunId("once", due.nextAt!)))?.status).toBe("succeeded");
    expect(harness.notices.of("schedule-fired")).toHaveLength(1);
  });

  it("a trigger starts a run now and keeps the next time; a deleted schedule fires no more", async () => {
    const { store, ops } = await storeWith(quick);
    const made = await ops.schedules.create({ id: "manual", workflow: "digest", cron: "@yearly" });
    const fired = await ops.schedules.trigger("manual");
    expect(fired.runId).toMatch(/^manual-\d{8}T\d{6}(\.\d{3})?Z-[0-9a-z]{4}$/);
    const after = await ops.schedules.get("manual");
    expect(after).toMatchObject({ nextAt: made.nextAt, lastRunId: fired.runId, lastSkip: null });
    const [created] = await store.readEvents({ runId: fired.runId, types: ["run.created"] });
    expect(created!.actor).toBe("operator:ann");
    await ops.schedules.delete("manual");
    await expect(ops.schedules.get("manual")).rejects.toThrow("schedule manual not found");
    await expect(ops.schedules.delete("manual")).rejects.toThrow("schedule manual not found");
    expect(await store.getRun(fired.runId)).toBeDefined();
  });

  it("fires each time up to its jitter later, the run still named by the time; a jitter as long as the time between its times is refused", async () => {
    const { store, ops } = await storeWith(quick);
    const HOUR = 60 * MINUTE;
    await ops.schedules.create({ id: "spread", workflow: "digest", cron: "@daily", jitterSeconds: 23 * 3600 });
    expect(await ops.schedules.get("spread")).toMatchObject({ jitterSeconds: 23 * 3600 });
    const engine = await harness.engine([quick], { store, worker: false });
    const drain = () => new Worker(store, engine.registry, { pollMs: 50, onNotice: harness.notices.listen }).drain();
    // A time just passed whose delay (the same in every worker) reaches past the next minute has not fired yet.
    const now = await store.clock();
    let due = now - 1000;
    while (fireInstant({ id: "spread", jitterSeconds: 23 * 3600 }, due) < now + MINUTE) due -= 1000;
    await dueAt(store, "spread", due);
    await drain();
    expect(await store.getRun(scheduleRunId("spread", due))).toBeUndefined();
    expect((await ops.schedules.get("spread")).nextAt).toBe(due);
    // Due longer ago than the jitter reaches, it has fired, under the time's own id.
    const late = now - 23 * HOUR - MINUTE;
    await dueAt(store, "spread", late);
    await drain();
    expect((await store.getRun(scheduleRunId("spread", late)))?.status).toBe("succeeded");
    expect(await ops.schedules.update("spread", { jitterSeconds: 0 })).not.toHaveProperty("jitterSeconds");
    for (const [jitterSeconds, message] of [
      [24 * 3600, /^jitter of 86400 s is not shorter than the 86400 s between its times \d{4}-\d\d-\d\d 00:00 and \d{4}-\d\d-\d\d 00:00 \(UTC\): a time fired that late would pass the next one by$/],
      [-5, /^jitter -5: give a length of time of 0 or more$/],
    ] as const) {
      const error = await ops.schedules.update("spread", { jitterSeconds }).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(ValidationError);
      expect((error as Error).message).toMatch(message);
    }
  });

  it("a backfill's runs, paused unanswered, do not hold back the schedule's own times under overlap skip", async () => {
    const { store, ops } = await storeWith(asking);
    await ops.schedules.create({ id: "ask", workflow: "asking", cron: "0 3 * * *" });
    const [backfilled] = await ops.schedules.backfill("ask", { from: "2026-11-20", to: "2026-11-21" });
    expect((await store.getRun(backfilled!.runId))!.tags).toEqual({ schedule: "ask", backfill: "true" });
    const engine = await workerOn(store, asking);
    expect(await engine.run(backfilled!.runId).wait({ timeoutMs: 10_000 })).toMatchObject({ status: "paused", reason: "interrupt" });
    // The trigger keeps to the overlap rule: the backfilled run still asking is none of its business.
    const live = await ops.schedules.trigger("ask");
    expect(live.existed).toBe(false);
    await expect(ops.schedules.trigger("ask")).rejects.toThrow(new RegExp(`^run ${live.runId} it started has not ended`));
    await expect(ops.schedules.update("ask", { tags: { backfill: "x" } })).rejects.toThrow("tag backfill marks the runs a backfill starts: give another tag name");
  });

  it("backfills the past times that have no run, as a worker would have started them then; a dry run starts nothing; bad stretches are refused", async () => {
    const { store, ops } = await storeWith(quick);
    await ops.schedules.create({ id: "daily", workflow: "digest", cron: "0 3 * * *", timezone: "Europe/Berlin", input: { topic: "sport" } });
    const before = (await ops.schedules.get("daily"))!;
    const id = (day: number) => scheduleRunId("daily", Date.parse(`2026-11-${day}T02:00:00Z`));
    const outcomes = (times: { runId: string; outcome: string }[]) => times.map((t) => `${t.runId} ${t.outcome}`);
    // Read in the schedule's zone: 03:00 Berlin is 02:00Z; `to` is not included.
    const dry = await ops.schedules.backfill("daily", { from: "2026-11-20", to: "2026-11-23", dryRun: true });
    expect(outcomes(dry)).toEqual([`${id(20)} would start`, `${id(21)} would start`, `${id(22)} would start`]);
    expect(await store.getRun(id(20))).toBeUndefined();
    // A time that has its run keeps it: fired then, or backfilled before (here, an offset given).
    expect(outcomes(await ops.schedules.backfill("daily", { from: "2026-11-21T03:00+01:00", to: "2026-11-21T02:00:00.001Z" }))).toEqual([`${id(21)} started`]);
    // Another's run under a time's id fails that time alone.
    await startRun(store, quick, {}, { id: id(22), actor: "operator:bob" });
    const done = await ops.schedules.backfill("daily", { from: "2026-11-20", to: "2026-11-23" });
    expect(outcomes(done)).toEqual([`${id(20)} started`, `${id(21)} existed`, `${id(22)} failed`]);
    expect(done[2]).toMatchObject({ error: `run ${id(22)} exists and was not started by schedule daily (a run of digest)` });
    const run = (await store.getRun(id(20)))!;
    expect(run).toMatchObject({ status: "queued", tags: { schedule: "daily" } });
    const [created] = await store.readEvents({ runId: id(20), types: ["run.created"] });
    expect(created).toMatchObject({ actor: "operator:ann", payload: { schedule: "daily", scheduledFor: Date.parse("2026-11-20T02:00:00Z"), backfill: true } });
    // The schedule itself is as it was: its next time, its last run.
    expect(await ops.schedules.get("daily")).toEqual(before);

    const bad: [Parameters<typeof ops.schedules.backfill>[1], RegExp][] = [
      [{ from: "2026-11-23", to: "2026-11-20" }, /^backfill from 2026-11-23 00:00 Europe\/Berlin to 2026-11-20 00:00 Europe\/Berlin: give a from before the to$/],
      [{ from: "2026-11-20", to: Date.now() + 3_600_000 }, /^backfill to .* is later than now \(.*\): a backfill covers past times, the schedule fires the later ones itself$/],
      [{ from: "2020-01-01", to: "2026-11-20" }, /^backfill from .* holds more than 1000 times of 0 3 \* \* \*: backfill it in parts$/],
      [{ from: "2026-02-30", to: "2026-11-20" }, /^from "2026-02-30": 2026-02-30 is not a day of the calendar$/],
      [{ from: "2026-11-20", to: "last week" }, /^to "last week": give a date/],
      [{ from: "2026-11-20T03:00+99:99", to: "2026-11-21" }, /^from "2026-11-20T03:00\+99:99": give a date/],
    ];
    for (const [options, message] of bad) {
      const error = await ops.schedules.backfill("daily", options).catch((e: unknown) => e);
      expect(error, JSON.stringify(options)).toBeInstanceOf(ValidationError);
      expect((error as Error).message).toMatch(message);
    }
    await expect(ops.schedules.backfill("nope", { from: "2026-11-20", to: "2026-11-21" })).rejects.toThrow("schedule nope not found");
    expect((await store.listRuns({ tags: { schedule: "daily" } })).runs.map((r) => r.id).sort()).toEqual([id(20), id(21)]);
  });
});

describe("cron times", () => {
  const local = (at: number, timeZone: string) => new Intl.DateTimeFormat("sv-SE", { timeZone, dateStyle: "short", timeStyle: "short" }).format(at);

  it("reads the cron in the schedule's time zone, across the clocks' changes", () => {
    // Summer time starts in Berlin on 2026-03-29 at 02:00: 02:30 does not happen, and fires at 03:00.
    const spring = nextCronTime("30 2 * * *", "Europe/Berlin", Date.parse("2026-03-28T12:00:00Z"))!;
    expect(local(spring, "Europe/Berlin")).toBe("2026-03-29 03:00");
    expect(local(nextCronTime("30 2 * * *", "Europe/Berlin", spring)!, "Europe/Berlin")).toBe("2026-03-30 02:30");
    // It ends in New York on 2026-11-01 at 02:00: 01:30 happens twice, and fires once.
    const fall = nextCronTime("30 1 * * *", "America/New_York", Date.parse("2026-11-01T04:00:00Z"))!;
    expect(new Date(fall).toISOString()).toBe("2026-11-01T05:30:00.000Z");
    expect(new Date(nextCronTime("30 1 * * *", "America/New_York", fall)!).toISOString()).toBe("2026-11-02T06:30:00.000Z");
    expect(new Date(nextCronTime("@hourly", "UTC", Date.parse("2026-01-01T00:59:59.999Z"))!).toISOString()).toBe("2026-01-01T01:00:00.000Z");
    expect(nextCronTime("0 0 31 2 *", "UTC", Date.now())).toBeNull();
  });

  it("fires a night whose skipped hour holds several of its times once, after the gap, and each time of a repeated hour once", () => {
    const times = (cron: string, tz: string, from: string, n: number) => {
      const out: string[] = [];
      for (let t = Date.parse(from), i = 0; i < n; i++) out.push(local((t = nextCronTime(cron, tz, t)!), tz));
      return out;
    };
    expect(times("0,30 2 * * *", "Europe/Berlin", "2026-03-28T12:00:00Z", 3)).toEqual(["2026-03-29 03:00", "2026-03-30 02:00", "2026-03-30 02:30"]);
    expect(times("*/15 2 * * *", "Europe/Berlin", "2026-03-28T23:00:00Z", 2)).toEqual(["2026-03-29 03:00", "2026-03-30 02:00"]);
    expect(times("*/20 1 * * *", "America/New_York", "2026-11-01T04:00:00Z", 4)).toEqual(["2026-11-01 01:00", "2026-11-01 01:20", "2026-11-01 01:40", "2026-11-02 01:00"]);
    expect(times("0 9 * * MON-FRI", "Asia/Kolkata", "2026-12-04T00:00:00Z", 2)).toEqual(["2026-12-04 09:00", "2026-12-07 09:00"]);
    // Looked for from inside the repeated hour (a late worker, a jitter, a backfill from there), a
    // time whose first pass is behind is not taken again at its second.
    expect(new Date(nextCronTime("30 * * * *", "America/New_York", Date.parse("2026-11-01T06:14:00Z"))!).toISOString()).toBe("2026-11-01T07:30:00.000Z");
    expect(new Date(nextCronTime("30 2 * * *", "Europe/Berlin", Date.parse("2026-10-25T01:10:00Z"))!).toISOString()).toBe("2026-10-26T01:30:00.000Z");
  });
});
