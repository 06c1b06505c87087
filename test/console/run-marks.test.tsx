import { afterEach, expect, it } from "vitest";
import { z } from "zod";
import { createEngine, MemoryStore, workflow, type Engine } from "../../engine/index.js";
import { until } from "../support/engine.js";
import { closeAll, openConsole, type ConsoleHarness } from "./harness.js";

let ui: ConsoleHarness | undefined;
let engine: Engine | undefined;
afterEach(async () => ([ui, engine] = await closeAll(ui, engine)));

const state = z.object({ n: z.number().default(0) });

it("marks runs with m, cancels the marked ones with one reason, and retries the failed tasks of the marked ones", async () => {
  let failing = true;
  const waits = workflow("waits", { state }).wait("pay", { signal: "paid", next: "END" }).compile();
  const flaky = workflow("flaky", { state })
    .node("work", () => {
      if (failing) throw new Error("not yet");
      return { n: 1 };
    }, { next: "END" })
    .compile();
  const store = new MemoryStore();
  engine = createEngine({ store, workflows: [waits, flaky], worker: { pollMs: 20 } });
  const waiting = [await engine.start(waits), await engine.start(waits), await engine.start(waits)];
  const failed = [await engine.start(flaky), await engine.start(flaky)];
  for (const run of [...waiting, ...failed]) await until(async () => (await run.get()).status === "paused" || undefined, 10_000, "every run to pause");
  ui = await openConsole({ store, columns: 120 });
  await ui.waitFor("Runs 5");

  // Two of the waiting runs, by filter and mark.
  await ui.press("/");
  await ui.type("workflow:waits");
  await ui.press("enter");
  await ui.waitFor("Runs 3 of 5");
  await ui.press("m", "j", "m");
  await ui.waitFor("2 marked: C, R, a, r, !, U act on them");
  await ui.press("C");
  let frame = await ui.waitFor("Cancel 2 runs?");
  expect(frame.match(/waits paused \(signal\)/g)?.length).toBe(2);
  await ui.type("campaign over");
  await ui.press("enter", "enter");
  await ui.waitFor("canceled 2 runs");
  const statuses = await Promise.all(waiting.map(async (r) => (await r.get()).status));
  expect(statuses.filter((s) => s === "canceled").length).toBe(2);
  expect(statuses.filter((s) => s === "paused").length).toBe(1);
  const canceled = waiting.find((_r, i) => statuses[i] === "canceled")!;
  expect((await store.listCommands({ runId: canceled.id })).map((c) => [c.type, c.reason])).toEqual([["cancel", "campaign over"]]);
  await ui.waitFor((f) => !f.includes("marked: C, R"));

  // Every failed run, marked with *, retried at once; a run with nothing failed is left, saying why.
  await ui.press("/", "ctrl-u");
  await ui.type("workflow:flaky");
  await ui.press("enter");
  await ui.waitFor("Runs 2 of 5");
  await ui.press("*");
  await ui.waitFor("2 marked");
  failing = false;
  await ui.press("R");
  frame = await ui.waitFor("Retry the failed tasks of 2 runs?");
  await ui.press("tab", "enter");
  await ui.waitFor("retried the failed tasks of 2 runs");
  for (const run of failed) expect((await run.wait({ until: "end", timeoutMs: 10_000 })).status).toBe("succeeded");
});
