import { afterEach, expect, it } from "vitest";
import { z } from "zod";
import { createEngine, MemoryStore, workflow, type CompiledWorkflow, type Engine } from "../../engine/index.js";
import { until } from "../support/engine.js";
import { closeAll, openConsole, type ConsoleHarness } from "./harness.js";

let ui: ConsoleHarness | undefined;
let engine: Engine | undefined;
afterEach(async () => ([ui, engine] = await closeAll(ui, engine)));

/** A run of `wf` on a fresh memory store with an in-process worker. */
async function started(wf: CompiledWorkflow) {
  const store = new MemoryStore();
  engine = createEngine({ store, workflows: [wf], worker: { pollMs: 20 } });
  return { store, run: await engine.start(wf) };
}

it("draws a node sleeping on a timer as parked, with when it wakes, and a skipped node as skipped, not as run", async () => {
  const wf = workflow("nap-then-skip", { state: z.object({ n: z.number().default(0) }), interruptBefore: ["review"] })
    .node("review", () => ({ n: 1 }), { next: "nap" })
    .wait("nap", { seconds: 600, next: "END" })
    .compile();
  const { store, run } = await started(wf);
  await run.wait();
  const [gate] = await store.listInterrupts({ runId: run.id, status: "pending" });
  await engine!.operator("ann").resolve(gate!.id, { decision: "skip" });
  await until(async () => (await run.get()).wakeAt !== null || undefined, 5_000, "the run parked on its timer");
  ui = await openConsole({ store, initial: { kind: "run", runId: run.id } });
  let frame = await ui.waitFor("◷ nap");
  expect(frame).toContain("↷ review");
  expect(frame).toMatch(/nap · step 2: sleeping until \d\d:\d\d:\d\d UTC/);
  await ui.press("k");
  frame = await ui.waitFor("review · step 1: skipped by an operator (it did not run)");
});

it("selects, at first, the node that holds the run up rather than a sibling that finished", async () => {
  const wf = workflow("sibling-naps", { state: z.object({ n: z.number().default(0) }) })
    .node("split", () => ({}), { next: ["left", "nap"] })
    .node("left", () => ({ n: 1 }), { next: "END" })
    .wait("nap", { seconds: 600, next: "END" })
    .compile();
  const { store, run } = await started(wf);
  await until(async () => (await run.get()).wakeAt !== null || undefined, 5_000, "the run parked on its timer");
  ui = await openConsole({ store, initial: { kind: "run", runId: run.id } });
  await ui.waitFor(/nap · step 2: sleeping until/);
});

it("draws a node whose catch took its failure as caught, with its edge, and says so when selected", async () => {
  const wf = workflow("caught-node", { state: z.object({ n: z.number().default(0) }) })
    .node("charge", () => {
      throw new Error("card declined");
    }, { next: "END", catch: { next: "refund" } })
    .wait("refund", { seconds: 600, next: "END" })
    .compile();
  const { store, run } = await started(wf);
  await until(async () => (await run.get()).wakeAt !== null || undefined, 5_000, "the run parked at refund");
  ui = await openConsole({ store, initial: { kind: "run", runId: run.id } });
  let frame = await ui.waitFor("↯ charge");
  expect(frame).toContain("catch");
  await ui.press("k");
  frame = await ui.waitFor("charge · step 1: failed; its catch took the failure and the run went on");
});
