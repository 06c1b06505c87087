import { describe, expect, it } from "vitest";
import { z } from "zod";
import { Operator, workflow, type OwnerWaiting } from "../../engine/index.js";
import { engineHarness, until } from "../support/engine.js";
import { storeFactories } from "../support/stores.js";

describe("a command waiting on a live worker that is stopping a node", () => {
  const harness = engineHarness(storeFactories[0]!);

  it("is told the worker is stopping the node, never that it may be gone", async () => {
    // The node ignores its signal: the worker waits out its grace period before the cancel is done.
    const wf = workflow("stubborn", { state: z.object({}) }).node("hang", () => new Promise(() => {}), { next: "END" }).compile();
    const engine = await harness.engine([wf], { worker: { leaseMs: 600, killGraceMs: 2_500 } });
    const run = await engine.start(wf);
    await until(async () => (await engine.store.listTasks(run.id)).some((t) => t.status === "running"), 5_000, "the node to run");
    const told: OwnerWaiting[] = [];
    const outcome = await new Operator(engine.store, { onWaiting: (w) => told.push(w) }).cancel(run.id, { reason: "enough" });
    expect(outcome.effect).toBe(`run ${run.id} canceled`);
    expect(told).toEqual([{ runId: run.id, owner: engine.worker!.id, leaseUntil: expect.any(Number), commandId: outcome.command.id, worker: "alive", stopping: ["hang"] }]);
    // What it waited for: the node's grace, which the worker's log names.
    expect(harness.notices.of("abandoned")).toMatchObject([{ runId: run.id, node: "hang", message: expect.stringContaining("ignored its abort signal (a cancel) and was abandoned after the 2.5 s grace") }]);
  });
});
