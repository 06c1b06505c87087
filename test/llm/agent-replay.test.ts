import { describe, expect, it } from "vitest";
import { z } from "zod";
import { defineTool } from "../../engine/index.js";
import { engineHarness } from "../support/engine.js";
import { chatServerEach, completion, type Received } from "../support/chat-server.js";
import { compileJson, orderTools, serverModel } from "../support/llm.js";
import { storeFactories } from "../support/stores.js";

/** On SQLite: what a node that runs again builds on must survive the store, not only a worker's memory. */
const harness = engineHarness(storeFactories.find((f) => f.name === "sqlite")!);

type Message = { role: string; content: string | null };
const userText = (request: Received) => (request.body.messages as Message[]).filter((m) => m.role === "user").at(-1)!.content!;
/** What the model was told of the tool calls of its last answer. */
const toolResults = (request: Received) => {
  const messages = request.body.messages as Message[];
  return messages.slice(messages.findLastIndex((m) => m.role === "assistant") + 1).map((m) => m.content);
};

const refundAgent = (extra: Record<string, unknown> = {}) => ({
  name: "refund-agent",
  state: { ticket: { type: "string" }, resolution: { type: "string", default: "" } },
  start: "agent",
  nodes: {
    agent: {
      kind: "agent",
      prompt: "Resolve: {{ticket}}",
      tools: ["lookupOrder", "issueRefund", "notify"],
      requireApproval: ["issueRefund"],
      output: "resolution",
      next: "END",
      ...extra,
    },
  },
});

const toolCall = (name: string, args: Record<string, unknown>) => ({ kind: "json" as const, body: completion({ toolCalls: [{ name, arguments: args }] }) });
const refund = (amount: number) => toolCall("issueRefund", { orderId: "A-1001", amount });
const answer = (content: string) => ({ kind: "json" as const, body: completion({ content }) });

/** The order tools, and `notify`, which fails as often as told. */
function tools(notifyFailures: number) {
  const { tools: orderTools_, calls } = orderTools();
  let failures = notifyFailures;
  const notify = defineTool({
    description: "Tells the customer",
    parameters: z.object({ text: z.string() }),
    retry: { maxAttempts: 1 },
    run: ({ text }) => {
      calls.push({ tool: "notify", args: { text } });
      if (failures-- > 0) throw new Error("mail server down");
      return { sent: true };
    },
  });
  return { tools: { ...orderTools_, notify }, calls };
}

