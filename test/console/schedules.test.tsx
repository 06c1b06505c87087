import { afterEach, expect, it } from "vitest";
import { fixture, settle, type Fixture } from "./fixtures.js";
import { closeAll, openConsole, type ConsoleHarness } from "./harness.js";
import { SPAN } from "../support/span.js";

let fx: Fixture | undefined;
let ui: ConsoleHarness | undefined;
afterEach(async () => ([ui, fx] = await closeAll(ui, fx)));

it("c lists the schedules as schedule list does, read-only too; enter opens a schedule's last run", async () => {
  fx = fixture();
  await settle(fx.engine, "travel-planner");
  const schedules = fx.engine.operator("ann").schedules;
  await schedules.create({ id: "nightly", workflow: "travel-planner", cron: "0 3 * * *", timezone: "Europe/Berlin" });
  await schedules.create({ id: "hourly", workflow: "travel-planner", cron: "@hourly", paused: true });
  const { runId } = await schedules.trigger("nightly");
  ui = await openConsole({ store: fx.store, readOnly: true, columns: 140, rows: 20 });
  await ui.waitFor("NOW");
  await ui.press("c");
  const frame = await ui.waitFor("2 · fired by the workers");
  const lines = frame.split("\n");
  expect(lines.find((l) => l.includes(" ID ") && l.includes("NEXT"))).toMatch(/ID +WORKFLOW +CRON +TZ +NEXT +LAST RUN +STATE/);
  expect(lines.find((l) => l.includes("hourly"))).toMatch(/hourly +travel-planner +@hourly +UTC +\d{4}-\d\d-\d\d \d\d:00 \(paused\) +- +paused/);
  expect(lines.find((l) => l.includes("nightly"))).toMatch(new RegExp(`nightly +travel-planner +0 3 \\* \\* \\* +Europe/Berlin +\\d{4}-\\d\\d-\\d\\d 03:00 \\(in ${SPAN}\\) +${runId} +active`));
  // The first row (by id) has started no run: enter says so; on the second it opens the run.
  await ui.press("enter");
  await ui.waitFor("schedule hourly has started no run yet");
  await ui.press("j", "enter");
  await ui.waitFor((f) => f.includes(runId) && f.includes("Graph"));
  await ui.press("esc");
  await ui.waitFor("fired by the workers");
  await ui.press("y");
  expect(ui.copied).toEqual(["nightly"]);
});

it("p pauses and resumes the selected schedule, t starts a run of it now after asking", async () => {
  fx = fixture();
  await settle(fx.engine, "travel-planner");
  const schedules = fx.engine.operator("ann").schedules;
  await schedules.create({ id: "nightly", workflow: "travel-planner", cron: "0 3 * * *", timezone: "Europe/Berlin", overlap: "allow" });
  ui = await openConsole({ store: fx.store, columns: 140, rows: 20 });
  await ui.waitFor("NOW");
  await ui.press("c");
  await ui.waitFor("1 · fired by the workers");
  await ui.press("p");
  await ui.waitFor("schedule nightly paused: it fires nothing until resumed");
  expect((await fx.store.getSchedule("nightly"))!.paused).toBe(true);
  await ui.waitFor(/nightly .* paused$/m);
  await ui.press("p");
  await ui.waitFor(/schedule nightly resumed: next \d{4}-\d\d-\d\d 03:00/);
  expect((await fx.store.getSchedule("nightly"))!.paused).toBe(false);
  await ui.press("t");
  await ui.waitFor("Start a run of schedule nightly now?");
  await ui.press("tab", "enter");
  const frame = await ui.waitFor(/schedule nightly started run (nightly-\S+)/);
  const runId = /schedule nightly started run (nightly-\S+) /.exec(frame)![1]!;
  expect((await fx.store.getRun(runId))?.tags).toMatchObject({ schedule: "nightly" });
});

it("the selected schedule's last changes show under the list, newest first, with who made them and why", async () => {
  fx = fixture();
  await settle(fx.engine, "travel-planner");
  const schedules = fx.engine.operator("ann").schedules;
  await schedules.create({ id: "nightly", workflow: "travel-planner", cron: "0 3 * * *", timezone: "Europe/Berlin" });
  await schedules.create({ id: "quiet", workflow: "travel-planner", cron: "@hourly" });
  await fx.engine.operator("bob").schedules.pause("nightly", { reason: "maintenance window" });
  ui = await openConsole({ store: fx.store, readOnly: true, columns: 140, rows: 20 });
  await ui.waitFor("NOW");
  await ui.press("c");
  const frame = await ui.waitFor("changes of nightly, newest first");
  const lines = frame.split("\n");
  const heading = lines.findIndex((l) => l.includes("changes of nightly"));
  expect(lines[heading + 1]).toMatch(/\d{4}-\d\d-\d\d \d\d:\d\d(:\d\d)? by operator:bob: paused \("maintenance window"\)/);
  expect(lines[heading + 2]).toMatch(/by operator:ann: created/);
  // The list's rows stay above the changes.
  expect(lines.findIndex((l) => / quiet +travel-planner/.test(l))).toBeLessThan(heading);
  await ui.press("j");
  await ui.waitFor("changes of quiet, newest first");
});
