import { describe, expect, it } from "vitest";
import { z } from "zod";
import { defineTool } from "../../engine/index.js";
import { engineHarness } from "../support/engine.js";
import { chatServerEach, chunks, completion, type Received } from "../support/chat-server.js";
import { compileJson, orderTools, serverModel } from "../support/llm.js";
import { storeFactories } from "../support/stores.js";

/** On SQLite: what a retry builds on must survive the store, not only a worker's memory. */
const harness = engineHarness(storeFactories.find((f) => f.name === "sqlite")!);

type Message = { role: string; content: string | null };
const lastUserText = (request: Received) => (request.body.messages as Message[]).filter((m) => m.role === "user").at(-1)!.content!;

/** A weather tool that knows every city but Atlantis. */
function weatherTools() {
  const asked: string[] = [];
  const tools = {
    getWeather: defineTool({
      description: "Weather for a city",
      parameters: z.object({ city: z.string() }),
      run: ({ city }) => {
        asked.push(city);
        if (city === "Atlantis") throw new Error(`no such city: ${city}`);
        return { city, sky: "sunny" };
      },
    }),
  };
  return { tools, asked };
}

const weatherWorkflow = {
  name: "weather",
  state: { city: { type: "string" }, weather: { type: ["object", "null"], default: null } },
  start: "get",
  nodes: { get: { kind: "tool", tool: "getWeather", instruction: "Get the weather for the city {{city}}", output: "weather", next: "END" } },
};

const refundAgent = (extra: Record<string, unknown>) => ({
  name: "refund-agent",
  state: { ticket: { type: "string" }, resolution: { type: "string", default: "" } },
  start: "agent",
  nodes: {
    agent: { kind: "agent", prompt: "Resolve: {{ticket}}", tools: ["lookupOrder", "issueRefund"], output: "resolution", next: "END", ...extra },
  },
});

const refund = (amount: number) => ({ kind: "json" as const, body: completion({ toolCalls: [{ name: "issueRefund", arguments: { orderId: "A-1001", amount } }] }) });