describe("an agent node that runs again", () => {
  const server = chatServerEach();

  /** Starts the refund agent (with `extra` fields) on these tools, on a ticket. */
  async function startAgent(tools: Record<string, unknown>, extra: Record<string, unknown> = {}, ticket = "Damaged parcel A-1001") {
    const { workflow } = compileJson(refundAgent(extra), { tools, model: serverModel(server, { stream: false }) });
    const engine = await harness.engine([workflow]);
    return { engine, run: await engine.start(workflow, { ticket }) };
  }

  /** Waits for the run to pause at an interrupt and gives its answer (`approve` by default); returns the interrupt. */
  async function answerNext(
    engine: Awaited<ReturnType<typeof startAgent>>["engine"],
    run: Awaited<ReturnType<typeof startAgent>>["run"],
    answer: { decision: string; response?: unknown; patch?: unknown } = { decision: "approve" },
  ) {
    expect(await run.wait()).toMatchObject({ status: "paused", reason: "interrupt" });
    const [pending] = await engine.store.listInterrupts({ runId: run.id, status: "pending" });
    await engine.operator("ann").resolve(pending!.id, answer);
    return pending!;
  }

  it("does not run an approved refund a second time when a retry after a later tool's failure asks for it again", async () => {
    const { tools: all, calls } = tools(1);
    const notify = toolCall("notify", { text: "Refunded 40." });
    server.reply(refund(40), notify, refund(40), notify, answer("Refunded 40 and told the customer."));
    const { engine, run } = await startAgent(all, { retry: { maxAttempts: 2, backoffMs: 1 } });
    await answerNext(engine, run);

    expect((await run.wait()).status).toBe("succeeded");
    // The retry asked the model again (five answers in all), and ran notify again, but not the refund.
    expect(server.received).toHaveLength(5);
    expect(calls.map((c) => c.tool)).toEqual(["issueRefund", "notify", "notify"]);
    expect(await engine.store.listInterrupts({ runId: run.id })).toHaveLength(1);
    const tasks = await engine.store.listTasks(run.id);
    expect(tasks.find((t) => t.parent === null)!.attempts.map((a) => a.outcome)).toEqual(["interrupted", "failed", "succeeded"]);
    expect(tasks.find((t) => t.call === "tool-1-issueRefund")!.attempts).toHaveLength(1);
  });

  it("hands a retry the refund its model asks for again at another turn, without running it or asking for its approval again", async () => {
    const { tools: all, calls } = tools(1);
    const lookup = toolCall("lookupOrder", { orderId: "A-1001" });
    const notify = toolCall("notify", { text: "Refunded 40." });
    server.reply(refund(40), lookup, notify, lookup, refund(40), notify, answer("Refunded 40."));
    const { engine, run } = await startAgent(all, { retry: { maxAttempts: 2, backoffMs: 1 } });
    await answerNext(engine, run);

    expect((await run.wait()).status).toBe("succeeded");
    // The retry looked the order up first this time (run again: it is readOnly); its refund, now at turn 2, was the one made at turn 1.
    expect(calls.map((c) => c.tool)).toEqual(["issueRefund", "lookupOrder", "notify", "lookupOrder", "notify"]);
    expect(await engine.store.listInterrupts({ runId: run.id })).toHaveLength(1);
    expect(toolResults(server.received[5]!)).toEqual(['{"refunded":40,"orderId":"A-1001"}']);
    const refunds = (await engine.store.listTasks(run.id)).filter((t) => t.call?.endsWith("issueRefund"));
    expect(refunds.map((t) => [t.call, t.attempts.length])).toEqual([["tool-1-issueRefund", 1]]);
    const logs = await engine.store.readEvents({ runId: run.id, types: ["node.log"] });
    expect(logs.map((e) => (e.payload as { message: string }).message)).toContain("issueRefund was not run again: tool-1-issueRefund ran it before the node's last failure");
  });

  it("hands each call the retry's model repeats one refund made before the failure: two asked for again stay two, a third runs", async () => {
    const { tools: all } = tools(1);
    const made: string[] = [];
    const issueRefund = defineTool({
      description: "Refunds part of an order",
      parameters: z.object({ orderId: z.string(), amount: z.number() }),
      run: ({ amount }, ctx) => (made.push(ctx.idempotencyKey), { refunded: amount, id: ctx.idempotencyKey }),
    });
    const refunds = (n: number) => ({ kind: "json" as const, body: completion({ toolCalls: Array.from({ length: n }, () => ({ name: "issueRefund", arguments: { orderId: "A-1001", amount: 40 } })) }) });
    const notify = toolCall("notify", { text: "Refunded." });
    server.reply(refunds(2), notify, toolCall("lookupOrder", { orderId: "A-1001" }), refunds(3), notify, answer("Refunded 40 three times."));
    const { run } = await startAgent({ ...all, issueRefund }, { requireApproval: [], retry: { maxAttempts: 2, backoffMs: 1 } });

    expect((await run.wait()).status).toBe("succeeded");
    expect(made).toHaveLength(3);
    expect(new Set(made).size).toBe(3);
    const results = toolResults(server.received[4]!).map((text) => (JSON.parse(text!) as { id: string }).id);
    expect(results).toEqual([expect.stringMatching(/\/tool-1-issueRefund$/), expect.stringMatching(/\/tool-1-issueRefund-2$/), expect.stringMatching(/\/tool-2-issueRefund-3$/)]);
    expect(results[2]).toBe(made[2]);
  });

  it("keeps a refund made before the failure when the retry asks another at its turn, and hands it to the retry's call at a later turn", async () => {
    const { tools: all, calls } = tools(1);
    const notify = toolCall("notify", { text: "Refunded." });
    server.reply(refund(40), notify, refund(45), refund(40), notify, answer("Refunded 45 and 40."));
    const { engine, run } = await startAgent(all, { retry: { maxAttempts: 2, backoffMs: 1 } });
    for (let i = 0; i < 2; i++) await answerNext(engine, run);

    expect((await run.wait()).status).toBe("succeeded");
    expect(calls.filter((c) => c.tool === "issueRefund").map((c) => (c.args as { amount: number }).amount)).toEqual([40, 45]);
    expect(await engine.store.listInterrupts({ runId: run.id })).toHaveLength(2);
    expect(toolResults(server.received[4]!)).toEqual(['{"refunded":40,"orderId":"A-1001"}']);
    // Both refunds of turn 1 are kept, each under its own idempotency key.
    const turn1 = (await engine.store.listTasks(run.id)).filter((t) => t.call === "tool-1-issueRefund");
    expect(turn1.map((t) => [t.idempotencyKey.replace(/^.*\//, ""), t.output])).toEqual([
      ["tool-1-issueRefund", { refunded: 40, orderId: "A-1001" }],
      ["tool-1-issueRefund@3", { refunded: 45, orderId: "A-1001" }],
    ]);
  });

  it("hands a retry the refund an operator changed the arguments of, when its model asks for what it asked before", async () => {
    const { tools: all, calls } = tools(1);
    const notify = toolCall("notify", { text: "Refunded." });
    server.reply(refund(50), notify, toolCall("lookupOrder", { orderId: "A-1001" }), refund(50), notify, answer("Refunded 40."));
    const { engine, run } = await startAgent(all, { retry: { maxAttempts: 2, backoffMs: 1 } });
    await answerNext(engine, run, { decision: "edit", response: { orderId: "A-1001", amount: 40 } });

    expect((await run.wait()).status).toBe("succeeded");
    expect(calls.filter((c) => c.tool === "issueRefund").map((c) => c.args)).toEqual([{ orderId: "A-1001", amount: 40 }]);
    expect(await engine.store.listInterrupts({ runId: run.id })).toHaveLength(1);
    expect(toolResults(server.received[4]!)).toEqual(['(operator:ann changed the arguments to {"orderId":"A-1001","amount":40} before it ran.) {"refunded":40,"orderId":"A-1001"}']);
  });

  it("still hands a retry the rejection of a later call after a refund it was handed without asking again", async () => {
    const { tools: all, calls } = tools(1);
    const notify = toolCall("notify", { text: "Refunded 40." });
    server.reply(refund(40), refund(400), notify, toolCall("lookupOrder", { orderId: "A-1001" }), refund(40), refund(400), notify, answer("Refunded 40."));
    const { engine, run } = await startAgent(all, { retry: { maxAttempts: 2, backoffMs: 1 } });
    await answerNext(engine, run);
    await answerNext(engine, run, { decision: "reject" });

    expect((await run.wait()).status).toBe("succeeded");
    expect(calls.filter((c) => c.tool === "issueRefund")).toHaveLength(1);
    expect(await engine.store.listInterrupts({ runId: run.id })).toHaveLength(2);
    expect(toolResults(server.received[6]!)).toEqual(["Not run: operator:ann rejected this call."]);
  });

  it("runs the refund the retry's model asks for with other arguments, once it is approved", async () => {
    const { tools: all, calls } = tools(1);
    server.reply(refund(40), toolCall("notify", { text: "Refunded 40." }), refund(45), answer("Refunded 45."));
    const { engine, run } = await startAgent(all, { retry: { maxAttempts: 2, backoffMs: 1 } });
    for (let i = 0; i < 2; i++) await answerNext(engine, run);
    expect((await run.wait()).status).toBe("succeeded");
    expect(calls.filter((c) => c.tool === "issueRefund").map((c) => c.args)).toEqual([
      { orderId: "A-1001", amount: 40 },
      { orderId: "A-1001", amount: 45 },
    ]);
  });

  it("asks the model again, not replaying its recorded answer, when an operator edited what its prompt says at the approval", async () => {
    const { tools: all, calls } = tools(0);
    server.reply(refund(50), refund(5), answer("Refunded 5."));
    const { engine, run } = await startAgent(all, {}, "Refund 50 on A-1001");
    expect(await run.wait()).toMatchObject({ status: "paused", reason: "interrupt" });
    await engine.operator("ann").updateState(run.id, { ticket: "Refund 5 on A-1001" });
    await answerNext(engine, run);

    // The approval of 50 does not cover the 5 the model now asks for: the operator is asked again.
    const again = await answerNext(engine, run);
    expect(again.request.data).toEqual({ tool: "issueRefund", arguments: { orderId: "A-1001", amount: 5 } });
    expect((await run.wait()).status).toBe("succeeded");

    expect(server.received.map(userText)).toEqual(["Resolve: Refund 50 on A-1001", "Resolve: Refund 5 on A-1001", "Resolve: Refund 5 on A-1001"]);
    expect(calls).toEqual([{ tool: "issueRefund", args: { orderId: "A-1001", amount: 5 } }]);
    const remade = await engine.store.readEvents({ runId: run.id, types: ["task.started"] });
    expect(remade.filter((e) => (e.payload as { inputChanged?: boolean }).inputChanged).map((e) => (e.payload as { call?: string }).call)).toEqual(["model-1"]);
  });

  it("asks again for an approval given with a state edit that changes the tool call the model then asks for", async () => {
    const { tools: all, calls } = tools(0);
    server.reply(refund(50), refund(5), answer("Refunded 5."));
    const { engine, run } = await startAgent(all, {}, "Refund 50 on A-1001");
    await answerNext(engine, run, { decision: "approve", patch: { ticket: "Refund 5 on A-1001" } });

    expect(await run.wait()).toMatchObject({ status: "paused", reason: "interrupt" });
    expect(calls).toEqual([]);
    const [again] = await engine.store.listInterrupts({ runId: run.id, status: "pending" });
    expect(again!.request.data).toEqual({ tool: "issueRefund", arguments: { orderId: "A-1001", amount: 5 } });
  });

  it("tells the model a tool's failure with toolErrors tell-model, and hands the same failure back when the node runs again", async () => {
    const { tools: all, calls } = tools(5);
    server.reply(toolCall("notify", { text: "On its way." }), refund(40), answer("Refunded 40; the mail server is down, so I could not tell the customer."));
    const { engine, run } = await startAgent(all, { toolErrors: "tell-model" });
    expect(await run.wait()).toMatchObject({ status: "paused", reason: "interrupt" });
    const toolMessage = (server.received[1]!.body.messages as { role: string; content: string }[]).find((m) => m.role === "tool")!;
    expect(toolMessage.content).toBe("Error: notify failed: mail server down");
    await answerNext(engine, run);
    expect((await run.wait()).status).toBe("succeeded");
    // The node ran again after the approval: notify was not tried again, so the model's recorded answers still fit.
    expect(calls.map((c) => c.tool)).toEqual(["notify", "issueRefund"]);
    expect(server.received).toHaveLength(3);
    const warned = await engine.store.readEvents({ runId: run.id, types: ["node.log"] });
    expect(warned.map((e) => (e.payload as { message: string }).message)).toContain("notify failed; the model is told: mail server down");
  });

  it("fails the node when a tool fails past its retries, unless told to tell the model", async () => {
    const { tools: all } = tools(5);
    server.reply(toolCall("notify", { text: "On its way." }));
    const { run } = await startAgent(all);
    expect(await run.wait()).toMatchObject({ status: "paused", reason: "retries-exhausted", error: { message: expect.stringContaining("mail server down") } });
  });

  it("runs the tool calls of one turn together, once every approval among them is given", async () => {
    const started: string[] = [];
    let meet: () => void = () => {};
    const met = new Promise<void>((resolve) => (meet = resolve));
    const both = async (name: string) => {
      started.push(name);
      if (started.length === 2) meet();
      // Run one after the other, the first would wait here for the second forever: the timeout says so.
      await Promise.race([met, new Promise((_r, reject) => setTimeout(() => reject(new Error(`${name} ran alone`)), 3000))]);
      return { ok: name };
    };
    const parallelTools = {
      trackShipment: defineTool({ description: "Where the parcel is", parameters: z.object({ orderId: z.string() }), readOnly: true, run: () => both("trackShipment") }),
      issueRefund: defineTool({ description: "Refunds", parameters: z.object({ orderId: z.string(), amount: z.number() }), run: () => both("issueRefund") }),
    };
    server.reply(
      { kind: "json", body: completion({ toolCalls: [{ name: "trackShipment", arguments: { orderId: "A-1001" } }, { name: "issueRefund", arguments: { orderId: "A-1001", amount: 9 } }] }) },
      answer("Done."),
    );
    const { engine, run } = await startAgent(parallelTools, { tools: ["trackShipment", "issueRefund"] });
    expect(await run.wait()).toMatchObject({ status: "paused", reason: "interrupt" });
    expect(started).toEqual([]);
    await answerNext(engine, run);
    expect((await run.wait()).status).toBe("succeeded");
    expect(started.sort()).toEqual(["issueRefund", "trackShipment"]);
    const tool = (server.received[1]!.body.messages as { role: string; content: string }[]).filter((m) => m.role === "tool").map((m) => m.content);
    expect(tool).toEqual(['{"ok":"trackShipment"}', '{"ok":"issueRefund"}']);
  });

  it("replays every recorded answer and result when the node runs again on the same state", async () => {
    const { tools: all, calls } = tools(0);
    server.reply(toolCall("lookupOrder", { orderId: "A-1001" }), refund(40), answer("Refunded 40."));
    const { engine, run } = await startAgent(all);
    await answerNext(engine, run);
    expect((await run.wait()).status).toBe("succeeded");
    expect(server.received).toHaveLength(3);
    expect(calls.map((c) => c.tool)).toEqual(["lookupOrder", "issueRefund"]);
    const started = await engine.store.readEvents({ runId: run.id, types: ["task.started"] });
    expect(started.some((e) => (e.payload as { inputChanged?: boolean }).inputChanged)).toBe(false);
  });
});
