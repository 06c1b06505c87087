import { describe, expect, it } from "vitest";
import { z } from "zod";
import { workflow } from "../../engine/index.js";
import { newId } from "../../engine/ids.js";
import { newTaskRecord } from "../../engine/runtime/transitions.js";
import { engineHarness, sleep } from "../support/engine.js";
import { storeFactories } from "../support/stores.js";

const state = z.object({ log: z.array(z.string()).default([]) });

describe.each(storeFactories)("an at-most-once node whose worker was lost ($name store)", (factory) => {
  const harness = engineHarness(factory);

  it("tells the operator deciding on an at-most-once node after a crash which of its calls had not finished, and which a retry gets back", async () => {
    const made: string[] = [];
    const wf = workflow("once-calls", { state, reducers: { log: "append" } })
      .node("charge", async (_s, ctx) => {
        const order = await ctx.call("lookup", () => (made.push("lookup"), "order 7"));
        await ctx.call("pay", () => (made.push("pay"), "paid"), { input: { amount: 5 } });
        return { log: [`charged ${order}`] };
      }, { atMostOnce: true, next: "END" })
      .compile();
    const engine = await harness.engine([wf], { worker: false });
    const run = await engine.start(wf);
    // Its worker finished lookup, was paying, and died.
    const claim = (await engine.store.claimRun({ owner: "dead", leaseMs: 100, runId: run.id }))!;
    const at = Date.now();
    const id = `${run.id}:1:charge`;
    const attempts = [{ n: 1, worker: "dead", startedAt: at, endedAt: null, outcome: null }];
    const running = { status: "running" as const, worker: "dead", startedAt: at, attempts };
    const node = { ...newTaskRecord({ id, runId: run.id, step: 1, node: "charge", index: null, createdAt: at }), ...running };
    const call = (key: string, createdAt: number) => newTaskRecord({ id: `${id}/${key}`, runId: run.id, step: 1, node: "charge", index: null, parent: id, call: key, createdAt });
    const lookup = { ...call("lookup", at + 1), ...running, status: "succeeded" as const, output: "order 7", parentAttempt: 1, endedAt: at, attempts: [{ ...attempts[0]!, endedAt: at, outcome: "succeeded" as const }] };
    const pay = { ...call("pay", at + 2), ...running, input: { amount: 5 }, parentAttempt: 1 };
    await engine.store.commit({ id: newId("c"), runId: run.id, fence: claim.fence, tasks: [node, lookup, pay] });
    await sleep(150);
    const survivor = await harness.engine([wf], { store: engine.store });

    expect(await run.wait()).toMatchObject({ status: "paused", reason: "interrupt" });
    const [pending] = await engine.store.listInterrupts({ runId: run.id, status: "pending" });
    expect(pending!.request.question).toBe(
      'Node "charge" runs at most once, and its worker was lost while it ran. It may have done part of its work. Its call pay had not finished and may have taken effect: a retry makes it again; it gets back what lookup returned. Run it again, or skip it?',
    );
    expect(pending!.request.data).toEqual({ finished: ["lookup"], unfinished: [{ call: "pay", input: { amount: 5 } }] });
    await survivor.operator("ann").resolve(pending!.id, { decision: "retry" });
    expect((await run.wait()).status).toBe("succeeded");
    expect(made).toEqual(["pay"]);
    expect((await run.state()).log).toEqual(["charged order 7"]);
  });
});
