import { describe, expect, it } from "vitest";
import { z } from "zod";
import { createEngine, leftBehindText, workflow, type LeftBehind } from "../../engine/index.js";
import { engineHarness, until } from "../support/engine.js";
import { storeFactories } from "../support/stores.js";

const state = z.object({ log: z.array(z.string()).default([]) });
const memory = storeFactories.find((f) => f.name === "memory")!;

describe("an embedded engine and runs of a version it cannot run", () => {
  const harness = engineHarness(memory);

  it("says which version it cannot run and why, in a wait that times out and to the worker's onLeftBehind", async () => {
    const before = workflow("edited", { state }).node("a", () => ({ log: ["a"] }), { next: "END" }).compile();
    // The same workflow after its code changed: another graph, so another version.
    const after = workflow("edited", { state }).node("a", () => ({ log: ["a"] }), { next: "b" }).node("b", () => ({ log: ["b"] }), { next: "END" }).compile();
    expect(after.version).not.toBe(before.version);
    const store = await memory.open();
    const run = await createEngine({ store, workflows: [before], worker: false }).start(before);

    const told: LeftBehind[] = [];
    const engine = await harness.engine([after], { store, worker: { onLeftBehind: (left) => told.push(left) } });
    await expect(engine.run(run.id).wait({ timeoutMs: 100 })).rejects.toThrow(
      `run ${run.id} did not settle within 100 ms (it is queued; this engine's worker cannot run it: this process has workflow edited only in version ${after.version}: its definition changed since runs of version ${before.version} started (node a's next); register the workflow as it was when the run started, or fork the run onto a version this engine has (operator.fork(runId, n, { workflow })))`,
    );
    await until(() => told.length > 0, 5_000, "the left-behind report");
    expect(told).toEqual([{ workflow: "edited", version: before.version, status: "queued", count: 1, why: expect.stringContaining("its definition changed") }]);

    // Forked onto the version it has, the run goes on.
    const { result } = await engine.operator("ann").fork(run.id, 0, { workflow: after });
    expect((await engine.run(result.runId).wait({ timeoutMs: 5_000 })).status).toBe("succeeded");
  });
});

describe("a run of a version whose graph is the same, a node's setting changed", () => {
  const harness = engineHarness(memory);

  it("says the workflow's definition changed, and what: not its graph", async () => {
    const before = workflow("timed", { state }).node("a", () => ({ log: ["a"] }), { next: "END", timeoutMs: 1000 }).compile();
    const after = workflow("timed", { state }).node("a", () => ({ log: ["a"] }), { next: "END", timeoutMs: 5000 }).compile();
    const store = await memory.open();
    await createEngine({ store, workflows: [before], worker: false }).start(before);
    const told: LeftBehind[] = [];
    await harness.engine([after], { store, worker: { onLeftBehind: (left) => told.push(left) } });
    await until(() => told.length > 0, 5_000, "the left-behind report");
    expect(told).toEqual([
      {
        workflow: "timed",
        version: before.version,
        status: "queued",
        count: 1,
        why: `this process has workflow timed only in version ${after.version}: its definition changed since runs of version ${before.version} started (node a's timeoutMs)`,
      },
    ]);
  });
});

describe("two workflows built in code with the same graph", () => {
  const harness = engineHarness(memory);

  it("are refused together when their code differs (they share a version; a run would run the code registered last)", async () => {
    const a = workflow("same", { state }).node("a", () => ({ log: ["A"] }), { next: "END" }).compile();
    const b = workflow("same", { state }).node("a", () => ({ log: ["B"] }), { next: "END" }).compile();
    expect(a.version).toBe(b.version);
    const refusal = `workflow same version ${a.version} is already registered with other code (node a's function differs): two workflows with the same graph have the same version, so a run of either would run whichever was registered last; give them different names, or register one`;
    expect(() => createEngine({ workflows: [a, b], worker: false })).toThrow(refusal);
    const engine = await harness.engine([a]);
    await expect(engine.start(b)).rejects.toThrow(refusal);
    // The same workflow again is no conflict, nor is one factory's workflow built twice (as a sub-workflow, say).
    expect((await (await engine.start(a)).wait({ timeoutMs: 5_000 })).status).toBe("succeeded");
    const build = () => workflow("built", { state }).node("a", () => ({ log: ["built"] }), { next: "END" }).compile();
    expect(() => createEngine({ workflows: [build(), build()], worker: false })).not.toThrow();
  });
});

