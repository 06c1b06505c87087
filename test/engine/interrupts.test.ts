import { describe, expect, it } from "vitest";
import { z } from "zod";
import { ConflictError, ValidationError, actionRegistry, loadWorkflowText, workflow } from "../../engine/index.js";
import { engineHarness, sleep } from "../support/engine.js";
import { storeFactories } from "../support/stores.js";

const draftState = z.object({ draft: z.string().default(""), verdict: z.string().default(""), log: z.array(z.string()).default([]) });

describe.each(storeFactories)("interrupts and resuming ($name store)", (factory) => {
  const harness = engineHarness(factory);

  const writer = () =>
    workflow("writer", { state: draftState, reducers: { log: "append" }, interruptBefore: ["send"] })
      .node("write", () => ({ draft: "hello", log: ["write"] }), { next: "send" })
      .node("send", (s) => ({ log: [`send ${s.draft}`] }), { next: "END" })
      .compile();

  it("pauses before a node listed in interruptBefore and runs it after approval", async () => {
    const wf = writer();
    const engine = await harness.engine([wf]);
    const run = await engine.start(wf);
    expect(await run.wait()).toMatchObject({ status: "paused", reason: "interrupt", pendingInterrupts: 1 });
    const [pending] = await engine.store.listInterrupts({ status: "pending" });
    expect(pending).toMatchObject({ kind: "before", node: "send", runId: run.id, request: { decisions: ["approve", "edit", "skip"] } });
    expect((await run.state()).log).toEqual(["write"]);
    await engine.operator("ann").resolve(pending!.id, { decision: "approve" });
    expect((await run.wait()).status).toBe("succeeded");
    expect((await run.state()).log).toEqual(["write", "send hello"]);
  });

  it("lets a run override the workflow's interrupt lists", async () => {
    const wf = writer();
    const engine = await harness.engine([wf]);
    const free = await engine.start(wf, {}, { interruptBefore: [] });
    expect((await free.wait()).status).toBe("succeeded");
    const reviewed = await engine.start(wf, {}, { interruptBefore: [], interruptAfter: ["write"] });
    expect(await reviewed.wait()).toMatchObject({ status: "paused" });
    expect((await engine.store.listInterrupts({ runId: reviewed.id }))[0]).toMatchObject({ kind: "after", node: "write" });
  });

  it("applies an edit made at an after-interrupt before the route is chosen", async () => {
    const wf = workflow("review", { state: draftState, reducers: { log: "append" }, interruptAfter: ["judge"] })
      .node("judge", () => ({ verdict: "reject" }), { routes: { accept: "publish", reject: "discard" }, routeOn: "verdict" })
      .node("publish", () => ({ log: ["published"] }), { next: "END" })
      .node("discard", () => ({ log: ["discarded"] }), { next: "END" })
      .compile();
    const engine = await harness.engine([wf]);
    const run = await engine.start(wf);
    await run.wait();
    expect((await run.state()).verdict).toBe("reject");
    const [pending] = await engine.store.listInterrupts({ runId: run.id, status: "pending" });
    const outcome = await engine.operator("ann").resolve(pending!.id, { decision: "edit", patch: { verdict: "accept" }, reason: "it is fine" });
    expect(outcome.result.checkpointId).toBe(`${run.id}:2`);
    expect((await run.wait()).status).toBe("succeeded");
    expect((await run.state()).log).toEqual(["published"]);
    const edit = await engine.store.getCheckpoint(`${run.id}:2`);
    expect(edit).toMatchObject({ source: "update", actor: "operator:ann", delta: [["verdict", "set", "accept"]] });
    const edited = await engine.store.readEvents({ runId: run.id, types: ["state.edited", "interrupt.resolved"] });
    expect(edited.map((e) => [e.type, e.actor])).toEqual([
      ["state.edited", "operator:ann"],
      ["interrupt.resolved", "operator:ann"],
    ]);
    expect(edited[0]!.payload).toMatchObject({ diff: [{ op: "change", path: "$.verdict", old: "reject", value: "accept" }] });
  });

  it("gives each ctx.interrupt call in a node its own id and returns the answers when the node runs again", async () => {
    let starts = 0;
    const answers: unknown[] = [];
    const wf = workflow("two-questions", { state: draftState })
      .node(
        "ask",
        async (_s, ctx) => {
          starts++;
          const first = await ctx.interrupt({ question: "Name?", decisions: ["respond"] });
          const second = await ctx.interrupt({ question: "Sure?", decisions: ["approve", "reject"] });
          answers.push(first.response, second.decision);
          return { draft: String(first.response), verdict: second.decision };
        },
        { next: "END" },
      )
      .compile();
    const engine = await harness.engine([wf]);
    const run = await engine.start(wf);
    const op = engine.operator("ann");
    await run.wait();
    const [q1] = await engine.store.listInterrupts({ runId: run.id, status: "pending" });
    expect(q1!.request.question).toBe("Name?");
    await op.resolve(q1!.id, { decision: "respond", response: "Ada" });
    await until(async () => (await engine.store.listInterrupts({ runId: run.id, status: "pending" })).length === 1 && (await run.get()).status === "paused");
    const [q2] = await engine.store.listInterrupts({ runId: run.id, status: "pending" });
    expect(q2!.request.question).toBe("Sure?");
    expect(q2!.id).not.toBe(q1!.id);
    await op.resolve(q2!.id, { decision: "approve" });
    expect((await run.wait()).status).toBe("succeeded");
    expect(await run.state()).toMatchObject({ draft: "Ada", verdict: "approve" });
    expect(starts).toBe(3);
    expect(answers).toEqual(["Ada", "approve"]);
  });

  it("routes an approval node by the decision: approve, reject, edit", async () => {
    const wf = workflow("approve-me", { state: draftState, reducers: { log: "append" } })
      .node("draft", () => ({ draft: "v1" }), { next: "review" })
      .approval("review", { question: "Send the draft?", show: ["draft"], routes: { approve: "send", reject: "END" } })
      .node("send", (s) => ({ log: [`sent ${s.draft}`] }), { next: "END" })
      .compile();
    const engine = await harness.engine([wf]);
    const op = engine.operator("ann");
    const decide = async (decision: string, patch?: unknown) => {
      const run = await engine.start(wf);
      await run.wait();
      const [pending] = await engine.store.listInterrupts({ runId: run.id, status: "pending" });
      expect(pending).toMatchObject({ kind: "approval", request: { question: "Send the draft?", show: { draft: "v1" }, decisions: ["approve", "reject", "edit"] } });
      await op.resolve(pending!.id, { decision, ...(patch ? { patch } : {}) });
      expect((await run.wait()).status).toBe("succeeded");
      return (await run.state()).log;
    };
    expect(await decide("approve")).toEqual(["sent v1"]);
    expect(await decide("reject")).toEqual([]);
    expect(await decide("edit", [{ op: "replace", path: "/draft", value: "v2" }])).toEqual(["sent v2"]);
  });

  it("refuses an invalid patch with the failing path and writes nothing", async () => {
    const wf = writer();
    const engine = await harness.engine([wf]);
    const run = await engine.start(wf);
    await run.wait();
    const [pending] = await engine.store.listInterrupts({ runId: run.id, status: "pending" });
    const before = { events: await engine.store.readEvents({ runId: run.id }), checkpoints: await engine.store.listCheckpoints(run.id) };
    const op = engine.operator("ann");
    await expect(op.resolve(pending!.id, { decision: "edit", patch: { draft: 42 } })).rejects.toThrow(
      "edited state is invalid at $.draft: expected string, got number 42",
    );
    await expect(op.resolve(pending!.id, { decision: "edit", patch: [{ op: "replace", path: "/nope/x", value: 1 }] })).rejects.toBeInstanceOf(ValidationError);
    await expect(op.resolve(pending!.id, { decision: "edit", patch: { unknownKey: 1 } })).rejects.toThrow("unknown key unknownKey");
    await expect(op.resolve(pending!.id, { decision: "reject" })).rejects.toThrow('decision "reject" is not allowed for interrupt');
    expect(await engine.store.listCheckpoints(run.id)).toEqual(before.checkpoints);
    expect((await engine.store.getInterrupt(pending!.id))!.status).toBe("pending");
    const after = await engine.store.readEvents({ runId: run.id });
    const added = after.slice(before.events.length).map((e) => e.type);
    expect(new Set(added)).toEqual(new Set(["operator.requested", "operator.refused"]));
    expect((await run.get()).status).toBe("paused");
  });

  it("refuses a second resolution of the same interrupt, saying who resolved it", async () => {
    const wf = writer();
    const engine = await harness.engine([wf], { worker: false });
    const worker = await harness.engine([wf], { store: engine.store });
    const run = await engine.start(wf);
    await run.wait();
    const [pending] = await engine.store.listInterrupts({ runId: run.id, status: "pending" });
    await worker.worker!.stop();
    const results = await Promise.allSettled([
      engine.operator("ann").resolve(pending!.id, { decision: "approve" }),
      engine.operator("bob").resolve(pending!.id, { decision: "approve" }),
    ]);
    expect(results.filter((r) => r.status === "fulfilled")).toHaveLength(1);
    const loser = results.find((r) => r.status === "rejected") as PromiseRejectedResult;
    expect(loser.reason).toBeInstanceOf(ConflictError);
    expect(loser.reason.message).toMatch(/already resolved by operator:(ann|bob) at .* \(approve\)/);
    const resolved = await engine.store.readEvents({ runId: run.id, types: ["interrupt.resolved"] });
    expect(resolved).toHaveLength(1);
  });

  it("keeps the writes of finished parallel siblings and re-runs only the interrupted branch", async () => {
    const calls: Record<string, number> = {};
    const count = (name: string) => (calls[name] = (calls[name] ?? 0) + 1);
    const wf = workflow("branches", { state: draftState, reducers: { log: "append" } })
      .node("split", () => ({}), { next: ["a", "b", "c"] })
      .node("a", () => (count("a"), { log: ["a"] }), { next: "join" })
      .node("b", async (_s, ctx) => {
        count("b");
        const answer = await ctx.interrupt({ question: "go on?" });
        return { log: [`b:${answer.decision}`] };
      }, { next: "join" })
      .node("c", async () => (count("c"), await sleep(30), { log: ["c"] }), { next: "join" })
      .node("join", () => ({ log: ["join"] }), { waitFor: ["a", "b", "c"], next: "END" })
      .compile();
    const engine = await harness.engine([wf]);
    const run = await engine.start(wf);
    expect((await run.wait()).status).toBe("paused");
    const tasks = await engine.store.listTasks(run.id, { step: 2 });
    expect(tasks.map((t) => [t.node, t.status])).toEqual([
      ["a", "succeeded"],
      ["b", "interrupted"],
      ["c", "succeeded"],
    ]);
    const [pending] = await engine.store.listInterrupts({ runId: run.id, status: "pending" });
    await engine.operator("ann").resolve(pending!.id, { decision: "approve" });
    expect((await run.wait()).status).toBe("succeeded");
    expect(calls).toEqual({ a: 1, b: 2, c: 1 });
    expect((await run.state()).log).toEqual(["a", "b:approve", "c", "join"]);
  });

  it("resolves several pending interrupts of a run one by one or together", async () => {
    const wf = workflow("many", { state: draftState, reducers: { log: "append" } })
      .node("split", () => ({}), { next: ["x", "y", "z"] })
      .node("x", async (_s, ctx) => ({ log: [`x:${(await ctx.interrupt({ question: "x?" })).decision}`] }), { next: "END" })
      .node("y", async (_s, ctx) => ({ log: [`y:${(await ctx.interrupt({ question: "y?" })).decision}`] }), { next: "END" })
      .node("z", async (_s, ctx) => ({ log: [`z:${(await ctx.interrupt({ question: "z?" })).decision}`] }), { next: "END" })
      .compile();
    const engine = await harness.engine([wf]);
    const run = await engine.start(wf);
    await run.wait();
    const pending = await engine.store.listInterrupts({ runId: run.id, status: "pending" });
    expect(pending).toHaveLength(3);
    const of = (node: string) => pending.find((i) => i.node === node)!.id;
    const op = engine.operator("ann");
    await op.resolve(of("x"), { decision: "approve" });
    expect(await run.get()).toMatchObject({ status: "paused", pendingInterrupts: 2 });
    await op.resolve([of("y"), of("z")], { decision: "reject" });
    expect((await run.wait()).status).toBe("succeeded");
    expect((await run.state()).log).toEqual(["x:approve", "y:reject", "z:reject"]);
  });

  it("refuses a response that does not match the interrupt's schema", async () => {
    const wf = workflow("schema", { state: draftState })
      .node("ask", async (_s, ctx) => {
        const answer = await ctx.interrupt({ question: "How many?", decisions: ["respond"], responseSchema: z.object({ count: z.number().int().min(1) }) });
        // The response is typed by the request's schema.
        return { draft: String(answer.response!.count) };
      }, { next: "END" })
      .compile();
    const engine = await harness.engine([wf]);
    const run = await engine.start(wf);
    await run.wait();
    const [pending] = await engine.store.listInterrupts({ runId: run.id, status: "pending" });
    const op = engine.operator("ann");
    await expect(op.resolve(pending!.id, { decision: "respond", response: { count: 0 } })).rejects.toThrow(/response to interrupt .* is invalid at \$\.count/);
    await op.resolve(pending!.id, { decision: "respond", response: { count: 3 } });
    expect((await run.wait()).status).toBe("succeeded");
    expect((await run.state()).draft).toBe("3");
  });

  it("runs approval nodes written as JSON", async () => {
    const json = {
      name: "json-approval",
      state: { amount: { type: "number", default: 0 }, sent: { type: "boolean", default: false } },
      start: "prepare",
      nodes: {
        prepare: { action: "pay.prepare", next: "approve" },
        approve: { kind: "approval", question: "Pay this amount?", show: ["amount"], decisions: ["approve", "reject"], routes: { approve: "send", reject: "END" } },
        send: { action: "pay.send", next: "END" },
      },
    };
    const wf = loadWorkflowText(JSON.stringify(json), actionRegistry({ pay: { prepare: () => ({ amount: 120 }), send: () => ({ sent: true }) } }));
    const engine = await harness.engine([wf]);
    const run = await engine.start(wf);
    await run.wait();
    const [pending] = await engine.store.listInterrupts({ runId: run.id, status: "pending" });
    expect(pending!.request).toEqual({ question: "Pay this amount?", show: { amount: 120 }, decisions: ["approve", "reject"] });
    await engine.operator("ann").resolve(pending!.id, { decision: "approve" });
    expect((await run.wait()).status).toBe("succeeded");
    expect((await run.state()).sent).toBe(true);
  });
});

async function until(check: () => Promise<boolean>, timeoutMs = 5000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error("timed out");
    await sleep(10);
  }
}
