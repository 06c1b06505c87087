import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { z } from "zod";
import { defineTool } from "../../engine/index.js";
import { engineHarness } from "../support/engine.js";
import { ChatServer, chunks } from "../support/chat-server.js";
import { compileJson, orderTools, serverModel } from "../support/llm.js";
import { storeFactories } from "../support/stores.js";

const harness = engineHarness(storeFactories[0]!);

const refundAgent = (maxTurns = 5, fields: object = {}) => ({
  name: "refund-agent",
  state: { ticket: { type: "string" }, resolution: { type: "string", default: "" } },
  start: "agent",
  nodes: {
    agent: {
      kind: "agent",
      system: "You resolve support tickets. Refunds need a person's approval.",
      prompt: "Resolve this ticket: {{ticket}}",
      tools: ["lookupOrder", "issueRefund"],
      requireApproval: ["issueRefund"],
      output: "resolution",
      maxTurns,
      next: "END",
      ...fields,
    },
  },
});

type Message = { role: string; content: string | null; tool_call_id?: string };

describe("agent nodes: the model picks tools until it answers", () => {
  let server: ChatServer;
  beforeEach(async () => {
    server = await new ChatServer().start();
  });
  afterEach(async () => server.close());

  /** Turn 1 looks the order up (once with a bad id), turn 2 asks for a refund of 40. */
  function scriptFirstTurns() {
    server.reply(
      {
        kind: "stream",
        chunks: chunks({
          toolCalls: [
            { id: "c1", name: "lookupOrder", arguments: { orderId: "A-1001" } },
            { id: "c2", name: "lookupOrder", arguments: { orderId: "order one" } },
            { id: "c3", name: "cancelOrder", arguments: {} },
          ],
        }),
      },
      { kind: "stream", chunks: chunks({ content: "The parcel was damaged; I will refund part of it.", toolCalls: [{ id: "c4", name: "issueRefund", arguments: { orderId: "A-1001", amount: 40 } }] }) },
    );
  }

  async function startAgent() {
    const { tools, calls } = orderTools();
    const { workflow } = compileJson(refundAgent(), { tools, model: serverModel(server) });
    const engine = await harness.engine([workflow]);
    const run = await engine.start(workflow, { ticket: "Order A-1001 arrived damaged" });
    const paused = await run.wait();
    return { engine, run, paused, calls };
  }

  it("tells the model a tool call nobody approved by the approval deadline was not run", async () => {
    scriptFirstTurns();
    server.reply({ kind: "stream", chunks: chunks({ content: "A person must approve the refund first." }) });
    const { tools, calls } = orderTools();
    const { workflow } = compileJson(refundAgent(5, { approvalDeadline: { seconds: 0.2, decision: "reject" } }), { tools, model: serverModel(server) });
    const engine = await harness.engine([workflow]);
    const run = await engine.start(workflow, { ticket: "Order A-1001 arrived damaged" });
    const ended = await run.wait({ until: "end" });
    expect(ended.status).toBe("succeeded");
    expect(calls.map((c) => c.tool)).toEqual(["lookupOrder"]);
    const turn3 = server.received[2]!.body.messages as Message[];
    expect(turn3.at(-1)).toEqual({ role: "tool", tool_call_id: "c4", content: expect.stringMatching(/^Not run: nobody approved this call in time\. Reason: nobody answered within 0\.2 s \(deadline /) });
    const [resolved] = await engine.store.listInterrupts({ runId: run.id });
    expect(resolved!.resolution).toMatchObject({ decision: "reject", actor: "timeout", timedOut: true });
  });

  it("asks for approval before a chosen tool, showing the tool and its arguments", async () => {
    scriptFirstTurns();
    const { engine, run, paused, calls } = await startAgent();
    expect(paused).toMatchObject({ status: "paused", reason: "interrupt" });
    expect(calls).toEqual([{ tool: "lookupOrder", args: { orderId: "A-1001" } }]);
    const [interrupt] = await engine.store.listInterrupts({ runId: run.id, status: "pending" });
    expect(interrupt!.kind).toBe("node");
    expect(interrupt!.request).toMatchObject({
      question: 'The agent in "agent" wants to call issueRefund. Run it?',
      data: { tool: "issueRefund", arguments: { orderId: "A-1001", amount: 40 } },
      decisions: ["approve", "reject", "edit"],
      responseSchema: { type: "object", properties: { amount: { type: "number", maximum: 500 } }, required: ["orderId", "amount"] },
    });
    // What the model read back after its first turn: the result, and its two mistakes.
    const turn2 = server.received[1]!.body.messages as Message[];
    expect(turn2.slice(-3)).toEqual([
      { role: "tool", tool_call_id: "c1", content: '{"found":true,"orderId":"A-1001","status":"delivered","total":89}' },
      { role: "tool", tool_call_id: "c2", content: expect.stringMatching(/^Error: invalid arguments for lookupOrder at orderId: /) },
      { role: "tool", tool_call_id: "c3", content: 'Error: there is no tool "cancelOrder"; the tools are lookupOrder, issueRefund.' },
    ]);
  });

  it.each([
    {
      decision: "approve",
      input: { decision: "approve" },
      refund: [{ tool: "issueRefund", args: { orderId: "A-1001", amount: 40 } }],
      toolMessage: '{"refunded":40,"orderId":"A-1001"}',
    },
    {
      decision: "reject",
      input: { decision: "reject", reason: "needs a photo first" },
      refund: [],
      toolMessage: "Not run: operator:ann rejected this call. Reason: needs a photo first",
    },
    {
      decision: "reject without a reason",
      input: { decision: "reject" },
      refund: [],
      toolMessage: "Not run: operator:ann rejected this call.",
    },
    {
      decision: "approve with arguments (as the console sends them)",
      input: { decision: "approve", response: { orderId: "A-1001", amount: 30 } },
      refund: [{ tool: "issueRefund", args: { orderId: "A-1001", amount: 30 } }],
      toolMessage: '(operator:ann changed the arguments to {"orderId":"A-1001","amount":30} before it ran.) {"refunded":30,"orderId":"A-1001"}',
    },
    {
      decision: "edit",
      input: { decision: "edit", response: { orderId: "A-1001", amount: 25 } },
      refund: [{ tool: "issueRefund", args: { orderId: "A-1001", amount: 25 } }],
      toolMessage: '(operator:ann changed the arguments to {"orderId":"A-1001","amount":25} before it ran.) {"refunded":25,"orderId":"A-1001"}',
    },
    {
      decision: "edit with a reason",
      input: { decision: "edit", response: { orderId: "A-1001", amount: 5 }, reason: "use 5 EUR max" },
      refund: [{ tool: "issueRefund", args: { orderId: "A-1001", amount: 5 } }],
      toolMessage: '(operator:ann changed the arguments to {"orderId":"A-1001","amount":5} before it ran. Reason: use 5 EUR max) {"refunded":5,"orderId":"A-1001"}',
    },
  ])("$decision: resumes after the recorded calls, never repeating one, and tells the model", async ({ input, refund, toolMessage }) => {
    scriptFirstTurns();
    server.reply({ kind: "stream", chunks: chunks({ content: "Done: the customer has been told." }) });
    const { engine, run, calls } = await startAgent();
    const [interrupt] = await engine.store.listInterrupts({ runId: run.id, status: "pending" });
    await engine.operator("ann").resolve(interrupt!.id, input);
    expect((await run.wait()).status).toBe("succeeded");
    expect((await run.state()).resolution).toBe("Done: the customer has been told.");
    expect(calls).toEqual([{ tool: "lookupOrder", args: { orderId: "A-1001" } }, ...refund]);
    expect(server.received).toHaveLength(3);
    const turn3 = server.received[2]!.body.messages as Message[];
    expect(turn3.at(-1)).toEqual({ role: "tool", tool_call_id: "c4", content: toolMessage });

    const children = (await engine.store.listTasks(run.id)).filter((t) => t.parent !== null);
    const byCall = Object.fromEntries(children.map((t) => [t.call, `${t.status} after ${t.attempts.length} attempt(s)`]));
    expect(byCall).toEqual({
      "model-1": "succeeded after 1 attempt(s)",
      "tool-1-lookupOrder": "succeeded after 1 attempt(s)",
      "model-2": "succeeded after 1 attempt(s)",
      ...(refund.length > 0 ? { "tool-2-issueRefund": "succeeded after 1 attempt(s)" } : {}),
      "model-3": "succeeded after 1 attempt(s)",
    });
  });

  it("refuses edited arguments that break the tool's schema, and an edit with nothing edited", async () => {
    scriptFirstTurns();
    const { engine, run, calls } = await startAgent();
    const [interrupt] = await engine.store.listInterrupts({ runId: run.id, status: "pending" });
    const operator = engine.operator("ann");
    await expect(operator.resolve(interrupt!.id, { decision: "edit", response: { orderId: "A-1001", amount: 900 } })).rejects.toThrow(
      `response to interrupt ${interrupt!.id} is invalid at $.amount: must be at most 500, got 900`,
    );
    await expect(operator.resolve(interrupt!.id, { decision: "edit" })).rejects.toThrow(
      `decision "edit" needs the edited values as the response (interrupt ${interrupt!.id} asks for them)`,
    );
    expect((await engine.store.getInterrupt(interrupt!.id))!.status).toBe("pending");
    expect(calls).toHaveLength(1);
  });

  it("runs a turn's calls of a tool declared concurrent: false one at a time, in the model's order, after the turn's other calls ran together", async () => {
    const log: string[] = [];
    let started = 0;
    let meet: () => void = () => {};
    const met = new Promise<void>((resolve) => (meet = resolve));
    const tools = {
      balance: defineTool({
        description: "An account's balance",
        parameters: z.object({ account: z.string() }),
        readOnly: true,
        run: async ({ account }) => {
          log.push(`start balance ${account}`);
          if (++started === 2) meet();
          // Run one after the other, the first would wait here for the second forever: the timeout says so.
          await Promise.race([met, new Promise((_r, reject) => setTimeout(() => reject(new Error(`balance ${account} ran alone`)), 3000))]);
          log.push(`end balance ${account}`);
          return { account, balance: 100 };
        },
      }),
      transfer: defineTool({
        description: "Moves money from the account",
        parameters: z.object({ account: z.string(), amount: z.number() }),
        concurrent: false,
        run: async ({ amount }) => {
          log.push(`start transfer ${amount}`);
          await new Promise((resolve) => setTimeout(resolve, 30));
          log.push(`end transfer ${amount}`);
          return { moved: amount };
        },
      }),
    };
    server.reply(
      {
        kind: "stream",
        chunks: chunks({
          toolCalls: [
            { id: "c1", name: "transfer", arguments: { account: "acc-1", amount: 10 } },
            { id: "c2", name: "balance", arguments: { account: "acc-1" } },
            { id: "c3", name: "transfer", arguments: { account: "acc-1", amount: 20 } },
            { id: "c4", name: "balance", arguments: { account: "acc-2" } },
          ],
        }),
      },
      { kind: "stream", chunks: chunks({ content: "Moved 30." }) },
    );
    const { workflow } = compileJson(refundAgent(5, { tools: ["balance", "transfer"], requireApproval: [] }), { tools, model: serverModel(server) });
    const engine = await harness.engine([workflow]);
    const run = await engine.start(workflow, { ticket: "Move 10 then 20 from acc-1" });
    expect((await run.wait()).status).toBe("succeeded");

    // The lookups overlapped; each transfer ran alone, after them, the first asked for first.
    expect(log.slice(0, 2).sort()).toEqual(["start balance acc-1", "start balance acc-2"]);
    expect(log.slice(2, 4).sort()).toEqual(["end balance acc-1", "end balance acc-2"]);
    expect(log.slice(4)).toEqual(["start transfer 10", "end transfer 10", "start transfer 20", "end transfer 20"]);
    const turn2 = server.received[1]!.body.messages as Message[];
    expect(turn2.filter((m) => m.role === "tool").map((m) => [m.tool_call_id, m.content])).toEqual([
      ["c1", '{"moved":10}'],
      ["c2", '{"account":"acc-1","balance":100}'],
      ["c3", '{"moved":20}'],
      ["c4", '{"account":"acc-2","balance":100}'],
    ]);
  });

  it("does not run a call of a tool declared concurrent: false once another call of its turn failed the node", async () => {
    const made: string[] = [];
    const tools = {
      balance: defineTool({ description: "An account's balance", parameters: z.object({}), retry: { maxAttempts: 1 }, run: () => Promise.reject(new Error("ledger down")) }),
      transfer: defineTool({ description: "Moves money", parameters: z.object({ amount: z.number() }), concurrent: false, run: ({ amount }) => (made.push(`transfer ${amount}`), { moved: amount }) }),
    };
    server.reply({ kind: "stream", chunks: chunks({ toolCalls: [{ name: "transfer", arguments: { amount: 10 } }, { name: "balance", arguments: {} }] }) });
    const { workflow } = compileJson(refundAgent(5, { tools: ["balance", "transfer"], requireApproval: [], retry: { maxAttempts: 1 } }), { tools, model: serverModel(server) });
    const engine = await harness.engine([workflow]);
    const run = await engine.start(workflow, { ticket: "Move 10" });
    expect(await run.wait()).toMatchObject({ status: "paused", reason: "retries-exhausted", error: { message: expect.stringContaining("ledger down") } });
    expect(made).toEqual([]);
  });

  it("fails clearly when the model never gives a final answer within maxTurns", async () => {
    const { tools } = orderTools();
    server.fallback = () => ({ kind: "stream", chunks: chunks({ toolCalls: [{ name: "lookupOrder", arguments: { orderId: "A-1001" } }] }) });
    const { workflow } = compileJson(refundAgent(2), { tools, model: serverModel(server) });
    const engine = await harness.engine([workflow]);
    const run = await engine.start(workflow, { ticket: "?" });
    expect(await run.wait()).toMatchObject({ status: "paused", reason: "retries-exhausted" });
    const agent = (await engine.store.listTasks(run.id)).find((t) => t.parent === null)!;
    expect(agent.error).toMatchObject({ code: "MAX_TURNS", message: 'agent "agent" gave no final answer within 2 turns (maxTurns); raise maxTurns or narrow its task' });
  });
});
