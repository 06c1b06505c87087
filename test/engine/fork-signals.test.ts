import { describe, expect, it, vi } from "vitest";
import { z } from "zod";
import { ConflictError, workflow, type Engine, type RunRecord } from "../../engine/index.js";
import { ended, engineHarness, until } from "../support/engine.js";
import { storeFactories } from "../support/stores.js";

const state = z.object({ payment: z.unknown().optional(), shipping: z.unknown().optional(), got: z.array(z.unknown()).default([]) });

/** Waits for `paid`, then for `shipped`. */
const order = workflow("order", { state })
  .wait("paid", { signal: "paid", output: "payment", next: "ship" })
  .wait("ship", { signal: "shipped", output: "shipping", next: "END" })
  .compile();

/** Asks a person, then takes two `item` signals in one node. */
const items = workflow("items", { state })
  .approval("gate", { question: "Go?", routes: { approve: "collect", reject: "END" } })
  .node("collect", async (_s, ctx) => ({ got: [await ctx.receive("item"), await ctx.receive("item")] }), { next: "END" })
  .compile();

const pausedAt = (engine: Engine, id: string, node: string, reason = "signal"): Promise<RunRecord> =>
  until(async () => {
    const run = await engine.store.getRun(id);
    return run?.status === "paused" && run.reason === reason && run.current.includes(node) ? run : undefined;
  }, 10_000, `run ${id} to pause (${reason}) at ${node}`);

