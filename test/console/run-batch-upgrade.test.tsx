import { afterEach, expect, it } from "vitest";
import { z } from "zod";
import { createEngine, MemoryStore, storeWorkflow, workflow, type Engine, type RunHandle } from "../../engine/index.js";
import { until } from "../support/engine.js";
import { closeAll, openConsole, type ConsoleHarness } from "./harness.js";

let ui: ConsoleHarness | undefined;
let engine: Engine | undefined;
afterEach(async () => ([ui, engine] = await closeAll(ui, engine)));

const state = z.object({ shipped: z.boolean().optional(), payment: z.unknown().optional() });

const review = (question: string) =>
  workflow("review", { state })
    .approval("ok", { question, routes: { approve: "ship", reject: "END" } })
    .node("ship", () => ({ shipped: true }), { next: "END" })
    .compile();
const checkout = workflow("checkout", { state }).wait("pay", { signal: "paid", output: "payment", next: "END" }).compile();

const first = review("Ship it?");
/** A fix of the question. */
const fixed = review("Ship it now?");

/**
 * Runs of `reviews` reviews and `checkouts` checkouts paused, then the fixed review stored as a
 * deployment would store it: the paused reviews are on the version before.
 */
async function pausedThenFixed(reviews: number, checkouts: number): Promise<{ store: MemoryStore; runs: RunHandle[] }> {
  const store = new MemoryStore();
  engine = createEngine({ store, workflows: [first, checkout], worker: { pollMs: 20 } });
  const runs: RunHandle[] = [];
  for (let i = 0; i < reviews; i++) runs.push(await engine.start(first));
  for (let i = 0; i < checkouts; i++) runs.push(await engine.start(checkout));
  for (const run of runs) await until(async () => (await run.get()).status === "paused" || undefined, 10_000, "every run to pause");
  await storeWorkflow(store, fixed);
  return { store, runs };
}

it("U moves the marked runs onto the newest stored version of their workflow, leaving those on it already, and saying so", async () => {
  const { store, runs } = await pausedThenFixed(2, 1);
  ui = await openConsole({ store, columns: 120 });
  await ui.waitFor("Runs 3");
  await ui.press("*");
  await ui.waitFor("3 marked: C, R, a, r, !, U act on them");
  await ui.press("U");
  const frame = await ui.waitFor("Upgrade 2 runs?");
  expect(frame.match(new RegExp(`review moves from version ${first.version.slice(0, 12)} to ${fixed.version.slice(0, 12)}`, "g"))?.length).toBe(2);
  expect(frame).toContain(`${runs[2]!.id} checkout left: it is on version ${checkout.version.slice(0, 12)} already`);
  await ui.press("tab", "enter");
  await ui.waitFor("upgraded 2 runs");
  for (const run of runs.slice(0, 2)) expect((await run.get()).version).toBe(fixed.version);
  expect((await runs[2]!.get()).version).toBe(checkout.version);
  // Asked again, every run is on its newest version: nothing to do, nothing sent.
  await ui.press("*");
  await ui.waitFor((f) => !f.includes("marked:"));
  await ui.press("*");
  await ui.waitFor("3 marked");
  await ui.press("U");
  await ui.waitFor("nothing to upgrade: none of the 3 runs (it is on version");
});

it("U in a run's view moves that run, as the runs list's U on it", async () => {
  const { store, runs: [run] } = await pausedThenFixed(1, 0);
  ui = await openConsole({ store, columns: 120 });
  await ui.waitFor("Runs 1");
  await ui.press("enter");
  await ui.waitFor("1 Graph   2 Events");
  await ui.press("U");
  const frame = await ui.waitFor("Upgrade 1 run?");
  expect(frame).toContain(`review moves from version ${first.version.slice(0, 12)} to ${fixed.version.slice(0, 12)}`);
  await ui.press("tab", "enter");
  await ui.waitFor("upgraded 1 run");
  expect((await run!.get()).version).toBe(fixed.version);
});
