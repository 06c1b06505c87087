import { afterEach, expect, it } from "vitest";
import { z } from "zod";
import { MemoryStore, createEngine, workflow, type Engine } from "../../engine/index.js";
import { closeAll, openConsole, type ConsoleHarness } from "./harness.js";

let engine: Engine | undefined;
let ui: ConsoleHarness | undefined;
afterEach(async () => ([ui, engine] = await closeAll(ui, engine)));

it("the operator panel says what an interrupt's deadline will answer, and when", async () => {
  const wf = workflow("review-by-deadline", { state: z.object({ done: z.boolean().default(false) }) })
    .approval("review", { question: "Ship it?", deadline: { seconds: 7_200, decision: "reject" }, routes: { approve: "ship", reject: "END" } })
    .node("ship", () => ({ done: true }), { next: "END" })
    .compile();
  const store = new MemoryStore();
  engine = createEngine({ store, workflows: [wf], worker: { pollMs: 50 } });
  await (await engine.start(wf)).wait();
  ui = await openConsole({ store, columns: 100 });
  await ui.waitFor("⚑ 1 pending");
  await ui.press("i");
  await ui.waitFor("1 pending, oldest first");
  await ui.press("enter");
  const frame = await ui.waitFor("Ship it?");
  expect(frame).toMatch(/⏱ deadline: reject in 1h59m/);
});
