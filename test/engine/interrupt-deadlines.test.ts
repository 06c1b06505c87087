import { describe, expect, it } from "vitest";
import { z } from "zod";
import { WorkflowRegistry, Worker, actionRegistry, workflow } from "../../engine/index.js";
import { ended, engineHarness, sleep } from "../support/engine.js";
import { storeFactories } from "../support/stores.js";

const state = z.object({ draft: z.string().default("v1"), log: z.array(z.string()).default([]), answer: z.string().default("") });

/** `review` asks for approval and answers itself `decision` after `seconds`; `timeout` routes to `escalate` when given. */
function reviewed(name: string, seconds: number, decision: "approve" | "reject", timeoutRoute: boolean) {
  const builder = workflow(name, { state, reducers: { log: "append" } })
    .approval("review", {
      question: "Send {{draft}}?",
      deadline: { seconds, decision },
      routes: { approve: "send", reject: "END", ...(timeoutRoute ? { timeout: "escalate" } : {}) },
    })
    .node("send", () => ({ log: ["sent"] }), { next: "END" });
  return (timeoutRoute ? builder.node("escalate", () => ({ log: ["escalated"] }), { next: "END" }) : builder).compile();
}

describe.each(storeFactories)("interrupt deadlines ($name store)", (factory) => {
  const harness = engineHarness(factory);

  it("answers an approval nobody answered with its deadline's decision, as actor timeout, and follows the timeout route", async () => {
    const wf = reviewed("deadline-escalates", 0.3, "reject", true);
    const engine = await harness.engine([wf]);
    const run = await engine.start(wf);
    expect(await run.wait()).toMatchObject({ status: "paused" });
    const [pending] = await engine.store.listInterrupts({ runId: run.id, status: "pending" });
    expect(pending!.deadline).toMatchObject({ decision: "reject" });
    expect(pending!.deadline!.at - pending!.createdAt).toBeGreaterThanOrEqual(250);
    expect((await ended(engine, run.id)).status).toBe("succeeded");
    expect((await run.state()).log).toEqual(["escalated"]);
    const resolved = await engine.store.getInterrupt(pending!.id);
    expect(resolved!.resolution).toMatchObject({ decision: "reject", actor: "timeout", timedOut: true });
    expect(resolved!.resolution!.reason).toMatch(/^nobody answered within 0\.3 s \(deadline \d{4}-\d\d-\d\dT/);
    const events = await engine.store.readEvents({ runId: run.id, types: ["interrupt.created", "interrupt.resolved"] });
    expect(events.map((e) => [e.type, e.actor, e.payload])).toEqual([
      ["interrupt.created", expect.any(String), expect.objectContaining({ deadline: pending!.deadline!.at })],
      ["interrupt.resolved", "timeout", expect.objectContaining({ decision: "reject", timedOut: true })],
    ]);
    const commands = await engine.store.listCommands({ runId: run.id });
    expect(commands.map((c) => [c.type, c.actor, c.status])).toEqual([["resolve", "timeout", "accepted"]]);
  });

  it("without a timeout route, follows the route of the deadline's decision", async () => {
    const wf = reviewed("deadline-approves", 0.2, "approve", false);
    const engine = await harness.engine([wf]);
    const run = await engine.start(wf);
    expect((await ended(engine, run.id)).status).toBe("succeeded");
    expect((await run.state()).log).toEqual(["sent"]);
  });

  it("leaves an answer given in time as it is", async () => {
    const wf = reviewed("answered-in-time", 1.5, "reject", true);
    const engine = await harness.engine([wf]);
    const run = await engine.start(wf);
    await run.wait();
    const [pending] = await engine.store.listInterrupts({ runId: run.id, status: "pending" });
    await engine.operator("ann").resolve(pending!.id, { decision: "approve" });
    expect((await ended(engine, run.id)).status).toBe("succeeded");
    await sleep(pending!.deadline!.at - Date.now() + 200);
    expect((await run.state()).log).toEqual(["sent"]);
    expect((await engine.store.getInterrupt(pending!.id))!.resolution).toMatchObject({ decision: "approve", actor: "operator:ann" });
    expect((await engine.store.listCommands({ runId: run.id })).map((c) => c.actor)).toEqual(["operator:ann"]);
  });

  it("hands ctx.interrupt the deadline's answer and response, marked timedOut", async () => {
    const wf = workflow("asks-with-deadline", { state })
      .node(
        "ask",
        async (_s, ctx) => {
          const answer = await ctx.interrupt({
            question: "Which region?",
            decisions: ["respond", "reject"],
            responseSchema: z.object({ region: z.string() }),
            deadline: { seconds: 0.2, decision: "respond", response: { region: "eu" } },
          });
          return { answer: `${answer.decision} ${JSON.stringify(answer.response)} ${answer.actor} ${answer.timedOut === true}` };
        },
        { next: "END" },
      )
      .compile();
    const engine = await harness.engine([wf]);
    const run = await engine.start(wf);
    expect((await ended(engine, run.id)).status).toBe("succeeded");
    expect((await run.state()).answer).toBe('respond {"region":"eu"} timeout true');
  });

  it("lets a deadline's answer stand when the node runs again on a state edited meanwhile: nobody read the request", async () => {
    let asked = 0;
    const wf = workflow("deadline-after-edit", { state })
      .node(
        "ask",
        async (s, ctx) => {
          asked++;
          const answer = await ctx.interrupt({ question: `Delete ${s.draft}?`, deadline: { seconds: 0.4, decision: "reject" } });
          return { answer: `${answer.decision} by ${answer.actor}` };
        },
        { next: "END" },
      )
      .compile();
    const engine = await harness.engine([wf]);
    const run = await engine.start(wf);
    await run.wait();
    await engine.operator("ann").updateState(run.id, { draft: "v2" });
    expect((await ended(engine, run.id)).status).toBe("succeeded");
    expect((await run.state()).answer).toBe("reject by timeout");
    expect(await engine.store.listInterrupts({ runId: run.id })).toHaveLength(1);
  });

  it("fails the node at once when its deadline does not fit its request", async () => {
    const wf = workflow("bad-deadline", { state })
      .node("ask", async (_s, ctx) => (await ctx.interrupt({ question: "Go?", deadline: { seconds: 60, decision: "maybe" } }), {}), { next: "END", retry: { maxAttempts: 1 } })
      .compile();
    const engine = await harness.engine([wf]);
    const run = await engine.start(wf);
    const paused = await run.wait();
    expect(paused.error?.message).toBe('node "ask" failed after 1 attempt: interrupt deadline: decision "maybe" is not one of the request\'s decisions (approve, reject)');
    expect(await engine.store.listInterrupts({ runId: run.id })).toEqual([]);
  });

  it("answers a deadline that passed while no worker ran as soon as one starts, once among several workers", async () => {
    const wf = reviewed("deadline-while-down", 1, "reject", true);
    const store = await factory.open();
    try {
      const first = await harness.engine([wf], { store });
      const run = await first.start(wf);
      await run.wait();
      await first.close();
      const [pending] = await store.listInterrupts({ runId: run.id });
      await sleep(pending!.deadline!.at - Date.now() + 50);
      expect((await store.getRun(run.id))!.status).toBe("paused");
      const [a, b] = [await harness.engine([wf], { store }), await harness.engine([wf], { store })];
      expect((await ended(a, run.id)).status).toBe("succeeded");
      await sleep(200);
      const commands = await store.listCommands({ runId: run.id });
      expect(commands.map((c) => [c.actor, c.status])).toEqual([["timeout", "accepted"]]);
      expect((await b.store.readEvents({ runId: run.id, types: ["operator.refused"] })).length).toBe(0);
    } finally {
      await store.close();
    }
  });

  it("is answered by a draining worker (pitwall worker --once)", async () => {
    const wf = reviewed("deadline-drained", 1, "reject", true);
    const engine = await harness.engine([wf], { worker: false });
    const run = await engine.start(wf);
    const worker = () => new Worker(engine.store, new WorkflowRegistry(engine.store, actionRegistry({}), [wf]), { pollMs: 50 });
    await worker().drain();
    expect((await engine.store.getRun(run.id))!.status).toBe("paused");
    const [pending] = await engine.store.listInterrupts({ runId: run.id });
    await sleep(pending!.deadline!.at - Date.now() + 50);
    await worker().drain();
    expect((await engine.store.getRun(run.id))!.status).toBe("succeeded");
    expect((await run.state()).log).toEqual(["escalated"]);
  });
});
