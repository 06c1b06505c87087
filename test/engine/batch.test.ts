import { describe, expect, it } from "vitest";
import { z } from "zod";
import { ConflictError, Operator, StoreError, runBatch, selectRuns, workflow } from "../../engine/index.js";
import { ended, engineHarness, until } from "../support/engine.js";
import { storeFactories } from "../support/stores.js";

const state = z.object({ paid: z.number().default(0), tries: z.number().default(0) });

describe.each(storeFactories)("batches of operator commands ($name store)", (factory) => {
  const harness = engineHarness(factory);

  it("signals and cancels the runs a selection names, each on its own: one that ended meanwhile fails alone, one ended before is left", async () => {
    const wf = workflow("batch-pay", { state }).wait("pay", { signal: "paid", output: "paid", next: "END" }).compile();
    const other = workflow("batch-other", { state }).wait("pay", { signal: "paid", output: "paid", next: "END" }).compile();
    const engine = await harness.engine([wf, other]);
    const op = engine.operator("ann");
    const runs = await Promise.all([0, 1, 2, 3].map(() => engine.start(wf)));
    const bystander = await engine.start(other);
    const pausedAll = async () => (await Promise.all([...runs, bystander].map((r) => r.get()))).every((r) => r.status === "paused") || undefined;
    await until(pausedAll, 10_000, "every run to wait for its signal");
    // One ends before the batch is chosen, one after: the first is left, the second fails alone.
    await op.signal(runs[0]!.id, "paid", 1);
    await ended(engine, runs[0]!.id);
    const { runs: selected, more } = await selectRuns(engine.store, { workflows: ["batch-pay"] }, 100);
    expect([selected.length, more]).toEqual([4, false]);
    await op.cancel(runs[1]!.id, { reason: "by hand" });
    const results = await runBatch(op, engine.store, selected, { kind: "signal", name: "paid", data: 5, reason: "batch" });
    const byRun = new Map(results.map((r) => [r.runId, r]));
    expect(byRun.get(runs[0]!.id)).toEqual({ runId: runs[0]!.id, status: "skipped", why: "it has ended (succeeded)" });
    expect(byRun.get(runs[1]!.id)).toMatchObject({ status: "failed", error: expect.any(ConflictError) });
    for (const r of [runs[2]!, runs[3]!]) {
      expect(byRun.get(r.id)).toMatchObject({ status: "done", effects: ["signal paid sent: pay goes on"], commandIds: [expect.any(String)] });
      expect((await ended(engine, r.id)).status).toBe("succeeded");
      expect((await r.state()).paid).toBe(5);
    }
    expect((await bystander.get()).status).toBe("paused");
    const canceled = await runBatch(op, engine.store, [await bystander.get()], { kind: "cancel", reason: "cleanup" });
    expect(canceled).toEqual([expect.objectContaining({ status: "done" })]);
    expect((await ended(engine, bystander.id)).status).toBe("canceled");
  });

  it("retries every failed task of each run's current step, and leaves a run with none", async () => {
    let calls = 0;
    const wf = workflow("batch-retry", { state })
      .node("a", () => {
        calls++;
        if (calls <= 2) throw new Error("flaky");
        return { tries: calls };
      }, { next: "END" })
      .compile();
    const fine = workflow("batch-fine", { state }).node("a", () => ({}), { next: "END" }).compile();
    const engine = await harness.engine([wf, fine]);
    const [x, y] = [await engine.start(wf), await engine.start(wf)];
    for (const r of [x, y]) expect(await r.wait({ timeoutMs: 10_000 })).toMatchObject({ status: "paused", reason: "retries-exhausted" });
    const ok = await engine.start(fine);
    expect((await ok.wait({ timeoutMs: 10_000 })).status).toBe("succeeded");
    const results = await runBatch(engine.operator("ann"), engine.store, [await x.get(), await y.get(), await ok.get()], { kind: "retry", reason: "fixed upstream" });
    expect(results.map((r) => r.status)).toEqual(["done", "done", "skipped"]);
    for (const r of [x, y]) expect((await r.wait({ until: "end", timeoutMs: 10_000 })).status).toBe("succeeded");
  });
});

describe.each(storeFactories)("batches of answers ($name store)", (factory) => {
  const harness = engineHarness(factory);

  it("approves the pending interrupts of each run (at a node, when named), and leaves a run with none that offers the decision", async () => {
    const wf = workflow("batch-approve", { state })
      .approval("review", { question: "Ship it?", decisions: ["approve", "reject"], routes: { approve: "ship", reject: "END" } })
      .node("ship", () => ({ paid: 1 }), { next: "END" })
      .compile();
    const engine = await harness.engine([wf]);
    const runs = await Promise.all([0, 1].map(() => engine.start(wf)));
    for (const r of runs) expect(await r.wait({ timeoutMs: 10_000 })).toMatchObject({ status: "paused", reason: "interrupt" });
    const op = engine.operator("ann");
    const records = await Promise.all(runs.map((r) => r.get()));
    const elsewhere = await runBatch(op, engine.store, records, { kind: "resolve", decision: "approve", node: "ship" });
    expect(elsewhere.map((r) => r.status === "skipped" && r.why)).toEqual(["no interrupt of it is pending at node ship", "no interrupt of it is pending at node ship"]);
    const results = await runBatch(op, engine.store, records, { kind: "resolve", decision: "approve", node: "review", reason: "release day" });
    expect(results.map((r) => r.status)).toEqual(["done", "done"]);
    for (const r of runs) {
      expect((await r.wait({ until: "end", timeoutMs: 10_000 })).status).toBe("succeeded");
      expect((await r.state()).paid).toBe(1);
    }
    const again = await runBatch(op, engine.store, await Promise.all(runs.map((r) => r.get())), { kind: "resolve", decision: "approve" });
    expect(again.map((r) => r.status === "skipped" && r.why)).toEqual(["it has ended (succeeded)", "it has ended (succeeded)"]);
  });
});

describe("a batch when the store fails (memory store)", () => {
  const harness = engineHarness(storeFactories[0]!);

  it("stops at the first store failure: the runs not yet sent say so, none is tried after it", async () => {
    const wf = workflow("batch-outage", { state }).wait("pay", { signal: "paid", next: "END" }).compile();
    const engine = await harness.engine([wf]);
    const runs = await Promise.all([0, 1, 2, 3].map(() => engine.start(wf)));
    for (const r of runs) await until(async () => (await r.get()).status === "paused" || undefined, 10_000, "the runs to wait");
    let commits = 0;
    const failing = new Proxy(engine.store, {
      get(target, key, receiver) {
        if (key !== "commit") return Reflect.get(target, key, receiver) as unknown;
        return (...args: Parameters<typeof target.commit>) => (++commits === 2 ? Promise.reject(new StoreError("store lost: connection refused", { transient: true })) : target.commit(...args));
      },
    });
    const op = new Operator(failing, { actor: "operator:ann" });
    const records = await Promise.all(runs.map((r) => r.get()));
    const results = await runBatch(op, failing, records, { kind: "cancel", reason: "outage test" }, 1);
    expect(results.map((r) => r.status)).toEqual(["done", "failed", "skipped", "skipped"]);
    expect(results[2]).toEqual({ runId: runs[2]!.id, status: "skipped", why: `not sent: the store failed on run ${runs[1]!.id}` });
    expect(commits).toBe(2);
  });
});
