import { existsSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { TERMINAL_RUN_STATUSES, openStore, type ScheduleRecord, type Store } from "../../engine/index.js";
import { cliHarness, type Pitwall } from "../support/cli.js";
import { until } from "../support/engine.js";
import { RedisServer } from "../support/redis-server.js";
import { SPAN } from "../support/span.js";

/** A workflow of one node, with its actions module, in `dir`. */
function echoWorkflow(dir: string): { workflow: string; actions: string } {
  const actions = join(dir, "echo-actions.mjs");
  const workflow = join(dir, "echo.json");
  writeFileSync(actions, "export default { echo: (state) => ({ said: 'hi ' + state.who }) };\n");
  writeFileSync(workflow, JSON.stringify({ name: "echo", state: { who: { type: "string", default: "you" }, said: { type: "string", default: "" } }, start: "echo", nodes: { echo: { action: "echo" } } }));
  return { workflow, actions };
}

/** The `schedule-fired` lines of workers' `--json` logs that say a run was started (or found made) for a time. */
function firedLines(workers: readonly Pitwall[]): { worker: string; runId: string }[] {
  return workers.flatMap((w) =>
    w.stdout
      .split("\n")
      .filter((line) => line.startsWith("{"))
      .map((line) => JSON.parse(line) as { kind: string; worker: string; runId?: string })
      .filter((entry) => entry.kind === "schedule-fired" && entry.runId !== undefined)
      .map((entry) => ({ worker: entry.worker, runId: entry.runId! })),
  );
}

describe("pitwall schedule", () => {
  const cli = cliHarness();

  it("adds, lists, shows, triggers, pauses, resumes and removes schedules; a bad one is one line, exit 2, and writes nothing", async () => {
    const echo = echoWorkflow(cli.dir);
    const bad: [string[], string][] = [
      [["--cron", "61 * * * *"], 'cron "61 * * * *": invalid value for minute: 61'],
      [["--cron", "0 3 * *"], 'cron "0 3 * *": give five fields (minute hour day-of-month month day-of-week), not 4'],
      [["--cron", "@daily", "--timezone", "Europe/Berln"], 'timezone "Europe/Berln" is not an IANA time zone (did you mean "Europe/Berlin"?) (e.g. UTC, Europe/Berlin, America/New_York)'],
      [["--cron", "@daily", "--input", '{"whom":"x"}'], 'run input is invalid at $: unknown key whom (did you mean "who"?)'],
      [["--cron", "@daily", "--overlap", "never"], 'overlap "never": give skip (the default: no run while the last has not ended) or allow'],
    ];
    for (const [flags, message] of bad) {
      const r = await cli.run(["schedule", "add", "nightly", echo.workflow, ...flags]);
      expect([r.code, r.stderr]).toEqual([2, `pitwall schedule: ${message}\n`]);
    }
    // Refused before the store is made: nothing was written, not even a store file.
    expect(existsSync(join(cli.dir, "pitwall.db"))).toBe(false);

    const added = await cli.run(["schedule", "add", "nightly", echo.workflow, "--cron", "0 3 * * *", "--timezone", "Europe/Berlin", "--input", '{"who":"ann"}', "--tag", "team=ops"]);
    expect(added.code, added.stderr).toBe(0);
    // The file given is the version it starts; --version latest unpins it, the start of a version pins one again.
    expect(added.stdout).toMatch(new RegExp(String.raw`^schedule {2}nightly\nworkflow {2}echo \(version \w+\)\ncron {6}0 3 \* \* \* \(Europe\/Berlin\)\nnext {6}\d{4}-\d\d-\d\d 03:00 \(in ${SPAN}\)\n`));
    const pinned = (await cli.json<ScheduleRecord>(["schedule", "show", "nightly"])).version!;
    expect((await cli.run(["schedule", "update", "nightly", "--version", "latest"])).stdout).toContain("workflow  echo (its latest stored version)");
    expect((await cli.run(["schedule", "update", "nightly", "--version", pinned.slice(0, 8)])).stdout).toContain(`workflow  echo (version ${pinned})`);
    const wrong = await cli.run(["schedule", "update", "nightly", "--version", "zzzz"]);
    expect([wrong.code, wrong.stderr]).toEqual([2, `pitwall schedule: workflow echo: no stored version of it starts with zzzz (stored: ${pinned.slice(0, 8)})\n`]);
    // By name, the workflow must be stored; an unknown one is refused.
    const unknown = await cli.run(["schedule", "add", "hourly", "ehco", "--cron", "@hourly"]);
    expect([unknown.code, unknown.stderr]).toEqual([2, "pitwall schedule: workflow ehco: no version of it is stored (pitwall start FILE stores one, or give the file)\n"]);
    const twice = await cli.run(["schedule", "add", "nightly", "echo", "--cron", "@hourly"]);
    expect([twice.code, twice.stderr]).toEqual([3, "pitwall schedule: schedule nightly already exists (remove it first, or update it)\n"]);
    expect((await cli.run(["schedule", "add", "hourly", "echo", "--cron", "@hourly", "--overlap", "allow"])).code).toBe(0);

    const listed = await cli.run(["schedule", "list"]);
    const lines = listed.stdout.trimEnd().split("\n");
    expect(lines[0]).toMatch(/^ID +WORKFLOW +CRON +TZ +NEXT +LAST RUN +STATE$/);
    expect(lines[1]).toMatch(new RegExp(String.raw`^hourly +echo +@hourly +UTC +\d{4}-\d\d-\d\d \d\d:00 \(in ${SPAN}\) +- +active$`));
    expect(lines[2]).toMatch(new RegExp(String.raw`^nightly +echo@\w{8} +0 3 \* \* \* +Europe\/Berlin +\d{4}-\d\d-\d\d 03:00 \(in ${SPAN}\) +- +active$`));

    const fired = await cli.json<{ runId: string; existed: boolean }>(["schedule", "trigger", "nightly"]);
    expect(fired).toEqual({ runId: expect.stringMatching(/^nightly-\d{8}T\d{6}(\.\d{3})?Z-[0-9a-z]{4}$/) as unknown, existed: false });
    // The run waits for a worker: a second trigger keeps to overlap skip (exit 3), unless forced.
    const again = await cli.run(["schedule", "trigger", "nightly"]);
    expect([again.code, again.stderr]).toEqual([3, `pitwall schedule: run ${fired.runId} it started has not ended (queued): overlap is skip\n`]);
    const show = await cli.json<ScheduleRecord>(["schedule", "show", "nightly"]);
    expect(show).toMatchObject({ id: "nightly", workflow: "echo", timezone: "Europe/Berlin", input: { who: "ann" }, tags: { team: "ops" }, lastRunId: fired.runId, paused: false });
    expect((await cli.run(["events", fired.runId])).stdout).toMatch(/run\.created +operator:\S+ +echo \(version \w+\) by schedule nightly for \d{4}-\d\d-\d\dT[\d:.]+Z\n/);
    const runs = await cli.json<{ id: string; tags: Record<string, string> }[]>(["runs", "--tag", "schedule=nightly"]);
    expect(runs.map((r) => [r.id, r.tags])).toEqual([[fired.runId, { team: "ops", schedule: "nightly" }]]);

    const paused = await cli.json<ScheduleRecord>(["schedule", "pause", "nightly", "--reason", "holiday freeze"]);
    expect([paused.paused, paused.updatedBy, paused.updateReason]).toEqual([true, expect.stringMatching(/^operator:/), "holiday freeze"]);
    expect((await cli.run(["schedule", "show", "nightly"])).stdout).toMatch(/^changed +\d{4}-\d\d-\d\d \d\d:\d\d(:\d\d)? by operator:\S+: holiday freeze$/m);
    expect((await cli.run(["schedule", "list"])).stdout).toMatch(/nightly .* 03:00 \(paused\) +nightly-\S+ +paused\n/);
    const resumed = await cli.json<ScheduleRecord>(["schedule", "resume", "nightly"]);
    expect([resumed.paused, resumed.updateReason]).toEqual([false, undefined]);
    const updated = await cli.json<ScheduleRecord>(["schedule", "update", "nightly", "--cron", "30 4 * * *"]);
    // The next 04:30 in Berlin: within a day from now (before or after the next 03:00, by the time of day).
    const berlin = new Intl.DateTimeFormat("en-GB", { timeZone: "Europe/Berlin", hour: "2-digit", minute: "2-digit" });
    expect(berlin.format(updated.nextAt!)).toBe("04:30");
    expect(updated.nextAt! - Date.now()).toBeGreaterThan(0);
    expect(updated.nextAt! - Date.now()).toBeLessThanOrEqual(25 * 3600_000);
    const badUpdate = await cli.run(["schedule", "update", "nightly", "--timezone", "Mars/Base"]);
    expect(badUpdate.code).toBe(2);
    expect((await cli.json<ScheduleRecord>(["schedule", "show", "nightly"])).timezone).toBe("Europe/Berlin");
    // Its history, newest first: who paused it and why; the refused update is not in it.
    const history = (await cli.run(["schedule", "show", "nightly"])).stdout;
    expect(history).toMatch(
      /\nhistory +\S+ \S+ by operator:\S+: cron 0 3 \* \* \* → 30 4 \* \* \*\n +\S+ \S+ by operator:\S+: resumed\n +\S+ \S+ by operator:\S+: paused \("holiday freeze"\)\n/,
    );

    expect(await cli.json(["schedule", "remove", "hourly"])).toEqual({ removed: "hourly" });
    const gone = await cli.run(["schedule", "remove", "hourly"]);
    expect([gone.code, gone.stderr]).toEqual([2, "pitwall schedule: schedule hourly not found\n"]);
    const usage = await cli.run(["schedule", "start", "x"]);
    expect([usage.code, usage.stderr]).toEqual([2, "pitwall schedule: schedule start: give one of add, update, list, show, pause, resume, remove, trigger, backfill\n"]);
    const stray = await cli.run(["schedule", "pause", "nightly", "--cron", "@daily"]);
    expect([stray.code, stray.stderr]).toEqual([2, "pitwall schedule: --cron does not go with schedule pause\n"]);
  });

  it("sets a jitter; backfills past times: lists them without --yes, starts the missing ones with it, exit 3 when a time failed", async () => {
    const echo = echoWorkflow(cli.dir);
    expect((await cli.run(["schedule", "add", "daily", echo.workflow, "--cron", "0 3 * * *", "--timezone", "Europe/Berlin"])).code).toBe(0);
    const jittered = await cli.run(["schedule", "update", "daily", "--jitter", "90s"]);
    expect(jittered.stdout).toContain("\njitter    up to 90s (each time fires that much later at most)\n");
    expect(jittered.stdout).toMatch(/\nnext {6}\d{4}-\d\d-\d\d 03:00 \(in [^;)]+; fires 03:0[01](:\d\d)?\)\n/);
    const tooLong = await cli.run(["schedule", "update", "daily", "--jitter", "1d"]);
    expect([tooLong.code, tooLong.stderr]).toEqual([2, expect.stringMatching(/^pitwall schedule: jitter of 86400 s is not shorter than the 86400 s between its times .* \(Europe\/Berlin\): a time fired that late would pass the next one by\n$/)]);
    const stretch = ["--from", "2026-11-20", "--to", "2026-11-22"];
    const dry = await cli.run(["schedule", "backfill", "daily", ...stretch]);
    expect([dry.code, dry.stdout, dry.stderr]).toEqual([
      0,
      "TIME              RUN                     OUTCOME\n2026-11-20 03:00  daily-20261120T020000Z  would start\n2026-11-21 03:00  daily-20261121T020000Z  would start\n",
      "would start 2 runs (0 times had theirs already): nothing started; give --yes to start them\n",
    ]);
    expect((await cli.run(["runs", "--tag", "schedule=daily"])).stdout).not.toContain("daily-");
    expect((await cli.run(["start", echo.workflow, "--id", "daily-20261121T020000Z"])).code).toBe(0);
    const done = await cli.run(["schedule", "backfill", "daily", ...stretch, "--yes"]);
    expect([done.code, done.stderr]).toEqual([3, "started 1 run; 0 times had theirs already; 1 failed\n"]);
    expect(done.stdout).toContain("daily-20261121T020000Z  failed: run daily-20261121T020000Z exists and was not started by schedule daily (a run of echo)\n");
    const again = await cli.json<{ runId: string; outcome: string }[]>(["schedule", "backfill", "daily", "--from", "2026-11-20", "--to", "2026-11-21", "--yes"]);
    expect(again).toEqual([{ at: Date.parse("2026-11-20T02:00:00Z"), time: "2026-11-20T02:00:00.000Z", runId: "daily-20261120T020000Z", outcome: "existed" }]);
    // show: the times after the next, and the runs it started (not the one started by hand under a time's id).
    const shown = (await cli.run(["schedule", "show", "daily"])).stdout;
    expect(shown).toMatch(/\nthen {6}\d{4}-\d\d-\d\d 03:00, \d{4}-\d\d-\d\d 03:00, \d{4}-\d\d-\d\d 03:00\nruns {6}daily-20261120T020000Z {2}queued\nhistory {3}\S+ \S+ by operator:\S+: jitter 0s → 90s\n {10}\S+ \S+ by operator:\S+: created\n$/);
    const missing = await cli.run(["schedule", "backfill", "daily", "--from", "2026-11-20"]);
    expect([missing.code, missing.stderr]).toEqual([2, "pitwall schedule: schedule backfill needs --from TIME and --to TIME (2026-11-20, 2026-11-20T03:00, in the schedule's time zone)\n"]);
    const future = await cli.run(["schedule", "backfill", "daily", "--from", "2026-11-20", "--to", "2099-01-01"]);
    expect([future.code, future.stderr]).toMatchObject([2, expect.stringMatching(/^pitwall schedule: backfill to 2099-01-01 00:00 Europe\/Berlin is later than now \(.*\): a backfill covers past times, the schedule fires the later ones itself\n$/)]);
  });
});

