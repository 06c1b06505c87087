import { afterEach, expect, it } from "vitest";
import { z } from "zod";
import { createEngine, MemoryStore, workflow, type Engine, type RunHandle } from "../../engine/index.js";
import { ended, until } from "../support/engine.js";
import { closeAll, openConsole, type ConsoleHarness } from "./harness.js";

let ui: ConsoleHarness | undefined;
let engine: Engine | undefined;
afterEach(async () => ([ui, engine] = await closeAll(ui, engine)));

const state = z.object({ shipped: z.boolean().optional(), payment: z.unknown().optional() });

/** Asks a person before shipping: approve ships, reject ends without. */
const review = workflow("review", { state })
  .approval("ok", { question: "Ship it?", routes: { approve: "ship", reject: "END" } })
  .node("ship", () => ({ shipped: true }), { next: "END" })
  .compile();
/** Waits for the payment provider's signal. */
const checkout = workflow("checkout", { state }).wait("pay", { signal: "paid", output: "payment", next: "END" }).compile();

async function pausedRuns(counts: { review: number; checkout: number }): Promise<{ store: MemoryStore; reviews: RunHandle[]; checkouts: RunHandle[] }> {
  const store = new MemoryStore();
  engine = createEngine({ store, workflows: [review, checkout], worker: { pollMs: 20 } });
  const reviews: RunHandle[] = [];
  const checkouts: RunHandle[] = [];
  for (let i = 0; i < counts.review; i++) reviews.push(await engine.start(review));
  for (let i = 0; i < counts.checkout; i++) checkouts.push(await engine.start(checkout));
  for (const run of [...reviews, ...checkouts]) await until(async () => (await run.get()).status === "paused" || undefined, 10_000, "every run to pause");
  return { store, reviews, checkouts };
}

/** The runs list filtered to `text` (the filter typed before cleared), once it shows `shows`. */
async function filterTo(ui: ConsoleHarness, text: string, shows: string): Promise<void> {
  await ui.press("/", "ctrl-u");
  await ui.type(text);
  await ui.press("enter");
  await ui.waitFor(shows);
}

/** `!` on the runs list, the name offered (paid) taken, then `data` typed, each with enter. */
async function signalPaid(ui: ConsoleHarness, data: string): Promise<void> {
  await ui.press("!");
  await ui.waitFor("Signal name: paid█");
  await ui.press("enter");
  await ui.waitFor("paid data (JSON):");
  await ui.type(data);
  await ui.press("enter");
}

it("approves the pending interrupts of every marked run, leaving (and saying why) a run with none, then rejects the selected run's with a reason", async () => {
  const { store, reviews, checkouts } = await pausedRuns({ review: 3, checkout: 1 });
  ui = await openConsole({ store, columns: 120 });
  await ui.waitFor("Runs 4");

  // Two reviews and the checkout, marked one by one.
  await filterTo(ui, "workflow:review", "Runs 3 of 4");
  await ui.press("m", "j", "m");
  await filterTo(ui, "workflow:checkout", "Runs 1 of 4");
  await ui.press("m");
  await ui.waitFor("3 marked (2 not shown): C, R, a, r, !, U act on them");
  await ui.press("a");
  const frame = await ui.waitFor("Approve the pending interrupts of 2 runs?");
  expect(frame.match(/review approves ok: Ship it\?/g)?.length).toBe(2);
  expect(frame).toContain(`${checkouts[0]!.id} checkout left: no interrupt of it is pending`);
  expect(frame).toMatch(/\[Cancel\]\s+Approve 2 runs/);
  await ui.press("tab", "enter");
  await ui.waitFor("approved the pending interrupts of 2 runs");
  const approved = await until(async () => {
    const states = await Promise.all(reviews.map(async (r) => (await r.get()).status));
    return states.filter((s) => s === "succeeded").length === 2 ? reviews.filter((_r, i) => states[i] === "succeeded") : undefined;
  }, 10_000, "two reviews to end");
  for (const run of approved) expect(await engine!.run(run.id).state()).toEqual({ shipped: true });
  // The runs sent to drop their marks; the one left keeps its own.
  await ui.waitFor("1 marked: C, R, a, r, !, U act on them");

  // With its mark cleared, nothing marked: r rejects the selected run (the review still paused), a reason required.
  await ui.press("*");
  await ui.waitFor((f) => !f.includes("marked:"));
  await filterTo(ui, "status:paused workflow:review", "Runs 1 of 4");
  const left = reviews.find((r) => !approved.includes(r))!;
  await ui.press("r");
  await ui.waitFor("Reject the pending interrupts of 1 run?");
  await ui.type("wrong address");
  await ui.press("enter", "enter");
  await ui.waitFor("rejected the pending interrupts of 1 run");
  expect((await ended(engine!, left.id)).status).toBe("succeeded");
  expect(await engine!.run(left.id).state()).toEqual({});
  const [answer] = await store.listInterrupts({ runId: left.id });
  expect(answer!.resolution).toMatchObject({ decision: "reject", reason: "wrong address", actor: "operator:tester" });

  // A run with nothing to approve: the footer says why, no dialog.
  await filterTo(ui, "workflow:checkout", "Runs 1 of 4");
  await ui.press("a");
  await ui.waitFor("nothing to approve: no interrupt of it is pending");
});

