import { describe, expect, it } from "vitest";
import { z } from "zod";
import { StaleFenceError, workflow, type Engine } from "../../engine/index.js";
import { newId } from "../../engine/ids.js";
import { newTaskRecord } from "../../engine/runtime/transitions.js";
import { engineHarness, sleep } from "../support/engine.js";
import { storeFactories } from "../support/stores.js";

const wf = workflow("fenced", { state: z.object({ n: z.number().default(0) }) })
  .node("work", (s) => ({ n: s.n + 1 }), { next: "END" })
  .compile();

const LEASE_MS = 200;

/** A worker that claims the run, starts its node, and then stalls (stopped, or its event loop held) past its lease. */
async function stalledWorker(engine: Engine, runId: string): Promise<number> {
  const claim = (await engine.store.claimRun({ owner: "stalled", leaseMs: LEASE_MS, runId }))!;
  const startedAt = Date.now();
  const task = newTaskRecord({ id: `${runId}:1:work`, runId, step: 1, node: "work", index: null, createdAt: startedAt });
  const running = { ...task, status: "running" as const, worker: "stalled", startedAt, attempts: [{ n: 1, worker: "stalled", startedAt, endedAt: null, outcome: null }] };
  await engine.store.commit({ id: newId("c"), runId, fence: claim.fence, tasks: [running] });
  await sleep(LEASE_MS + 50);
  return claim.fence;
}

describe.each(storeFactories)("an operator's change to a run whose worker's lease ran out ($name store)", (factory) => {
  const harness = engineHarness(factory);

  it.each([
    ["cancel", (engine: Engine, runId: string) => engine.operator().cancel(runId, { reason: "not wanted" }), "canceled"],
    ["kill", (engine: Engine, runId: string) => engine.operator().kill(runId, { reason: "stuck" }), "paused"],
  ] as const)("%s fences the stalled worker out: its renewal and its commits are refused, nothing of them recorded", async (_name, act, status) => {
    const engine = await harness.engine([wf], { worker: false });
    const run = await engine.start(wf);
    const fence = await stalledWorker(engine, run.id);
    await act(engine, run.id);
    const before = await engine.store.getRun(run.id);
    expect(before!.status).toBe(status);

    await expect(engine.store.renewLease(run.id, "stalled", fence, LEASE_MS)).rejects.toBeInstanceOf(StaleFenceError);
    const stale = engine.store.commit({ id: newId("c"), runId: run.id, fence, run: { status: "succeeded", endedAt: Date.now() } });
    await expect(stale).rejects.toBeInstanceOf(StaleFenceError);
    expect(await engine.store.getRun(run.id)).toEqual(before);
  });
});