/**
 * Two `pitwall worker` processes on one store fire each due time once: a dozen schedules, half
 * due already (missed while no worker ran), half due a moment after the workers start (their
 * timers). Each time makes one run, and one worker logs it.
 */
async function twoWorkersFireEachTimeOnce(cli: ReturnType<typeof cliHarness>, url: string, storeFlags: string[]): Promise<void> {
  const echo = echoWorkflow(cli.dir);
  const ids = Array.from({ length: 12 }, (_, i) => `s${i}`);
  for (const id of ids) {
    const r = await cli.run(["schedule", "add", id, echo.workflow, "--cron", "0 0 1 1 *", "--input", `{"who":"${id}"}`, ...storeFlags]);
    expect(r.code, r.stderr).toBe(0);
  }
  const store: Store = await openStore(url);
  try {
    const now = await store.clock();
    for (const [i, id] of ids.entries()) {
      const s = (await store.getSchedule(id))!;
      await store.putSchedule({ ...s, nextAt: i % 2 === 0 ? now - 3_600_000 + i : now + 4_000 + i }, s.revision);
    }
    const workers = [1, 2].map((n) => cli.spawn(["worker", "--id", `w${n}`, "--json", "--actions", echo.actions, ...storeFlags]));
    const done = await until(
      async () => {
        const all = await store.listSchedules();
        if (!all.every((s) => s.lastRunId !== null)) return undefined;
        const runs = await Promise.all(all.map((s) => store.getRun(s.lastRunId!)));
        return runs.every((r) => r && TERMINAL_RUN_STATUSES.includes(r.status)) ? all : undefined;
      },
      30_000,
      "every schedule's run to end",
    );
    for (const s of done) {
      const { runs } = await store.listRuns({ tags: { schedule: s.id } });
      expect(runs.map((r) => [r.id, r.status]), s.id).toEqual([[s.lastRunId, "succeeded"]]);
      expect(s.nextAt).toBe(Date.UTC(new Date().getUTCFullYear() + 1, 0, 1));
    }
    // Stopped, they have logged all they will: one line per time, from one worker or the other.
    for (const w of workers) w.child.kill("SIGTERM");
    const ends = await Promise.all(workers.map((w) => w.exited));
    expect(ends.map((e) => e.code)).toEqual([0, 0]);
    expect(firedLines(workers).map((f) => f.runId).sort()).toEqual(done.map((s) => s.lastRunId).sort());
  } finally {
    await store.close();
  }
}

describe("schedules fired by several worker processes", () => {
  const cli = cliHarness();
  const redis = new RedisServer();
  beforeAll(() => redis.start());
  afterAll(() => redis.dispose());

  it("two workers on one SQLite file start each due time's run once", async () => {
    await twoWorkersFireEachTimeOnce(cli, `sqlite:${join(cli.dir, "pitwall.db")}`, []);
  });

  it("two workers on one Redis start each due time's run once", async () => {
    const url = `${redis.url}/0?prefix=sched:`;
    await twoWorkersFireEachTimeOnce(cli, url, ["--store", url]);
  });
});
