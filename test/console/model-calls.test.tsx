import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { z } from "zod";
import { MemoryStore, ScriptedProvider, createEngine, defineTool, type CompiledWorkflow, type ModelProvider } from "../../engine/index.js";
import { ChatServer } from "../support/chat-server.js";
import { compileJson, serverModel } from "../support/llm.js";
import type { Fixture } from "./fixtures.js";
import { closeAll, openConsole, type ConsoleHarness } from "./harness.js";

let fx: Fixture | undefined;
let ui: ConsoleHarness | undefined;
afterEach(async () => ([ui, fx] = await closeAll(ui, fx)));

let server: ChatServer;
beforeAll(async () => {
  server = await new ChatServer().start();
});
afterAll(async () => server.close());

const tools = {
  getWeather: defineTool({ description: "Weather for a city", parameters: z.object({ city: z.string() }), run: ({ city }) => ({ city, sky: "sunny", c: 21 }) }),
  chargeCard: defineTool({ description: "Charges the card", parameters: z.object({ amount: z.number() }), run: ({ amount }) => ({ charged: amount }) }),
};

/** An agent that looks the weather up, then asks to charge a card (which needs approval). */
function agentWorkflow(model: ModelProvider): CompiledWorkflow {
  return compileJson(
    {
      name: "weather-agent",
      state: { city: { type: "string", default: "Porto" }, out: { type: "string", default: "" } },
      start: "act",
      nodes: { act: { kind: "agent", prompt: "Plan a day in {{city}}", tools: ["getWeather", "chargeCard"], requireApproval: ["chargeCard"], output: "out", next: "END" } },
    },
    { tools, model },
  ).workflow;
}

const script = new ScriptedProvider("weather.json", {
  model: "fake-model",
  calls: [
    { node: "act", call: "model-1", answer: { content: "Checking the sky.", toolCalls: [{ name: "getWeather", arguments: { city: "Porto" } }], usage: { promptTokens: 100, completionTokens: 20 } } },
    { node: "act", call: "model-2", answer: { toolCalls: [{ name: "chargeCard", arguments: { amount: 42 } }], usage: { promptTokens: 140, completionTokens: 12 } } },
  ],
});

async function pausedAgent(): Promise<string> {
  const store = new MemoryStore();
  const workflow = agentWorkflow(script);
  const engine = createEngine({ store, worker: { pollMs: 20 }, workflows: [workflow] });
  fx = { store, engine, close: () => engine.close() };
  const run = await engine.start(workflow, {});
  expect(await run.wait({ timeoutMs: 5_000 })).toMatchObject({ status: "paused", reason: "interrupt" });
  return run.id;
}

describe("the console shows what the models were asked and answered", () => {
  it("the graph counts a node's map items, not its model and tool calls", async () => {
    const runId = await pausedAgent();
    ui = await openConsole({ store: fx!.store, initial: { kind: "run", runId } });
    const frame = await ui.waitFor("▶◆ act");
    expect(frame).not.toMatch(/▶◆ act \d+\/\d+/);
    expect(frame).toContain(" act · step 1: waiting, 1 attempt,");
    expect(frame).toContain("⏎ its task and its 3 model/tool calls");
  });

  it("a running llm node is not drawn as two items", async () => {
    server.reply({ kind: "hang" });
    const store = new MemoryStore();
    const workflow = compileJson(
      { name: "ask", state: { q: { type: "string", default: "?" }, a: { type: "string", default: "" } }, start: "ask", nodes: { ask: { kind: "llm", prompt: "Answer {{q}}", output: "a", next: "END" } } },
      { model: serverModel(server) },
    ).workflow;
    const engine = createEngine({ store, worker: { pollMs: 20 }, workflows: [workflow] });
    fx = { store, engine, close: () => engine.close() };
    const run = await engine.start(workflow, {});
    ui = await openConsole({ store, initial: { kind: "run", runId: run.id } });
    const frame = await ui.waitFor("▶● ask");
    expect(frame).not.toMatch(/ask \d+\/\d+/);
    await run.cancel("test over");
  });

  it("the timeline names each call by its id; enter there opens the task with that call", async () => {
    const runId = await pausedAgent();
    ui = await openConsole({ store: fx!.store, initial: { kind: "run", runId, tab: 4 }, columns: 120 });
    await ui.waitFor("s1 act · model-2 #1");
    expect(ui.frame()).toMatch(/s1 act #1 /);
    expect(ui.frame()).toMatch(/s1 act · model-1 #1 /);
    expect(ui.frame()).toMatch(/s1 act · tool-1-getWeather #1 /);
    // The call rows are the last: the tool call is the one before the last.
    await ui.press("G", "k");
    await ui.press("enter");
    await ui.waitFor("2 model calls, 1 tool call");
    await ui.press("enter");
    const page = await ui.waitFor("act · tool-1-getWeather · getWeather");
    expect(page).toContain(" Arguments");
    expect(page).toContain('"city": "Porto"');
    expect(page).toContain(" Result");
    expect(page).toContain('"sky": "sunny"');
  });

  it("enter on a node lists its calls with what each was sent and answered and its tokens; enter on one shows it whole", async () => {
    const runId = await pausedAgent();
    ui = await openConsole({ store: fx!.store, initial: { kind: "run", runId }, columns: 140 });
    await ui.waitFor("▶◆ act");
    await ui.press("enter");
    const list = await ui.waitFor("240 prompt + 32 completion tokens");
    expect(list).toContain("2 model calls, 1 tool call");
    expect(list).toMatch(/◆ act {2}interrupted · attempt 1 · .* · waiting on interrupt int-/);
    expect(list).toMatch(/✓ model-1 +fake-model +100\+20 +user: Plan a day in Porto +→ getWeather \{"city":"Porto"\} Checking the sky\./);
    expect(list).toMatch(/✓ tool-1-getWeather +getWeather +\{"city":"Porto"\} +\{"city":"Porto","sky":"sunny","c":21\}/);
    expect(list).toMatch(/✓ model-2 +fake-model +140\+12 +tool: \{"city":"Porto","sky":"sunny","c":… +→ chargeCard \{"amount":42\}/);
    // Listed as they were made, also within a millisecond.
    expect(list.indexOf("tool-1-getWeather")).toBeLessThan(list.indexOf("model-2"));
    // The last call is selected: the one the agent waits on.
    await ui.press("enter");
    const page = await ui.waitFor("act · model-2 · fake-model");
    // Made once: its status alone, as pitwall show's calls table says it.
    expect(page).toMatch(/^ succeeded · \d+ms · 140 prompt \+ 12 completion tokens · step 1$/m);
    expect(page).toContain("140 prompt + 12 completion tokens");
    expect(page).toMatch(/Sent {2}after 2 earlier messages, not kept here · tools offered: getWeather, chargeCard/);
    expect(page).toMatch(/tool \(answers [^)]+\)\n +\{"city":"Porto","sky":"sunny","c":21\}/);
    expect(page).toMatch(/Answer\n +→ chargeCard \{"amount":42\}/);
    await ui.press("esc");
    await ui.waitFor("2 model calls, 1 tool call");
    await ui.press("esc");
    await ui.waitFor("▶◆ act");
  });
});