it("signals every marked run with JSON data: bad JSON is asked again to mend, nothing sent meanwhile; an ended run is left", async () => {
  const { store, checkouts, reviews } = await pausedRuns({ review: 1, checkout: 2 });
  await engine!.operator("ann").cancel(reviews[0]!.id, { reason: "not needed" });
  await until(async () => (await reviews[0]!.get()).status === "canceled" || undefined, 10_000, "the review to end");
  ui = await openConsole({ store, columns: 120 });
  await ui.waitFor("Runs 3");
  await ui.press("*");
  await ui.waitFor("3 marked");

  await signalPaid(ui, '{"amount": 4');
  expect(ui.frames().some((f) => f.includes("Signal name: paid█") && f.includes("2 of the 3 runs wait for paid"))).toBe(true);
  await ui.waitFor("not JSON (line 1, column");
  expect(ui.frame()).toContain('paid data (JSON): {"amount": 4█');
  for (const run of checkouts) expect(await store.listCommands({ runId: run.id })).toEqual([]);

  await ui.type("2}");
  await ui.press("enter");
  const frame = await ui.waitFor("Send signal paid to 2 runs?");
  expect(frame).toContain('Data: {"amount":42}');
  expect(frame.match(/checkout pay waits for it and goes on with it/g)?.length).toBe(2);
  expect(frame).toContain(`${reviews[0]!.id} review left: it has ended (canceled)`);
  await ui.type("webhook replay");
  await ui.press("enter", "enter");
  await ui.waitFor("signaled 2 runs");
  for (const run of checkouts) {
    expect((await ended(engine!, run.id)).status).toBe("succeeded");
    expect(await engine!.run(run.id).state()).toEqual({ payment: { amount: 42 } });
    expect(await store.listCommands({ runId: run.id })).toEqual([expect.objectContaining({ type: "signal", reason: "webhook replay", args: { name: "paid", data: { amount: 42 } } })]);
  }
});

it("a batch of many runs counts those of one workflow it does the same to on one line, and lists apart those it leaves", async () => {
  const { store } = await pausedRuns({ review: 13, checkout: 1 });
  ui = await openConsole({ store, columns: 120, rows: 40 });
  await ui.waitFor("Runs 14");
  await ui.press("*");
  await ui.waitFor("14 marked");
  await ui.press("a");
  const frame = await ui.waitFor("Approve the pending interrupts of 13 runs?");
  expect(frame).toMatch(/13 runs {2}review approves ok: Ship it\?/);
  expect(frame).toMatch(/run-\w+ checkout left: no interrupt of it is pending/);
  expect(frame).not.toContain("more (a taller terminal shows them)");
  await ui.press("esc");
  await ui.waitFor("approve not confirmed; nothing sent");
});
