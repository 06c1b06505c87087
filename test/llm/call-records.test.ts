import { describe, expect, it } from "vitest";
import { defineTool, readRunCalls, type CallView } from "../../engine/index.js";
import { z } from "zod";
import { chatServerEach, chunks, completion } from "../support/chat-server.js";
import { engineHarness, until } from "../support/engine.js";
import { TEST_KEY, compileJson, orderTools, serverModel } from "../support/llm.js";
import { storeFactories } from "../support/stores.js";

// SQLite: what is read back is what its task documents kept.
const harness = engineHarness(storeFactories.find((f) => f.name === "sqlite")!);

const lookupAgent = {
  name: "lookup-agent",
  state: { ticket: { type: "string" }, resolution: { type: "string", default: "" } },
  start: "agent",
  nodes: {
    agent: {
      kind: "agent",
      system: "You resolve support tickets.",
      prompt: "Resolve this ticket: {{ticket}}",
      tools: ["lookupOrder"],
      output: "resolution",
      next: "END",
    },
  },
};

const byCall = (calls: CallView[]) => Object.fromEntries(calls.map((c) => [c.call, c]));

describe("the records of model and tool calls keep what was sent and what came back", () => {
  const server = chatServerEach();

  it("an agent's calls: each turn's new messages and answer, each tool's arguments and result, tokens by call, node and run; no key", async () => {
    server.reply(
      { kind: "stream", chunks: chunks({ content: "Let me look.", toolCalls: [{ id: "c1", name: "lookupOrder", arguments: { orderId: "A-1001" } }], usage: { prompt_tokens: 100, completion_tokens: 20 } }) },
      { kind: "stream", chunks: chunks({ content: "It was delivered.", usage: { prompt_tokens: 150, completion_tokens: 8 } }) },
    );
    const { tools } = orderTools();
    const { workflow } = compileJson(lookupAgent, { tools, model: serverModel(server) });
    const engine = await harness.engine([workflow]);
    const run = await engine.start(workflow, { ticket: "Where is order A-1001?" });
    expect((await run.wait()).status).toBe("succeeded");

    const { calls, tokens } = await readRunCalls(engine.store, run.id);
    expect(calls.map((c) => c.call)).toEqual(["model-1", "tool-1-lookupOrder", "model-2"]);
    const { "model-1": first, "tool-1-lookupOrder": tool, "model-2": second } = byCall(calls);
    expect(first).toMatchObject({
      kind: "model",
      node: "agent",
      status: "succeeded",
      model: "test-model",
      prompt: {
        messages: [
          { role: "system", content: "You resolve support tickets." },
          { role: "user", content: "Resolve this ticket: Where is order A-1001?" },
        ],
        earlier: 0,
        tools: ["lookupOrder"],
      },
      answer: { content: "Let me look.", toolCalls: [{ name: "lookupOrder", arguments: '{"orderId":"A-1001"}' }] },
      tokens: { prompt: 100, completion: 20 },
    });
    expect(tool).toMatchObject({ kind: "tool", tool: "lookupOrder", arguments: { orderId: "A-1001" }, result: { found: true, orderId: "A-1001", status: "delivered", total: 89 } });
    // A later turn keeps what is new in it (the tool's result), and says how much came before.
    expect(second).toMatchObject({
      prompt: { messages: [{ role: "tool", toolCallId: "c1", content: '{"found":true,"orderId":"A-1001","status":"delivered","total":89}' }], earlier: 3 },
      answer: { content: "It was delivered.", toolCalls: [] },
      tokens: { prompt: 150, completion: 8 },
    });
    expect(tokens).toMatchObject({ prompt: 250, completion: 28, byNode: { agent: { prompt: 250, completion: 28 } } });

    // The key went out in a header, and is nowhere in what the store keeps.
    expect(server.received[0]!.headers.authorization).toBe(`Bearer ${TEST_KEY}`);
    const everything = JSON.stringify([await engine.store.listTasks(run.id), await engine.store.readEvents({ runId: run.id })]);
    expect(everything).not.toContain(TEST_KEY);
    expect(everything.toLowerCase()).not.toContain("authorization");
  });

  it("a call still waiting for its answer already shows what it asked", async () => {
    server.reply({ kind: "hang" });
    const { workflow } = compileJson(
      { name: "slow", state: { q: { type: "string" }, a: { type: "string", default: "" } }, start: "ask", nodes: { ask: { kind: "llm", prompt: "Answer: {{q}}", output: "a", next: "END" } } },
      { model: serverModel(server) },
    );
    const engine = await harness.engine([workflow]);
    const run = await engine.start(workflow, { q: "what is 6 × 7?" });
    const running = await until(async () => (await readRunCalls(engine.store, run.id)).calls.find((c) => c.status === "running"), 5_000, "a running model call");
    expect(running).toMatchObject({ kind: "model", call: "model", answer: null, prompt: { messages: [{ role: "user", content: "Answer: what is 6 × 7?" }] } });
    await run.cancel("test over");
  });

  it("a prompt holding a long document is kept cut, saying so; secret-looking tool arguments are hidden", async () => {
    const document = `${"the quick brown fox ".repeat(3_000)}END`;
    server.reply(
      { kind: "json", body: completion({ toolCalls: [{ name: "charge", arguments: { amount: 5, apiKey: "sk-live-do-not-keep" } }] }) },
      { kind: "json", body: completion({ content: "charged" }) },
    );
    const charge = defineTool({ description: "Charges", parameters: z.object({ amount: z.number(), apiKey: z.string() }), run: ({ amount }) => ({ charged: amount }) });
    const { workflow } = compileJson(
      {
        name: "long",
        state: { doc: { type: "string" }, out: { type: "string", default: "" } },
        start: "agent",
        nodes: { agent: { kind: "agent", prompt: "Summarize, then charge 5: {{doc}}", tools: ["charge"], output: "out", next: "END" } },
      },
      { tools: { charge }, model: serverModel(server, { stream: false }) },
    );
    const engine = await harness.engine([workflow]);
    const run = await engine.start(workflow, { doc: document });
    expect((await run.wait()).status).toBe("succeeded");
    // The model was sent the whole of it...
    expect(JSON.stringify(server.received[0]!.body)).toContain("fox END");
    const tasks = await engine.store.listTasks(run.id);
    const record = tasks.find((t) => t.call === "model-1")!;
    // ...its record keeps a bounded part, and says how much it left out.
    expect(Buffer.byteLength(JSON.stringify(record.input))).toBeLessThanOrEqual(8 * 1024);
    const kept = (record.input as { messages: { content: string }[] }).messages[0]!.content;
    expect(kept).toMatch(/^Summarize, then charge 5: the quick brown fox/);
    expect(kept).toMatch(/… \(\d+ more characters\)$/);
    const { calls } = await readRunCalls(engine.store, run.id, tasks);
    expect(byCall(calls)["tool-1-charge"]).toMatchObject({ arguments: { amount: 5, apiKey: "[redacted]" }, result: { charged: 5 } });
  });

  it("counts the tokens of every answer a call was given, those asked for again included", async () => {
    server.reply(
      { kind: "json", body: completion({ content: "not JSON", usage: { prompt_tokens: 40, completion_tokens: 3 } }) },
      { kind: "json", body: completion({ content: '{"priority":"high"}', usage: { prompt_tokens: 60, completion_tokens: 5 } }) },
    );
    const { workflow } = compileJson(
      {
        name: "triage",
        state: { t: { type: "string" }, p: { type: ["object", "null"], default: null } },
        start: "triage",
        nodes: { triage: { kind: "llm", prompt: "Triage: {{t}}", output: "p", schema: { type: "object" }, next: "END" } },
      },
      { model: serverModel(server, { stream: false }) },
    );
    const engine = await harness.engine([workflow]);
    const run = await engine.start(workflow, { t: "down" });
    expect((await run.wait()).status).toBe("succeeded");
    const { calls, tokens } = await readRunCalls(engine.store, run.id);
    expect(calls).toHaveLength(1);
    expect(calls[0]).toMatchObject({ attempts: 2, tokens: { prompt: 100, completion: 8 }, answer: { content: '{"priority":"high"}' } });
    expect(tokens).toMatchObject({ prompt: 100, completion: 8, byNode: { triage: { prompt: 100, completion: 8 } } });
  });
});
