import { describe, expect, it } from "vitest";
import type { Store } from "../../engine/index.js";
import { engineHarness, until } from "../support/engine.js";
import { chatServerEach, chunks, completion } from "../support/chat-server.js";
import { TEST_KEY, compileJson, orderTools, serverModel } from "../support/llm.js";
import { storeFactories } from "../support/stores.js";

const harness = engineHarness(storeFactories[0]!);

const draftWorkflow = {
  name: "draft",
  state: { ticket: { type: "string" }, draft: { type: "string", default: "" } },
  start: "draft",
  nodes: {
    draft: { kind: "llm", system: "You answer support tickets.", prompt: "Draft a reply to: {{ticket}}", output: "draft", next: "END" },
  },
};

describe("llm and tool nodes against a chat completions server", () => {
  const server = chatServerEach();

  it("llm: streams the answer into the state, with progress, tokens, latency and model in the task's events", async () => {
    const answer = "Thanks for writing in. Your parcel is on its way and should arrive on Friday.";
    server.reply({ kind: "stream", chunks: chunks({ content: answer, usage: { prompt_tokens: 31, completion_tokens: 17 }, model: "test-model-2024" }) });
    const { workflow } = compileJson(draftWorkflow, { model: serverModel(server) });
    const engine = await harness.engine([workflow], { worker: { progressIntervalMs: 0 } });
    const run = await engine.start(workflow, { ticket: "Where is my parcel?" });
    expect((await run.wait()).status).toBe("succeeded");
    expect((await run.state()).draft).toBe(answer);
    expect(server.received[0]!.body.messages).toEqual([
      { role: "system", content: "You answer support tickets." },
      { role: "user", content: "Draft a reply to: Where is my parcel?" },
    ]);

    const logs = await engine.store.readEvents({ runId: run.id, types: ["node.log"] });
    expect(logs).toHaveLength(1);
    expect(logs[0]!.payload).toMatchObject({
      node: "draft",
      level: "info",
      data: { call: "model", model: "test-model-2024", promptTokens: 31, completionTokens: 17, totalTokens: 48, finishReason: "stop" },
    });
    expect((logs[0]!.payload as { message: string }).message).toMatch(/^model test-model-2024 answered model in \d+ ms \(31 prompt \+ 17 completion tokens\)$/);
    const progress = (await engine.store.readEvents({ runId: run.id, types: ["node.progress"] })).map((e) => (e.payload as { message: string }).message);
    expect(progress[0]).toBe("Thanks");
    expect(progress.at(-1)).toBe(answer);
    const [call] = (await engine.store.listTasks(run.id)).filter((t) => t.call === "model");
    expect(call).toMatchObject({ status: "succeeded", output: { value: answer, response: { content: answer, model: "test-model-2024" } } });
  });

  it("llm: a JSON answer is checked against the schema; unusable answers are asked for again with the reason", async () => {
    server.reply(
      { kind: "json", body: completion({ content: "It is urgent!" }) },
      { kind: "json", body: completion({ content: '{"priority": "urgent"}' }) },
      { kind: "json", body: completion({ content: '```json\n{"priority": "high"}\n```' }) },
    );
    const { workflow } = compileJson(
      {
        name: "triage",
        state: { ticket: { type: "string" }, triage: { type: ["object", "null"], default: null } },
        start: "triage",
        nodes: {
          triage: {
            kind: "llm",
            prompt: "Triage: {{ticket}}",
            output: "triage",
            schema: { type: "object", properties: { priority: { enum: ["low", "high"] } }, required: ["priority"] },
            next: "END",
          },
        },
      },
      { model: serverModel(server, { stream: false }) },
    );
    const engine = await harness.engine([workflow]);
    const run = await engine.start(workflow, { ticket: "Server down" });
    expect((await run.wait()).status).toBe("succeeded");
    expect((await run.state()).triage).toEqual({ priority: "high" });
    expect(server.received).toHaveLength(3);
    const first = server.received[0]!.body.messages as { content: string }[];
    expect(first[0]!.content).toBe('Triage: Server down\n\nAnswer with only a JSON value matching this JSON Schema:\n{"type":"object","properties":{"priority":{"enum":["low","high"]}},"required":["priority"]}');
    expect(server.received[1]!.body.messages).toEqual([
      ...first,
      { role: "assistant", content: "It is urgent!" },
      { role: "user", content: 'That answer cannot be used: the answer is not valid JSON: "It is urgent!". Answer again.' },
    ]);
    expect((server.received[2]!.body.messages as { content: string }[]).at(-1)!.content).toMatch(/^That answer cannot be used: the answer does not match the schema at priority: /);
    const [call] = (await engine.store.listTasks(run.id)).filter((t) => t.call === "model");
    expect(call!.attempts.map((a) => a.outcome)).toEqual(["failed", "failed", "succeeded"]);
  });

  it("llm: a bare word answers a string schema (an enum router's `yes`, `No.`), where JSON would quote it", async () => {
    server.reply(
      { kind: "json", body: completion({ content: "Maybe." }) },
      { kind: "json", body: completion({ content: "**No.**" }) },
    );
    const { workflow } = compileJson(
      {
        name: "gate",
        state: { verdict: { type: "string", default: "" }, said: { type: "string", default: "" } },
        start: "ask",
        nodes: {
          ask: { kind: "llm", prompt: "Ship it?", output: "verdict", schema: { type: "string", enum: ["yes", "no"] }, next: "free" },
          free: { kind: "llm", prompt: "Say why", output: "said", schema: { type: "string" }, next: "END" },
        },
      },
      { model: serverModel(server, { stream: false }) },
    );
    server.fallback = () => ({ kind: "json", body: completion({ content: "Because it is done." }) });
    const engine = await harness.engine([workflow]);
    const run = await engine.start(workflow, {});
    expect((await run.wait()).status).toBe("succeeded");
    // "Maybe" is no option, so it was asked again; a free string takes the text as it is.
    expect(await run.state()).toMatchObject({ verdict: "no", said: "Because it is done." });
    expect(server.received).toHaveLength(3);
  });

  it("llm: an answer schema is enforced as JSON Schema means it, as validation read it (required without properties, pattern, $ref)", async () => {
    server.reply(
      { kind: "json", body: completion({ content: '{"id": "order 7", "tags": []}' }) },
      { kind: "json", body: completion({ content: '{"id": "A-7"}' }) },
      { kind: "json", body: completion({ content: '{"id": "A-7", "tags": ["late"]}' }) },
    );
    const schema = {
      $defs: { orderId: { type: "string", pattern: "^[A-Z]-\\d+$" } },
      type: "object",
      required: ["id", "tags"],
      properties: { id: { $ref: "#/$defs/orderId" } },
    };
    const { workflow } = compileJson(
      {
        name: "extract",
        state: { order: { type: ["object", "null"], default: null } },
        start: "extract",
        nodes: { extract: { kind: "llm", prompt: "Extract the order", output: "order", schema, next: "END" } },
      },
      { model: serverModel(server, { stream: false }) },
    );
    const engine = await harness.engine([workflow]);
    const run = await engine.start(workflow, {});
    expect((await run.wait()).status).toBe("succeeded");
    expect((await run.state()).order).toEqual({ id: "A-7", tags: ["late"] });
    const corrections = server.received.slice(1).map((r) => (r.body.messages as { content: string }[]).at(-1)!.content);
    expect(corrections).toEqual([expect.stringMatching(/does not match the schema at id: /), expect.stringMatching(/does not match the schema at tags: /)]);
  });

  it("llm: a 429 inside a run is waited out as Retry-After says, and logged", async () => {
    server.reply(
      { kind: "json", status: 429, headers: { "retry-after-ms": "30" }, body: { error: { message: "slow down" } } },
      { kind: "json", body: completion({ content: "Hi." }) },
    );
    const { workflow } = compileJson(draftWorkflow, { model: serverModel(server, { stream: false }) });
    const engine = await harness.engine([workflow]);
    const run = await engine.start(workflow, { ticket: "?" });
    expect((await run.wait()).status).toBe("succeeded");
    const warn = (await engine.store.readEvents({ runId: run.id, types: ["node.log"] })).find((e) => (e.payload as { level: string }).level === "warn");
    expect(warn!.payload).toEqual({
      node: "draft",
      level: "warn",
      message: "model call model: the server answered 429; sending it again in 30 ms",
      data: { call: "model", attempt: 1, delayMs: 30 },
    });
  });

  it("tool: the model fills the arguments, the tool runs once, and the model's classification routes the run", async () => {
    const { tools, calls } = orderTools();
    server.reply(
      { kind: "json", body: completion({ content: "I think A-1001?" }) },
      { kind: "json", body: completion({ toolCalls: [{ name: "lookupOrder", arguments: { orderId: "A-1001" } }] }) },
      { kind: "json", body: completion({ content: "Probably found" }) },
      { kind: "json", body: completion({ content: '"found".' }) },
    );
    const { workflow } = compileJson(lookupWorkflow(), { tools, model: serverModel(server, { stream: false }), actions: outcomes });
    const engine = await harness.engine([workflow]);
    const run = await engine.start(workflow, { ticket: "My order A-1001 never came" });
    expect((await run.wait()).status).toBe("succeeded");
    expect(await run.state()).toMatchObject({ outcome: "found", order: { found: true, orderId: "A-1001", status: "delivered" } });
    expect(calls).toEqual([{ tool: "lookupOrder", args: { orderId: "A-1001" } }]);

    const argsRequest = server.received[0]!.body;
    expect(argsRequest.tool_choice).toEqual({ type: "function", function: { name: "lookupOrder" } });
    expect((argsRequest.tools as { function: { parameters: unknown } }[])[0]!.function.parameters).toMatchObject({ type: "object", required: ["orderId"] });
    expect((server.received[1]!.body.messages as { content: string }[]).at(-1)!.content).toBe("That answer cannot be used: call the tool lookupOrder. Answer again.");
    const classify = server.received[2]!.body.messages as { content: string }[];
    expect(classify.at(-1)!.content).toContain('The tool lookupOrder was called with {"orderId":"A-1001"} and returned:');
    expect(classify.at(-1)!.content).toMatch(/Did the lookup find the order\?\nAnswer with exactly one of: FOUND, NOT_FOUND — the option alone, nothing else\.$/);
    expect((server.received[3]!.body.messages as { content: string }[]).at(-1)!.content).toBe(
      'That answer cannot be used: the classification "Probably found" is not one of FOUND, NOT_FOUND. Answer again.',
    );

    const tasks = await engine.store.listTasks(run.id);
    const lookup = tasks.find((t) => t.node === "lookup" && t.parent === null)!;
    expect(lookup.route).toBe("FOUND");
    const byCall = Object.fromEntries(tasks.filter((t) => t.parent === lookup.id).map((t) => [t.call, `${t.status} after ${t.attempts.length}`]));
    expect(byCall).toEqual({ arguments: "succeeded after 2", tool: "succeeded after 1", classify: "succeeded after 2" });
  });

  it("tool: a classification that is never one of the options fails the node clearly, and the run pauses", async () => {
    const { tools, calls } = orderTools();
    server.reply({ kind: "json", body: completion({ toolCalls: [{ name: "lookupOrder", arguments: { orderId: "B-7" } }] }) });
    server.fallback = () => ({ kind: "json", body: completion({ content: "MAYBE" }) });
    const { workflow } = compileJson(lookupWorkflow(), { tools, model: serverModel(server, { stream: false }), actions: outcomes });
    const engine = await harness.engine([workflow]);
    const run = await engine.start(workflow, { ticket: "Order B-7?" });
    const settled = await run.wait();
    expect(settled).toMatchObject({ status: "paused", reason: "retries-exhausted" });
    const lookup = (await engine.store.listTasks(run.id)).find((t) => t.node === "lookup" && t.parent === null)!;
    expect(lookup.error).toMatchObject({ code: "INVALID_MODEL_OUTPUT", message: 'the classification "MAYBE" is not one of FOUND, NOT_FOUND (answer 2 of 2)' });
    expect(server.received).toHaveLength(3);
    expect(calls).toHaveLength(1);
  });

  it("a model request that hangs is cancelled when the operator kills the node", async () => {
    server.reply({ kind: "hang" });
    const { workflow } = compileJson(draftWorkflow, { model: serverModel(server) });
    const engine = await harness.engine([workflow]);
    const run = await engine.start(workflow, { ticket: "?" });
    await until(() => server.received.length === 1, 5000, "the model request");
    await engine.operator("ann").kill(run.id, { reason: "model is stuck" });
    expect(await run.wait()).toMatchObject({ status: "paused", reason: "killed" });
    const tasks = (await engine.store.listTasks(run.id)).sort((a, b) => a.id.length - b.id.length);
    expect(tasks.map((t) => [t.call, t.status])).toEqual([
      [null, "canceled"],
      ["model", "canceled"],
    ]);

    server.reply({ kind: "stream", chunks: chunks({ content: "Sorry for the wait." }) });
    await engine.operator("ann").retry(run.id, tasks[0]!.id);
    expect((await run.wait()).status).toBe("succeeded");
    expect((await run.state()).draft).toBe("Sorry for the wait.");
  });

  it("never lets the API key reach the store: events, tasks, errors, interrupts", async () => {
    server.fallback = (request) => ({ kind: "json", status: 401, body: { error: { message: `Incorrect API key provided: ${String(request.headers.authorization)}` } } });
    const { workflow } = compileJson(draftWorkflow, { model: serverModel(server) });
    const engine = await harness.engine([workflow]);
    const run = await engine.start(workflow, { ticket: "?" });
    expect(await run.wait()).toMatchObject({ status: "paused", reason: "retries-exhausted" });
    const [task] = await engine.store.listTasks(run.id);
    expect(task!.error!.message).toBe(`the model server at ${server.baseUrl}/chat/completions answered 401 Unauthorized: Incorrect API key provided: Bearer [redacted]`);
    expect(await everything(engine.store, run.id)).not.toContain(TEST_KEY);
  });

  it("a model node in a process without a model fails with what to set", async () => {
    const saved = { ...process.env };
    for (const name of ["PITWALL_LLM_BASE_URL", "PITWALL_LLM_API_KEY", "PITWALL_LLM_SCRIPT"]) delete process.env[name];
    try {
      const { workflow } = compileJson(draftWorkflow, {});
      const engine = await harness.engine([workflow]);
      const run = await engine.start(workflow, { ticket: "?" });
      await run.wait();
      const [task] = await engine.store.listTasks(run.id);
      expect(task!.error).toMatchObject({ code: "NO_MODEL", message: expect.stringMatching(/^node "draft" needs a model: set PITWALL_LLM_BASE_URL \(and PITWALL_LLM_API_KEY\)/) });
    } finally {
      process.env = saved;
    }
  });
});

const outcomes = {
  found: () => ({ outcome: "found" }),
  missing: () => ({ outcome: "missing" }),
};

function lookupWorkflow() {
  return {
    name: "lookup",
    state: { ticket: { type: "string" }, order: { type: ["object", "null"], default: null }, outcome: { type: "string", default: "" } },
    start: "lookup",
    nodes: {
      lookup: {
        kind: "tool",
        tool: "lookupOrder",
        instruction: "Find the order this ticket is about: {{ticket}}",
        output: "order",
        outputOptions: ["FOUND", "NOT_FOUND"],
        classify: "Did the lookup find the order?",
        modelAttempts: 2,
        routes: { FOUND: "found", NOT_FOUND: "missing" },
      },
      found: { action: "found", next: "END" },
      missing: { action: "missing", next: "END" },
    },
  };
}

/** All a console could show about a run, as text. */
export async function everything(store: Store, runId: string): Promise<string> {
  return JSON.stringify([
    await store.getRun(runId),
    await store.listTasks(runId),
    await store.readEvents({ runId }),
    await store.listInterrupts({ runId }),
    await store.listCheckpoints(runId),
    await store.listCommands({ runId }),
  ]);
}
