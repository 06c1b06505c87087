import { afterEach, expect, it } from "vitest";
import { z } from "zod";
import { MemoryStore, createEngine, workflow, type Engine, type RunRecord } from "../../engine/index.js";
import { ended, until } from "../support/engine.js";
import { closeAll, openConsole, type ConsoleHarness } from "./harness.js";

let engine: Engine | undefined;
let ui: ConsoleHarness | undefined;
afterEach(async () => ([ui, engine] = await closeAll(ui, engine)));

/** A checkout that waits for the payment provider's signal, and a review that asks a person (paused, but not for a signal). */
const checkout = workflow("checkout", { state: z.object({ payment: z.unknown().optional() }) })
  .wait("paid", { signal: "payment.confirmed", output: "payment", next: "END" })
  .compile();
const review = workflow("review", { state: z.object({}) })
  .approval("ok", { question: "Ship it?", routes: { approve: "END", reject: "END" } })
  .compile();

/** A parent whose sub-workflow's run waits for the signal `approved`. */
const approvalChild = workflow("approval-child", { state: z.object({}) }).wait("approved", { signal: "approved", next: "END" }).compile();
const approvalParent = workflow("approval-parent", { state: z.object({}) }).subgraph("sub", approvalChild, { next: "END" }).compile();

/** The run once `test` holds of it (polled). */
const runOnce = (store: MemoryStore, runId: string, test: (run: RunRecord) => boolean, what: string) =>
  until(async () => {
    const run = await store.getRun(runId);
    return run && test(run) ? run : undefined;
  }, 5_000, `run ${runId} ${what}`);

async function pausedCheckout(): Promise<{ store: MemoryStore; runId: string }> {
  const store = new MemoryStore();
  engine = createEngine({ store, workflows: [checkout, review], worker: { pollMs: 50 } });
  const run = await engine.start(checkout, {}, { deadlineSeconds: 7_200 });
  await runOnce(store, run.id, (r) => r.status === "paused" && r.reason === "signal", "to pause for a signal");
  return { store, runId: run.id };
}

/** `!`, the name (the one offered: payment.confirmed, unless `name` is given), then `data` as typed, each with enter. */
async function sendSignal(ui: ConsoleHarness, data: string, name?: string): Promise<void> {
  await ui.press("!");
  await ui.waitFor("Signal name: payment.confirmed█");
  if (name !== undefined) {
    await ui.press("ctrl-u");
    await ui.type(name);
  }
  await ui.press("enter");
  await ui.waitFor(`${name ?? "payment.confirmed"} data (JSON):`);
  if (data) await ui.type(data);
  await ui.press("enter");
}

it("lists a run paused for a signal by what it waits for, and the filter finds it by the signal's name", async () => {
  const { store, runId } = await pausedCheckout();
  const asking = await engine!.start(review);
  await runOnce(store, asking.id, (r) => r.status === "paused", "to pause");
  ui = await openConsole({ store, columns: 120 });
  const row = (id: string) => ui!.lines().find((l) => l.includes(id));
  await ui.waitFor(runId);
  await ui.waitFor(asking.id);
  expect(row(runId)).toMatch(/ waiting for signal payment\.confirmed at paid /);
  expect(row(asking.id)).toMatch(/ interrupt: ok /);

  await ui.press("/");
  await ui.type("payment.confirmed");
  await ui.press("enter");
  await ui.waitFor("filter: payment.confirmed");
  expect(row(runId)).toBeDefined();
  expect(row(asking.id)).toBeUndefined();
});

it("shows in a run's header what it waits for, the signals no node has taken and its deadline, short where the whole does not fit", async () => {
  const { store, runId } = await pausedCheckout();
  ui = await openConsole({ store, columns: 120, initial: { kind: "run", runId } });
  let frame = await ui.waitFor("waiting for signal payment.confirmed at paid");
  expect(frame).toMatch(/\n ⏱ deadline: canceled if not ended by \d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC \(in 1h59m\)\n/);
  expect(frame).toContain("paid · step 1: waiting for signal payment.confirmed");
  const op = engine!.operator("ann");
  await op.signal(runId, "note", "early");
  await ui.waitFor(/\n ✉ inbox: 1 signal no node has taken: note  ⏱ deadline: canceled if not ended by .* UTC \(in 1h59m\)\n/);
  await ui.resize(80, 24);
  await ui.waitFor(/\n ✉ inbox: 1 signal no node has taken: note  ⏱ deadline: cancel in 1h59m\n/);

  // Ended: the signal no node took is still there; the deadline is gone.
  await op.signal(runId, "payment.confirmed", { amount: 42 });
  frame = await ui.waitFor("✓ succeeded");
  expect(frame).toContain("✉ inbox: 1 signal no node has taken: note");
  expect(frame).not.toContain("deadline");
});

