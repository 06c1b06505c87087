import { readFileSync } from "node:fs";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import {
  ScriptedProvider,
  checkWorkflowText,
  extendRegistry,
  loadActionModules,
  loadWorkflowFile,
  modelFromEnv,
  renderGraph,
  type ModelScript,
} from "../../engine/index.js";
import { ChatServer, chunks, completion } from "../support/chat-server.js";
import { engineHarness } from "../support/engine.js";
import { TEST_KEY } from "../support/llm.js";
import { storeFactories } from "../support/stores.js";

const DIR = new URL("../../fixtures/support-triage/", import.meta.url).pathname;
const WORKFLOW = `${DIR}workflow.json`;
const SCRIPT = `${DIR}script.json`;
const harness = engineHarness(storeFactories[0]!);

/** The fixture as the demo loads it: its actions module (with tools), its workflow file, a model. */
async function load(model = modelFromEnv({ PITWALL_LLM_SCRIPT: SCRIPT })) {
  const registry = extendRegistry(await loadActionModules([`${DIR}actions.ts`]), model ? { model } : {});
  return { registry, workflow: loadWorkflowFile(WORKFLOW, registry) };
}

describe("fixtures/support-triage", () => {
  it("is a valid workflow whose graph shows its model nodes", async () => {
    const { registry, workflow } = await load();
    expect(checkWorkflowText(readFileSync(WORKFLOW, "utf8"), { actions: registry }).problems).toEqual([]);
    const graph = renderGraph(workflow.definition);
    expect(graph).toContain("draft_reply  — llm → draft");
    expect(graph).toContain("lookup_order  — tool lookupOrder → order, model routes on FOUND/NOT_FOUND");
    expect(graph).toContain("resolve  — agent with trackShipment, issueRefund (approval), sendReply → resolution, ≤8 turns");
  });

  it("runs to its end offline with the scripted provider, pausing for the refund's approval", async () => {
    const script = JSON.parse(readFileSync(SCRIPT, "utf8")) as ModelScript;
    const { workflow } = await load(new ScriptedProvider(SCRIPT, { ...script, delayMs: 0 }));
    const engine = await harness.engine([workflow]);
    const run = await engine.start(workflow, {});
    expect(await run.wait()).toMatchObject({ status: "paused", reason: "interrupt" });
    const [approval] = await engine.store.listInterrupts({ runId: run.id, status: "pending" });
    expect(approval!.request.data).toEqual({ tool: "issueRefund", arguments: { orderId: "A-1001", amount: 18, reason: "one mug arrived broken (box dented in transit)" } });
    await engine.operator("dana-support").resolve(approval!.id, { decision: "approve" });
    expect((await run.wait()).status).toBe("succeeded");

    const state = await run.state();
    expect(state.draft).toMatch(/^Hi Dana, I'm so sorry/);
    expect(state.order).toMatchObject({ found: true, orderId: "A-1001", total: 36 });
    expect(state.outcome).toBe("closed: Confirmed the parcel was damaged in transit, refunded one broken mug on order A-1001 and emailed Dana.");
    const calls = (await engine.store.listTasks(run.id)).filter((t) => t.parent !== null);
    expect(calls.find((t) => t.call === "tool-2-issueRefund")!.output).toMatchObject({ refunded: true, amount: 18, refundId: expect.stringMatching(/^rf_/) });
    const usage = (await engine.store.readEvents({ runId: run.id, types: ["node.log"] })).filter((e) => (e.payload as { data?: { model?: string } }).data?.model);
    expect(usage).toHaveLength(7);
    expect(usage[0]!.payload).toMatchObject({ node: "draft_reply", data: { model: "scripted-support-model", promptTokens: 92, completionTokens: 38 } });
  });

  describe("against an OpenAI-compatible endpoint named by PITWALL_LLM_BASE_URL and PITWALL_LLM_API_KEY", () => {
    let server: ChatServer;
    beforeEach(async () => {
      server = await new ChatServer().start();
    });
    afterEach(async () => server.close());

    const endpoint = () => modelFromEnv({ PITWALL_LLM_BASE_URL: server.baseUrl, PITWALL_LLM_API_KEY: TEST_KEY });

    it("routes on NOT_FOUND when the model's lookup finds nothing", async () => {
      server.reply(
        { kind: "stream", chunks: chunks({ content: "Hi! Sorry to hear that; could you send your order number?" }) },
        { kind: "stream", chunks: chunks({ toolCalls: [{ name: "lookupOrder", arguments: { orderId: "A-9999" } }] }) },
        { kind: "stream", chunks: chunks({ content: "NOT_FOUND" }) },
      );
      const { workflow } = await load(endpoint());
      const engine = await harness.engine([workflow]);
      const run = await engine.start(workflow, { ticket: { id: "T-1", customer: "kim@example.com", subject: "Broken", body: "Order A-9999 is broken" } });
      expect((await run.wait()).status).toBe("succeeded");
      expect(await run.state()).toMatchObject({ order: { found: false, orderId: "A-9999" }, outcome: "asked kim@example.com for their order number" });
      expect(server.received).toHaveLength(3);
      expect(server.received.every((r) => r.headers.authorization === `Bearer ${TEST_KEY}` && r.body.model === "gpt-4o-mini")).toBe(true);
    });

    it("runs the whole ticket through the endpoint", async () => {
      const script = JSON.parse(readFileSync(SCRIPT, "utf8")) as { calls: { answer: { content?: string; toolCalls?: { name: string; arguments: unknown }[] } }[] };
      for (const { answer } of script.calls) server.reply({ kind: "json", body: completion({ content: answer.content ?? null, ...(answer.toolCalls ? { toolCalls: answer.toolCalls } : {}) }) });
      const { workflow } = await load(endpoint());
      const engine = await harness.engine([workflow]);
      const run = await engine.start(workflow, {});
      const paused = await run.wait();
      expect(paused.reason).toBe("interrupt");
      const [approval] = await engine.store.listInterrupts({ runId: run.id, status: "pending" });
      await engine.operator("ann").resolve(approval!.id, { decision: "edit", response: { orderId: "A-1001", amount: 9, reason: "half a mug, as agreed" } });
      expect((await run.wait()).status).toBe("succeeded");
      expect(server.received).toHaveLength(7);
      const refund = (await engine.store.listTasks(run.id)).find((t) => t.call === "tool-2-issueRefund")!;
      expect(refund.output).toMatchObject({ refunded: true, amount: 9 });
    });
  });
});
