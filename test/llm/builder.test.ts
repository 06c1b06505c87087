import { describe, expect, it } from "vitest";
import { z } from "zod";
import { ScriptedProvider, actionRegistry, defineTool, extendRegistry, loadWorkflowText, workflow } from "../../engine/index.js";
import { engineHarness } from "../support/engine.js";
import { storeFactories } from "../support/stores.js";

const lookupOrder = defineTool({
  description: "Looks an order up",
  parameters: z.object({ orderId: z.string() }),
  run: ({ orderId }) => ({ found: orderId === "A-1", orderId }),
});

const script = new ScriptedProvider("builder-script.json", {
  calls: [
    { node: "draft", call: "model", answer: { content: "Hello Ada" } },
    { node: "lookup", call: "arguments", answer: { toolCalls: [{ name: "lookupOrder", arguments: { orderId: "A-1" } }] } },
    { node: "lookup", call: "classify", answer: { content: "FOUND" } },
  ],
});

describe("model nodes written in code", () => {
  const harness = engineHarness(storeFactories[0]!);
  const build = () =>
    workflow("triage-in-code", {
      state: z.object({ name: z.string(), reply: z.string().default(""), order: z.unknown().optional(), outcome: z.string().default("") }),
      tools: { lookupOrder },
      model: script,
    })
      .llm("draft", { prompt: "Greet {{ name }}", output: "reply", next: "lookup" })
      .tool("lookup", { tool: "lookupOrder", instruction: "Find the order of {{ name }}", output: "order", outputOptions: ["FOUND", "NOT_FOUND"], routes: { FOUND: "found", NOT_FOUND: "END" } })
      .node("found", () => ({ outcome: "found" }), { next: "END" })
      .compile();

  it("run like their JSON form, with the workflow's tools and model", async () => {
    const wf = build();
    const engine = await harness.engine([wf]);
    const run = await engine.start(wf, { name: "Ada" });
    expect((await run.wait()).status).toBe("succeeded");
    expect(await run.state()).toMatchObject({ reply: "Hello Ada", order: { found: true, orderId: "A-1" }, outcome: "found" });
  });

  it("use the engine's model when compiled without one, sub-workflows too; a workflow's own model comes first", async () => {
    const engineModel = new ScriptedProvider("engine-script.json", {
      calls: [
        { node: "greet", call: "model", answer: { content: "Hi from the engine" } },
        { node: "draft", call: "model", answer: { content: "not this one" } },
      ],
    });
    const child = workflow("greeting", { state: z.object({ reply: z.string().default("") }) })
      .llm("greet", { prompt: "Say hi", output: "reply", next: "END" })
      .compile();
    const parent = workflow("greets", { state: z.object({ reply: z.string().default("") }) })
      .subgraph("sub", child, { next: "END" })
      .compile();
    const own = build();
    const engine = await harness.engine([parent, own], { model: engineModel });
    const run = await engine.start(parent);
    expect((await run.wait()).status).toBe("succeeded");
    expect(await run.state()).toEqual({ reply: "Hi from the engine" });
    const ownRun = await engine.start(own, { name: "Ada" });
    expect((await ownRun.wait()).status).toBe("succeeded");
    expect(await ownRun.state()).toMatchObject({ reply: "Hello Ada" });
  });

  it("say where a tool was looked for when a workflow in code lacks it", () => {
    expect(() =>
      workflow("toolless", { state: z.object({ order: z.unknown().optional() }) })
        .tool("lookup", { tool: "lookupOrder", instruction: "Find it", output: "order", next: "END" })
        .compile(),
    ).toThrow('workflow toolless cannot run here: tool "lookupOrder" is not among the tools of workflow toolless (workflow(name, { tools }))');
  });

  it("have the same canonical definition as the JSON form", () => {
    const json = {
      name: "triage-in-code",
      state: {
        name: { type: "string" },
        reply: { type: "string", default: "" },
        order: {},
        outcome: { type: "string", default: "" },
      },
      start: "draft",
      nodes: {
        draft: { kind: "llm", prompt: "Greet {{ name }}", output: "reply", next: "lookup" },
        lookup: { kind: "tool", tool: "lookupOrder", instruction: "Find the order of {{ name }}", output: "order", outputOptions: ["FOUND", "NOT_FOUND"], routes: { FOUND: "found", NOT_FOUND: "END" } },
        found: { action: "found", next: "END" },
      },
    };
    const fromJson = loadWorkflowText(JSON.stringify(json), extendRegistry(actionRegistry({ found: () => ({}) }), { tools: { lookupOrder } }));
    expect(build().definition.nodes).toEqual(fromJson.definition.nodes);
  });
});