it("sends the run a signal with JSON data from its run view: bad JSON is refused, nothing sent; the run goes on with the data", async () => {
  const { store, runId } = await pausedCheckout();
  await engine!.operator("ann").signal(runId, "note", "early");
  ui = await openConsole({ store, columns: 120, initial: { kind: "run", runId } });
  await ui.waitFor("! signal");

  // The name the run waits for is offered; the data must be JSON, asked again as typed to mend it.
  await sendSignal(ui, '{"amount": 4');
  await ui.waitFor("not JSON (line 1, column");
  expect(ui.frame()).toContain('payment.confirmed data (JSON): {"amount": 4█');
  expect((await store.listCommands({ runId })).map((c) => c.args.name)).toEqual(["note"]);

  await ui.type("2}");
  await ui.press("enter");
  const frame = await ui.waitFor(`Send signal payment.confirmed to run ${runId}?`);
  expect(frame).toContain("paid waits for it and goes on with it.");
  expect(frame).toContain('Data: {"amount":42}');
  expect(frame).toMatch(/\[Cancel\]\s+Send signal /);
  await ui.type("webhook 7");
  await ui.press("enter", "enter");
  await ui.waitFor("signal payment.confirmed sent: paid goes on");
  expect((await ended(engine!, runId)).status).toBe("succeeded");
  expect(await engine!.run(runId).state()).toEqual({ payment: { amount: 42 } });
  const [, sent] = await store.listCommands({ runId });
  expect(sent).toMatchObject({ type: "signal", actor: "operator:tester", reason: "webhook 7", args: { name: "payment.confirmed", data: { amount: 42 } } });

  // A run that has ended takes no signal: the key says so.
  await ui.waitFor("✓ succeeded");
  await ui.press("!");
  await ui.waitFor(`!: run ${runId} has ended (succeeded); a signal reaches only a run that has not`);
});

it("sends a signal no node waits for, without data: the run keeps it in its inbox", async () => {
  const { store, runId } = await pausedCheckout();
  ui = await openConsole({ store, columns: 80, initial: { kind: "run", runId } });
  await ui.waitFor("! signal");

  // A name the engine would refuse is said at once, before the data is asked for, and asked again to mend.
  await ui.press("!");
  await ui.waitFor("Signal name: payment.confirmed█");
  await ui.press("ctrl-u");
  await ui.type("bad name");
  await ui.press("enter");
  await ui.waitFor(`signal name "bad name" may only use letters`);
  expect(ui.frame()).toContain("Signal name: bad name█");
  await ui.press("ctrl-u");
  await ui.type("audit");
  await ui.press("enter");
  await ui.waitFor("audit data (JSON):");
  await ui.press("enter");
  const frame = await ui.waitFor("Send signal audit to run");
  expect(frame).toContain("No node waits for audit now: it is kept until a node takes it.");
  expect(frame).toContain("No data.");
  await ui.press("tab", "enter");
  await ui.waitFor("signal audit kept until a node takes it: no node waits for it now");
  await ui.waitFor("✉ inbox: 1 signal no node has taken: audit");
  expect((await store.getRun(runId))!.inbox).toEqual([expect.objectContaining({ name: "audit", actor: "operator:tester" })]);
  expect((await store.getRun(runId))!.inbox![0]).not.toHaveProperty("data");
});

it("sending a signal none of the run's nodes waits for, while its sub-workflow's run does, names that run, before and after", async () => {
  const store = new MemoryStore();
  engine = createEngine({ store, workflows: [approvalParent], worker: { pollMs: 50 } });
  const run = await engine.start(approvalParent);
  const below = await until(async () => (await store.listRuns({ parentRunId: run.id, status: ["paused"] })).runs[0], 5_000, "the child run to pause for its signal");
  ui = await openConsole({ store, columns: 120, initial: { kind: "run", runId: run.id } });
  await ui.waitFor("! signal");
  await ui.press("!");
  await ui.waitFor("Signal name:");
  await ui.type("approved");
  await ui.press("enter");
  await ui.waitFor("approved data (JSON):");
  await ui.press("enter");
  const frame = await ui.waitFor(`Run ${below.id} waits for it: signal that run.`);
  expect(frame).toContain("No node waits for approved now: it is kept until a node takes it.");
  await ui.press("tab", "enter");
  await ui.waitFor(`run ${below.id} waits for it: signal that run`);
  expect((await store.getRun(run.id))!.inbox).toEqual([expect.objectContaining({ name: "approved" })]);
});

it("forks a run from before it took a signal (F in Checkpoints): the footer says the signal was carried, and the fork goes on with it", async () => {
  const { store, runId } = await pausedCheckout();
  await engine!.operator("ann").signal(runId, "payment.confirmed", { amount: 42 });
  expect((await ended(engine!, runId)).status).toBe("succeeded");
  ui = await openConsole({ store, columns: 200, initial: { kind: "run", runId, tab: 3 } });
  await ui.waitFor("checkpoints");
  await ui.press("g", "F");
  await ui.waitFor(`Fork run ${runId} from checkpoint 0`);
  await ui.press("tab", "enter");
  const frame = await ui.waitFor(`carried 1 signal (payment.confirmed) from run ${runId}`);
  const forkId = /as run (run-\S+);/.exec(frame)![1]!;
  expect((await ended(engine!, forkId)).status).toBe("succeeded");
  expect(await engine!.run(forkId).state()).toEqual({ payment: { amount: 42 } });
});

it("says in a fork's header which run the signals in its inbox were carried from, where there is room", async () => {
  const { store, runId } = await pausedCheckout();
  await engine!.operator("ann").signal(runId, "note", "early");
  const { result } = await engine!.operator("ann").fork(runId, 0, { deadlineSeconds: 7_200 });
  await runOnce(store, result.runId, (r) => r.status === "paused" && r.reason === "signal", "to pause for a signal");
  ui = await openConsole({ store, columns: 120, initial: { kind: "run", runId: result.runId } });
  await ui.waitFor(`\n ✉ inbox: 1 signal no node has taken: note (1 carried from run ${runId})  ⏱ deadline: cancel in 1h59m\n`);
  await ui.resize(200, 24);
  await ui.waitFor(new RegExp(`\\n ✉ inbox: 1 signal no node has taken: note \\(1 carried from run ${runId}\\)  ⏱ deadline: canceled if not ended by .* UTC \\(in 1h59m\\)\\n`));
  await ui.resize(80, 24);
  await ui.waitFor(/\n ✉ inbox: 1 signal no node has taken: note  ⏱ deadline: cancel in 1h59m\n/);
});
