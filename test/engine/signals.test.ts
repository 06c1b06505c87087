import { describe, expect, it } from "vitest";
import { z } from "zod";
import { ConflictError, NotFoundError, ValidationError, workflow, type Engine, type RunRecord } from "../../engine/index.js";
import { ended, engineHarness, until } from "../support/engine.js";
import { storeFactories } from "../support/stores.js";

const state = z.object({ payment: z.unknown().optional(), got: z.array(z.string()).default([]), gate: z.string().default("") });

const pausedFor = async (engine: Engine, id: string, reason: string): Promise<RunRecord> =>
  until(async () => {
    const run = await engine.store.getRun(id);
    return run?.status === "paused" && run.reason === reason ? run : undefined;
  }, 10_000, `run ${id} to pause (${reason})`);

describe.each(storeFactories)("signals ($name store)", (factory) => {
  const harness = engineHarness(factory);

  it("a wait node parks the run until a signal of its name comes, and writes its data to output", async () => {
    const wf = workflow("awaits-payment", { state, reducers: { got: "append" } })
      .wait("payment", { signal: "payment.confirmed", output: "payment", next: "ship" })
      .node("ship", (s) => ({ got: [`shipped ${JSON.stringify(s.payment)}`] }), { next: "END" })
      .compile();
    const engine = await harness.engine([wf]);
    const run = await engine.start(wf);
    const paused = await pausedFor(engine, run.id, "signal");
    expect(paused).toMatchObject({ current: ["payment"], owner: null });
    const outcome = await run.signal("payment.confirmed", { amount: 42 }, { reason: "webhook 123" });
    expect(outcome.effect).toBe("signal payment.confirmed sent: payment goes on");
    expect(outcome.result).toMatchObject({ node: "payment" });
    expect((await ended(engine, run.id)).status).toBe("succeeded");
    expect(await run.state()).toMatchObject({ payment: { amount: 42 }, got: ['shipped {"amount":42}'] });
    const [requested, signaled] = await engine.store.readEvents({ runId: run.id, types: ["operator.requested", "run.signaled"] });
    expect(signaled!.payload).toEqual({ signalId: outcome.command.id, name: "payment.confirmed", for: "payment" });
    // The request comes first in time as in order (it was stamped after what it led to).
    expect(requested!.time).toBeLessThanOrEqual(signaled!.time);
    const [task] = (await engine.store.listTasks(run.id)).filter((t) => t.node === "payment");
    expect(task!.received).toEqual({ "payment.confirmed#1": expect.objectContaining({ data: { amount: 42 }, reason: "webhook 123", actor: expect.any(String) }) });
    expect((await engine.store.getRun(run.id))!.inbox ?? []).toEqual([]);
  });

  it("keeps signals sent before any node waits for them, and hands over the oldest without pausing", async () => {
    const wf = workflow("signal-first", { state })
      .approval("gate", { question: "Go?", routes: { approve: "payment", reject: "END" } })
      .wait("payment", { signal: "paid", output: "payment", next: "END" })
      .compile();
    const engine = await harness.engine([wf]);
    const run = await engine.start(wf);
    await pausedFor(engine, run.id, "interrupt");
    const early = await run.signal("paid", "EUR 5");
    expect(early.effect).toBe("signal paid kept until a node takes it: no node waits for it now");
    expect(early.result).not.toHaveProperty("waitingRun");
    await run.signal("paid", "EUR 6");
    expect((await engine.store.getRun(run.id))!.inbox).toEqual([expect.objectContaining({ name: "paid", data: "EUR 5" }), expect.objectContaining({ name: "paid", data: "EUR 6" })]);
    const [ask] = await engine.store.listInterrupts({ runId: run.id, status: "pending" });
    await engine.operator("ann").resolve(ask!.id, { decision: "approve" });
    expect((await ended(engine, run.id)).status).toBe("succeeded");
    expect((await run.state()).payment).toBe("EUR 5");
    expect((await engine.store.getRun(run.id))!.inbox).toEqual([expect.objectContaining({ data: "EUR 6" })]);
    const paused = await engine.store.readEvents({ runId: run.id, types: ["run.paused"] });
    expect(paused.map((e) => (e.payload as { reason: string }).reason)).toEqual(["interrupt"]);
  });

  it("ctx.receive takes a signal per call, the same ones each time the node runs", async () => {
    let runs = 0;
    const wf = workflow("two-items", { state })
      .node(
        "collect",
        async (_s, ctx) => {
          runs++;
          const first = await ctx.receive<string>("item");
          const second = await ctx.receive<string>("item");
          return { got: [first, second] };
        },
        { next: "END" },
      )
      .compile();
    const engine = await harness.engine([wf]);
    const run = await engine.start(wf);
    await pausedFor(engine, run.id, "signal");
    await run.signal("item", "a");
    // The node runs again, gets "a" back from its record and waits for a second.
    await until(async () => runs === 2 && (await engine.store.getRun(run.id))?.status === "paused", 10_000, "the second wait");
    await run.signal("item", "b");
    expect((await ended(engine, run.id)).status).toBe("succeeded");
    expect((await run.state()).got).toEqual(["a", "b"]);
  });

  it("one signal lets one of two waiting branches go on, the one that waited longest", async () => {
    const wf = workflow("two-waiters", { state, reducers: { got: "append" } })
      .node("split", () => ({}), { next: ["a", "b"] })
      .node("a", async (_s, ctx) => ({ got: [`a:${await ctx.receive<string>("go")}`] }), { next: "join" })
      .node("b", async (_s, ctx) => ({ got: [`b:${await ctx.receive<string>("go")}`] }), { next: "join" })
      .node("join", () => ({}), { waitFor: ["a", "b"], next: "END" })
      .compile();
    const engine = await harness.engine([wf]);
    const run = await engine.start(wf);
    await pausedFor(engine, run.id, "signal");
    const first = await run.signal("go", "1");
    await until(async () => (await engine.store.getRun(run.id))?.status === "paused" && (await engine.store.listTasks(run.id)).some((t) => t.status === "succeeded" && t.node === first.result.node), 10_000, "one branch");
    await run.signal("go", "2");
    expect((await ended(engine, run.id)).status).toBe("succeeded");
    expect([...(await run.state()).got].sort()).toEqual(first.result.node === "a" ? ["a:1", "b:2"] : ["a:2", "b:1"]);
  });

  it("a node that took a signal and failed gets the same one when it is retried", async () => {
    let attempts = 0;
    // Both signals are in the inbox before the node runs (sent while the run asks a person): the
    // second cannot come after the run has ended.
    const wf = workflow("flaky-receiver", { state })
      .approval("gate", { question: "Go?", routes: { approve: "use", reject: "END" } })
      .node(
        "use",
        async (_s, ctx) => {
          const data = await ctx.receive<string>("job");
          if (++attempts === 1) throw new Error("flaky");
          return { gate: data };
        },
        { next: "END", retry: { maxAttempts: 2, backoffMs: 1 } },
      )
      .compile();
    const engine = await harness.engine([wf]);
    const run = await engine.start(wf);
    await pausedFor(engine, run.id, "interrupt");
    await run.signal("job", "first");
    await run.signal("job", "second");
    const [ask] = await engine.store.listInterrupts({ runId: run.id, status: "pending" });
    await engine.operator("ann").resolve(ask!.id, { decision: "approve" });
    expect((await ended(engine, run.id)).status).toBe("succeeded");
    expect((await run.state()).gate).toBe("first");
    expect((await engine.store.getRun(run.id))!.inbox).toEqual([expect.objectContaining({ data: "second" })]);
  });

  it("refuses a signal to a run that ended, an unknown run, or with a bad name, writing nothing", async () => {
    const wf = workflow("quick-signal", { state }).node("done", () => ({}), { next: "END" }).compile();
    const engine = await harness.engine([wf]);
    const run = await engine.start(wf);
    expect((await run.wait()).status).toBe("succeeded");
    const op = engine.operator("ann");
    await expect(op.signal(run.id, "late")).rejects.toThrow(new ConflictError(`run ${run.id} has ended (succeeded): a signal reaches only a run that has not`));
    await expect(op.signal("run-nope", "x")).rejects.toBeInstanceOf(NotFoundError);
    await expect(op.signal(run.id, "bad name")).rejects.toThrow(new ValidationError(`signal name "bad name" may only use letters, digits, '.', '_', ':' and '-' (at most 128)`));
    expect((await engine.store.getRun(run.id))!.inbox ?? []).toEqual([]);
  });

  it("ctx.receive with timeoutSeconds gives undefined once that long passed with none come, and the same when the node runs again", async () => {
    const wf = workflow("receive-timeout", { state })
      .node(
        "wait",
        async (_s, ctx) => {
          const got = await ctx.receive<string>("reply", { timeoutSeconds: 0.3 });
          // Asked after the timeout: a later signal must not change what the first receive said.
          await ctx.interrupt({ question: "Go on?" });
          return { gate: got ?? "none" };
        },
        { next: "END" },
      )
      .compile();
    const engine = await harness.engine([wf]);
    const run = await engine.start(wf);
    await pausedFor(engine, run.id, "interrupt");
    await run.signal("reply", "late");
    const [ask] = await engine.store.listInterrupts({ runId: run.id, status: "pending" });
    await engine.operator("ann").resolve(ask!.id, { decision: "approve" });
    expect((await ended(engine, run.id)).status).toBe("succeeded");
    expect((await run.state()).gate).toBe("none");
    expect((await engine.store.getRun(run.id))!.inbox).toEqual([expect.objectContaining({ name: "reply", data: "late" })]);
    const [task] = (await engine.store.listTasks(run.id)).filter((t) => t.node === "wait");
    expect(task!.received).toEqual({ "reply#1": expect.objectContaining({ timedOut: true, actor: "timeout" }) });
  });

  it("a wait node's signal with seconds waits that long at most, then goes on writing nothing; a signal in time is written", async () => {
    const wf = workflow("wait-at-most", { state })
      .wait("paid", { signal: "paid", seconds: 0.5, output: "payment", next: "END" })
      .compile();
    const engine = await harness.engine([wf]);
    const slow = await engine.start(wf);
    expect((await ended(engine, slow.id)).status).toBe("succeeded");
    expect((await slow.state()).payment).toBeUndefined();
    const quick = await engine.start(wf);
    await until(async () => (await engine.store.getRun(quick.id))?.status === "queued" && (await engine.store.getRun(quick.id))?.wakeAt !== null, 10_000, "the wait to park");
    await quick.signal("paid", 7);
    expect((await ended(engine, quick.id)).status).toBe("succeeded");
    expect((await quick.state()).payment).toBe(7);
  });

  it("a signal none of the run's nodes waits for, while a sub-workflow's run does, names that run; the run keeps it", async () => {
    const child = workflow("approval-child", { state }).wait("approved", { signal: "approved", output: "payment", next: "END" }).compile();
    const parent = workflow("approval-parent", { state }).subgraph("sub", child, { next: "END" }).compile();
    const engine = await harness.engine([parent]);
    const run = await engine.start(parent);
    const [below] = (await until(async () => {
      const { runs } = await engine.store.listRuns({ parentRunId: run.id, status: ["paused"] });
      return runs.length > 0 ? runs : undefined;
    }, 10_000, "the child run to pause for its signal"));
    const sent = await run.signal("approved", "yes");
    expect(sent.effect).toBe(`signal approved kept until a node takes it: no node waits for it now; run ${below!.id} waits for it: signal that run`);
    expect(sent.result).toMatchObject({ waitingRun: below!.id });
    expect((await engine.store.getRun(run.id))!.inbox).toEqual([expect.objectContaining({ name: "approved", data: "yes" })]);
    // A name nobody below waits for names no run.
    expect((await run.signal("other")).result).not.toHaveProperty("waitingRun");
    expect((await engine.operator("ann").signal(below!.id, "approved", "yes")).effect).toBe("signal approved sent: approved goes on");
    expect((await ended(engine, run.id)).status).toBe("succeeded");
  });

  it("refuses signal data JSON would not keep, or larger than 64 KiB, writing nothing", async () => {
    const wf = workflow("waits-for-data", { state }).wait("w", { signal: "data", output: "payment", next: "END" }).compile();
    const engine = await harness.engine([wf]);
    const run = await engine.start(wf);
    await pausedFor(engine, run.id, "signal");
    await expect(run.signal("data", { n: Number.NaN })).rejects.toThrow(ValidationError);
    await expect(run.signal("data", "x".repeat(70_000))).rejects.toThrow("signal data is 70002 bytes as JSON, more than 65536: store a large value as an artifact and send what names it");
    expect(await engine.store.listCommands({ runId: run.id })).toEqual([]);
    expect((await engine.store.getRun(run.id))!.status).toBe("paused");
  });
});