describe("a node that holds the event loop past its worker's lease", () => {
  const harness = engineHarness(memory);

  it("ends that worker's execution saying the loop was held past the lease, and what to do", async () => {
    const ends: string[] = [];
    const holder = workflow("holder", { state })
      .node(
        "crunch",
        async (_s, ctx) => {
          const until = Date.now() + 400;
          while (Date.now() < until); // computes without awaiting: no timer of this process fires
          // Meanwhile another worker took the run over, its lease having run out.
          await engine.store.claimRun({ owner: "other", leaseMs: 60_000, runId: ctx.runId });
          return { log: ["crunched"] };
        },
        { next: "END" },
      )
      .compile();
    const engine = await harness.engine([holder], { worker: { leaseMs: 150, onRunEnd: (_id, end) => ends.push("why" in end ? end.why : end.error) } });
    await engine.start(holder);
    await until(() => ends.length > 0, 5_000, "the execution to end");
    expect(ends[0]).toMatch(
      /^lease lost: run \S+ was taken over by worker other, which is running it now; this worker's attempt was discarded\. This process's event loop was held for \d+\.\d s \(by a node computing without awaiting, or the process was stopped or suspended\), past the 0\.15 s lease, so it could not renew it; a node that computes that long without awaiting holds its whole worker: await in the work, move it to a worker thread, or give workers a longer lease \(pitwall worker --lease, WorkerOptions\.leaseMs\)$/,
    );
    // To the worker, the held loop looks like a store that did not answer: it takes over no run for a lease.
    expect(harness.notices.of("takeovers-held")[0]?.message).toMatch(
      /^the store answers again after \d+\.\d s without an answer \(the store or the network was down, or this process was held or stopped\), longer than the 0\.15 s lease: this worker renews the leases of its 1 run, and for 0\.15 s takes over no run/,
    );
  });
});

describe("a lost worker's run of a version nobody can run, under its workflow's runsAtOnce", () => {
  const harness = engineHarness(memory);

  it("is reported as holding a place under the limit, which the workflow's queued runs wait for", async () => {
    const limits = { runsAtOnce: 1 };
    const before = workflow("limited", { state, limits }).node("a", () => ({ log: ["a"] }), { next: "END" }).compile();
    const after = workflow("limited", { state, limits }).node("a", () => ({ log: ["a"] }), { next: "b" }).node("b", () => ({ log: ["b"] }), { next: "END" }).compile();
    const store = await memory.open();
    const stuck = await createEngine({ store, workflows: [before], worker: false }).start(before);
    // Its worker claimed it, then vanished: the lease runs out with nobody left to take it over.
    expect((await store.claimRun({ owner: "gone", leaseMs: 1 }))?.run.id).toBe(stuck.id);
    await new Promise((resolve) => setTimeout(resolve, 10));
    const told: LeftBehind[] = [];
    const engine = await harness.engine([after], { store, worker: { onLeftBehind: (left) => told.push(left) } });
    const waiting = await engine.start(after);
    await until(() => told.length > 0, 5_000, "the left-behind report");
    expect(told).toEqual([{ workflow: "limited", version: before.version, status: "orphaned", count: 1, why: expect.stringContaining("its definition changed"), runsAtOnce: 1 }]);
    expect(leftBehindText(told[0]!)).toMatch(/^1 running run whose worker is gone \(lease ran out\) of limited .*; it holds a place under the workflow's limits\.runsAtOnce \(1\), which its queued runs wait for too$/);
    expect((await store.getRun(waiting.id))?.status).toBe("queued");
  });
});