describe.each(storeFactories)("a fork carries the signals its history has not taken ($name store)", (factory) => {
  const harness = engineHarness(factory);

  it("a fork from before a signal was taken goes on past its wait with the same data; one from after does not carry it; an untaken one is carried", async () => {
    const engine = await harness.engine([order]);
    const op = engine.operator("ann");
    const run = await engine.start(order);
    await pausedAt(engine, run.id, "paid");
    await run.signal("paid", { amount: 42 }, { reason: "webhook 7" });
    await pausedAt(engine, run.id, "ship");
    // Kept by the run: no node waits for it.
    await run.signal("note", "gift wrap");
    const [paid, note] = (await engine.store.listCommands({ runId: run.id })).filter((c) => c.type === "signal");

    // Checkpoint 0 is the input, before `paid` ran; checkpoint 1 is after it took the payment.
    const before = await op.fork(run.id, 0);
    expect(before.result.carriedSignals).toBe(2);
    expect(before.effect).toBe(`forked from checkpoint ${run.id}:0 as run ${before.result.runId}; carried 2 signals (paid, note) from run ${run.id}`);
    const fork = (await engine.store.getRun(before.result.runId))!;
    // As it was made: oldest first, as they were sent, saying where they came from.
    expect(fork.inbox).toEqual([
      { id: paid!.id, name: "paid", data: { amount: 42 }, actor: paid!.actor, reason: "webhook 7", sentAt: expect.any(Number), carriedFrom: run.id },
      { id: note!.id, name: "note", data: "gift wrap", actor: note!.actor, sentAt: expect.any(Number), carriedFrom: run.id },
    ]);
    const [created] = await engine.store.readEvents({ runId: fork.id, types: ["run.created"] });
    expect(created!.payload).toMatchObject({ forkOf: { runId: run.id, checkpointId: `${run.id}:0` }, carriedSignals: 2 });
    // No new signal: the fork takes the payment the original took, and waits where it waits.
    await pausedAt(engine, fork.id, "ship");
    expect(await engine.run(fork.id).state()).toMatchObject({ payment: { amount: 42 } });
    expect((await engine.store.getRun(fork.id))!.inbox).toEqual([expect.objectContaining({ name: "note", carriedFrom: run.id })]);

    const after = await op.fork(run.id, 1);
    expect(after.result.carriedSignals).toBe(1);
    expect(after.effect).toBe(`forked from checkpoint ${run.id}:1 as run ${after.result.runId}; carried 1 signal (note) from run ${run.id}`);
    expect((await engine.store.getRun(after.result.runId))!.inbox).toEqual([expect.objectContaining({ id: note!.id, name: "note" })]);
    await pausedAt(engine, after.result.runId, "ship");

    // The original is not changed: it still holds its note, and goes on with its own signal.
    expect((await engine.store.getRun(run.id))!.inbox).toEqual([expect.objectContaining({ id: note!.id })]);
    expect((await engine.store.getRun(run.id))!.inbox![0]).not.toHaveProperty("carriedFrom");
    await run.signal("shipped", "DHL");
    expect((await ended(engine, run.id)).status).toBe("succeeded");
    expect((await engine.store.getRun(before.result.runId))!.status).toBe("paused");
  });

  it("signals: \"none\" starts the fork with an empty inbox: it waits for a signal as the original did", async () => {
    const engine = await harness.engine([order]);
    const run = await engine.start(order);
    await pausedAt(engine, run.id, "paid");
    await run.signal("paid", { amount: 42 });
    await run.signal("note", "x");
    await pausedAt(engine, run.id, "ship");
    const bare = await engine.operator("ann").fork(run.id, 0, { signals: "none" });
    expect(bare.result.carriedSignals).toBe(0);
    expect(bare.effect).toBe(`forked from checkpoint ${run.id}:0 as run ${bare.result.runId}`);
    expect((await engine.store.getRun(bare.result.runId))!.inbox ?? []).toEqual([]);
    const [created] = await engine.store.readEvents({ runId: bare.result.runId, types: ["run.created"] });
    expect(created!.payload).not.toHaveProperty("carriedSignals");
    await pausedAt(engine, bare.result.runId, "paid");
    await expect(engine.operator("ann").fork(run.id, 0, { signals: "all" as never })).rejects.toThrow('signals must be "carry" (the fork\'s inbox starts with the signals its history has not taken) or "none" (empty), not "all"');
  });

  it("keeps the order of two signals of one name, untaken or taken, and the fork's node takes them in it", async () => {
    const engine = await harness.engine([items]);
    const op = engine.operator("ann");
    const run = await engine.start(items);
    await pausedAt(engine, run.id, "gate", "interrupt");
    await run.signal("item", "first");
    await run.signal("item", "second");
    // Untaken: in the inbox's order.
    const untaken = await op.fork(run.id, 0);
    expect(untaken.effect).toContain(`; carried 2 signals (item ×2) from run ${run.id}`);
    expect((await engine.store.getRun(untaken.result.runId))!.inbox!.map((s) => s.data)).toEqual(["first", "second"]);

    const [ask] = await engine.store.listInterrupts({ runId: run.id, status: "pending" });
    await op.resolve(ask!.id, { decision: "approve" });
    expect((await ended(engine, run.id)).status).toBe("succeeded");
    expect((await run.state()).got).toEqual(["first", "second"]);
    // Taken by the original's node after checkpoint 0: carried, in the order it took them.
    const taken = await op.fork(run.id, 0);
    expect(taken.result.carriedSignals).toBe(2);
    expect((await engine.store.getRun(taken.result.runId))!.inbox!.map((s) => s.data)).toEqual(["first", "second"]);
    const forked = engine.run(taken.result.runId);
    await pausedAt(engine, forked.id, "gate", "interrupt");
    const [forkAsk] = await engine.store.listInterrupts({ runId: forked.id, status: "pending" });
    await op.resolve(forkAsk!.id, { decision: "approve" });
    expect((await ended(engine, forked.id)).status).toBe("succeeded");
    expect((await forked.state()).got).toEqual(["first", "second"]);
    // From its last checkpoint, the original's history took both: nothing to carry.
    const last = await op.fork(run.id, (await run.get()).headN);
    expect(last.result.carriedSignals).toBe(0);
    expect((await engine.store.getRun(last.result.runId))!.inbox ?? []).toEqual([]);
  });

  it("a node's receives keep their order in the fork when the processes that applied the signals disagree on the time", async () => {
    const engine = await harness.engine([items]);
    const op = engine.operator("ann");
    const run = await engine.start(items);
    await pausedAt(engine, run.id, "gate", "interrupt");
    // The first applied by a process whose clock runs a minute ahead.
    const now = Date.now();
    const ahead = vi.spyOn(Date, "now").mockReturnValue(now + 60_000);
    try {
      await run.signal("item", "first");
    } finally {
      ahead.mockRestore();
    }
    await run.signal("item", "second");
    const [ask] = await engine.store.listInterrupts({ runId: run.id, status: "pending" });
    await op.resolve(ask!.id, { decision: "approve" });
    expect((await ended(engine, run.id)).status).toBe("succeeded");
    expect((await run.state()).got).toEqual(["first", "second"]);
    const fork = await op.fork(run.id, 0);
    expect((await engine.store.getRun(fork.result.runId))!.inbox!.map((s) => s.data)).toEqual(["first", "second"]);
  });

  it("names at most five of the names it carried, in what it says and records", async () => {
    const engine = await harness.engine([items]);
    const run = await engine.start(items);
    await pausedAt(engine, run.id, "gate", "interrupt");
    for (const name of ["a", "b", "b", "c", "d", "e", "f", "g"]) await run.signal(name);
    const fork = await engine.operator("ann").fork(run.id, 0);
    expect(fork.effect).toBe(`forked from checkpoint ${run.id}:0 as run ${fork.result.runId}; carried 8 signals (a, b ×2, c, d, e and 2 more) from run ${run.id}`);
    expect(fork.result.carriedSignals).toBe(8);
    expect(fork.command.args.carriedSignals).toEqual({ count: 8, names: [["a", 1], ["b", 2], ["c", 1], ["d", 1], ["e", 1]] });
  });

  it("a continuation (start --from) starts with an empty inbox", async () => {
    const engine = await harness.engine([items]);
    const run = await engine.start(items);
    await pausedAt(engine, run.id, "gate", "interrupt");
    await run.signal("item", "left behind");
    await run.cancel("done");
    const next = await engine.start(items, {}, { from: run.id });
    expect((await engine.store.getRun(next.id))!.inbox ?? []).toEqual([]);
    // As does a fork that restarts, unless told to carry them.
    const head = (await run.get()).headN;
    expect((await engine.operator("ann").fork(run.id, head, { restart: true })).result.carriedSignals).toBe(0);
    const carrying = await engine.operator("ann").fork(run.id, head, { restart: true, signals: "carry" });
    expect((await engine.store.getRun(carrying.result.runId))!.inbox).toEqual([expect.objectContaining({ data: "left behind", carriedFrom: run.id })]);
  });

  it("refuses a fork that would carry more signals than a run holds, writing nothing; without signals it is made", { timeout: 60_000 }, async () => {
    const wf = workflow("many", { state })
      .approval("gate", { question: "Go?", routes: { approve: "take", reject: "END" } })
      .node("take", async (_s, ctx) => ({ got: [await ctx.receive("item")] }), { next: "hold" })
      .wait("hold", { signal: "never", next: "END" })
      .compile();
    const engine = await harness.engine([wf]);
    const op = engine.operator("ann");
    const run = await engine.start(wf);
    await pausedAt(engine, run.id, "gate", "interrupt");
    for (let i = 0; i < 1_000; i++) await run.signal("item", i);
    const [ask] = await engine.store.listInterrupts({ runId: run.id, status: "pending" });
    await op.resolve(ask!.id, { decision: "approve" });
    await pausedAt(engine, run.id, "hold");
    await run.signal("item", 1_000);
    expect((await engine.store.getRun(run.id))!.inbox).toHaveLength(1_000);
    const commands = (await engine.store.listCommands({ runId: run.id })).length;
    const runs = (await engine.store.listRuns({})).runs.length;
    // From before `take` ran: the one it took and the 1,000 untaken.
    await expect(op.fork(run.id, 0)).rejects.toBeInstanceOf(ConflictError);
    await expect(op.fork(run.id, 0)).rejects.toThrow(
      `a fork of run ${run.id} from checkpoint 0 would carry 1001 signals its history has not taken, more than a run holds untaken (1000): fork with no signals carried (pitwall fork --no-signals, signals: "none") and send it those it needs`,
    );
    expect((await engine.store.listCommands({ runId: run.id })).length).toBe(commands);
    expect((await engine.store.listRuns({})).runs.length).toBe(runs);
    // From after `take` took its one, the 1,000 left fit.
    const afterTake = (await engine.store.listCheckpointSummaries(run.id)).find((c) => c.nodes.includes("take"))!;
    const fits = await op.fork(run.id, afterTake.n);
    expect(fits.result.carriedSignals).toBe(1_000);
    const bare = await op.fork(run.id, 0, { signals: "none" });
    expect(bare.result.carriedSignals).toBe(0);
  });
});