describe("a model node that runs again", () => {
  const server = chatServerEach();

  it("asks the model again after a failed attempt: an operator's retry with a patch gets arguments from the new state", async () => {
    const { tools, asked } = weatherTools();
    server.fallback = (request) => {
      const city = /city (\w+)/.exec(lastUserText(request))![1]!;
      return { kind: "json", body: completion({ toolCalls: [{ name: "getWeather", arguments: { city } }] }) };
    };
    const { workflow } = compileJson(weatherWorkflow, { tools, model: serverModel(server, { stream: false }) });
    const engine = await harness.engine([workflow]);
    const run = await engine.start(workflow, { city: "Atlantis" });
    expect(await run.wait()).toMatchObject({ status: "paused", reason: "retries-exhausted", error: { message: expect.stringContaining("no such city: Atlantis") } });

    await engine.operator("ann").retry(run.id, "get", { patch: { city: "Lisbon" } });
    expect((await run.wait()).status).toBe("succeeded");
    expect((await run.state()).weather).toEqual({ city: "Lisbon", sky: "sunny" });
    expect(asked).toEqual(["Atlantis", "Lisbon"]);
    expect(server.received.map(lastUserText)).toEqual([expect.stringContaining("city Atlantis"), expect.stringContaining("city Lisbon")]);
    // The same call under the same key (and idempotency key), asked twice.
    const args = (await engine.store.listTasks(run.id)).find((t) => t.call === "arguments")!;
    expect([args.status, args.attempts.map((a) => a.outcome), args.idempotencyKey]).toEqual(["succeeded", ["succeeded", "succeeded"], args.id]);
  });

  it("asks the model again on each attempt its retry policy makes, an agent that ran out of turns too", async () => {
    const { tools, calls } = orderTools();
    server.fallback = () => ({ kind: "json", body: completion({ toolCalls: [{ name: "lookupOrder", arguments: { orderId: "A-1001" } }] }) });
    const { workflow } = compileJson(refundAgent({ maxTurns: 1, retry: { maxAttempts: 3, backoffMs: 1 } }), { tools, model: serverModel(server, { stream: false }) });
    const engine = await harness.engine([workflow]);
    const run = await engine.start(workflow, { ticket: "Where is A-1001?" });
    expect(await run.wait()).toMatchObject({ status: "paused", reason: "retries-exhausted" });
    const agent = (await engine.store.listTasks(run.id)).find((t) => t.parent === null)!;
    expect(agent.attempts.map((a) => a.code)).toEqual(["MAX_TURNS", "MAX_TURNS", "MAX_TURNS"]);
    expect(server.received).toHaveLength(3);
    expect(calls).toHaveLength(3);
  });

  it("asks the operator again when the model asks for another tool call than the one approved before a failed attempt", async () => {
    const { tools, calls } = orderTools();
    server.reply(refund(40), { kind: "json", status: 400, body: { error: { message: "context too long" } } }, refund(60), { kind: "json", body: completion({ content: "Refunded 60." }) });
    const { workflow } = compileJson(refundAgent({ requireApproval: ["issueRefund"], retry: { maxAttempts: 2, backoffMs: 1 } }), {
      tools,
      model: serverModel(server, { stream: false }),
    });
    const engine = await harness.engine([workflow]);
    const operator = engine.operator("ann");
    const run = await engine.start(workflow, { ticket: "Damaged parcel" });
    const approvals: unknown[] = [];
    for (let i = 0; i < 2; i++) {
      expect(await run.wait()).toMatchObject({ status: "paused", reason: "interrupt" });
      const [pending] = await engine.store.listInterrupts({ runId: run.id, status: "pending" });
      approvals.push(pending!.request.data);
      await operator.resolve(pending!.id, { decision: "approve" });
    }
    expect((await run.wait()).status).toBe("succeeded");
    expect(approvals).toEqual([
      { tool: "issueRefund", arguments: { orderId: "A-1001", amount: 40 } },
      { tool: "issueRefund", arguments: { orderId: "A-1001", amount: 60 } },
    ]);
    expect(calls.map((c) => c.args)).toEqual([
      { orderId: "A-1001", amount: 40 },
      { orderId: "A-1001", amount: 60 },
    ]);
    expect(server.received).toHaveLength(4);
  });

  it("waits at least as long as the server's Retry-After before the node's next attempt, past the provider's own limit", async () => {
    server.reply({ kind: "json", status: 429, headers: { "retry-after": "1" }, body: { error: { message: "quota" } } }, { kind: "json", body: completion({ content: "Hi." }) });
    const draft = {
      name: "draft",
      state: { draft: { type: "string", default: "" } },
      start: "draft",
      nodes: { draft: { kind: "llm", prompt: "Say hi", output: "draft", retry: { maxAttempts: 2, backoffMs: 10 }, next: "END" } },
    };
    const { workflow } = compileJson(draft, { model: serverModel(server, { stream: false, maxRetryAfterMs: 100 }) });
    const engine = await harness.engine([workflow]);
    const started = Date.now();
    const run = await engine.start(workflow, {});
    expect((await run.wait()).status).toBe("succeeded");
    expect(Date.now() - started).toBeGreaterThanOrEqual(950);
    const failed = (await engine.store.readEvents({ runId: run.id, types: ["task.failed"] })).find((e) => !("call" in (e.payload as object)));
    expect(failed!.payload).toMatchObject({ node: "draft", code: "MODEL_HTTP", willRetry: true, retryInMs: 1000 });
    expect(server.received).toHaveLength(2);
  });

  it("asks again for a streamed answer whose connection closed before it ended, instead of keeping the cut text", async () => {
    server.reply(
      { kind: "stream", chunks: chunks({ content: "The refund is" }).slice(0, 3), done: false },
      { kind: "stream", chunks: chunks({ content: "The refund is on its way." }) },
    );
    const { workflow } = compileJson(
      { name: "reply", state: { text: { type: "string", default: "" } }, start: "say", nodes: { say: { kind: "llm", prompt: "Reply", output: "text", next: "END" } } },
      { model: serverModel(server) },
    );
    const engine = await harness.engine([workflow]);
    const run = await engine.start(workflow, {});
    expect((await run.wait()).status).toBe("succeeded");
    expect((await run.state()).text).toBe("The refund is on its way.");
    expect(server.received).toHaveLength(2);
  });
});
