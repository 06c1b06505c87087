import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import type { CallView, InterruptRecord } from "../../engine/index.js";
import { actionsOf, cliHarness, section, workflowOf, writeChargeTools } from "../support/cli.js";

describe("what the models of a run were asked and answered, from the CLI", () => {
  const cli = cliHarness();

  /** The support-triage fixture, run offline by its script (without its pauses between words). */
  async function triageRun(): Promise<{ runId: string; env: Record<string, string> }> {
    const script = JSON.parse(readFileSync(join(workflowOf("support-triage"), "..", "script.json"), "utf8")) as Record<string, unknown>;
    const file = join(cli.dir, "triage-script.json");
    writeFileSync(file, JSON.stringify({ ...script, delayMs: 0 }));
    const env = { PITWALL_LLM_SCRIPT: file };
    const { runId } = await cli.json<{ runId: string }>(["start", workflowOf("support-triage")]);
    const worker = await cli.run(["worker", "--once", "--actions", actionsOf("support-triage")], env);
    expect(worker.code).toBe(0);
    return { runId, env };
  }

  it("show lists each model and tool call with what it was sent and what came back, and the tokens by node and in all", async () => {
    const { runId } = await triageRun();
    const shown = await cli.run(["show", runId]);
    expect(shown.stdout).toMatch(/^tokens +1320 prompt \+ 153 completion tokens \(draft_reply 92\+38 · lookup_order 329\+20 · resolve 899\+95\)$/m);
    const calls = section(shown.stdout, "model and tool calls");
    expect(calls[0]).toMatch(/^STEP +NODE +CALL +MODEL \/ TOOL +STATUS +TOKENS +SENT +ANSWER \/ RESULT$/);
    const row = (call: string) => calls.find((l) => l.split(/ {2,}/)[2] === call) ?? `(no row for ${call})`;
    expect(row("model").split(/ {2,}/)).toEqual([
      "1",
      "draft_reply",
      "model",
      "scripted-support-model",
      "succeeded",
      "92+38",
      "user: Draft a short first reply (two or three sentences) to…",
      "Hi Dana, I'm so sorry one of your mugs arrived broken! I'm looking in…",
    ]);
    expect(row("arguments")).toMatch(/ lookup_order +arguments +scripted-support-model +succeeded +141\+18 +user: Find the order .* +→ lookupOrder \{"orderId":"A-1001"\}$/);
    expect(row("tool")).toMatch(/ lookup_order +tool +lookupOrder +succeeded +\{"orderId":"A-1001"\} +\{"found":true,"orderId":"A-1001",/);
    expect(row("model-2")).toMatch(/ resolve +model-2 +scripted-support-model +succeeded +497\+64 +tool: \{"carrier":"PostNord",.* +→ issueRefund \{"orderId":"A-1001","amount":18,.*…$/);
    expect(row("tool-1-trackShipment")).toMatch(/ resolve +tool-1-trackShipment +trackShipment +succeeded +\{"orderId":"A-1001"\} +\{/);

    const json = await cli.json<{ calls: CallView[]; tokens: { prompt: number; completion: number; byNode: Record<string, unknown> } }>(["show", runId]);
    expect(json.tokens).toEqual({ prompt: 1320, completion: 153, byNode: { draft_reply: { prompt: 92, completion: 38 }, lookup_order: { prompt: 329, completion: 20 }, resolve: { prompt: 899, completion: 95 } } });
    expect(json.calls.map((c) => c.call)).toEqual(["model", "arguments", "tool", "classify", "model-1", "tool-1-trackShipment", "model-2"]);
    expect(json.calls[0]).toMatchObject({
      kind: "model",
      node: "draft_reply",
      prompt: { messages: [{ role: "system", content: expect.stringMatching(/^You are a friendly/) }, { role: "user", content: expect.stringMatching(/^Draft a short/) }], earlier: 0 },
      answer: { content: expect.stringMatching(/^Hi Dana/) },
      tokens: { prompt: 92, completion: 38 },
    });
    expect(json.calls[2]).toMatchObject({ kind: "tool", tool: "lookupOrder", arguments: { orderId: "A-1001" }, result: { found: true } });
  });

  it("interrupts and show put a tool call's arguments beside the approval question", async () => {
    const { runId } = await triageRun();
    const args = '{"orderId":"A-1001","amount":18,"reason":"one mug arrived broken (box dented in transit)"}';
    const listed = await cli.run(["interrupts", "--run", runId]);
    expect(listed.stdout.split("\n")[0]).toMatch(/^INTERRUPT +RUN +NODE +KIND +AGE +DECISIONS +QUESTION +DETAILS$/);
    expect(listed.stdout).toMatch(new RegExp(` resolve +node +\\d+s +approve/reject/edit +The agent in "resolve" wants to call issueRefund\\. Run it\\? +issueRefund ${escape(args)}\n`));
    const shown = await cli.run(["show", runId]);
    expect(section(shown.stdout, "pending interrupts")[1]).toMatch(new RegExp(` resolve +node +approve/reject/edit +The agent in "resolve" wants to call issueRefund\\. Run it\\? +issueRefund ${escape(args)}$`));
  });

  it("a mapped agent's approvals say which item asks, and long arguments are cut on one line", async () => {
    const actions = writeChargeTools(cli.dir);
    const file = join(cli.dir, "charges.json");
    writeFileSync(
      file,
      JSON.stringify({
        name: "charges",
        state: { customers: { type: "array", items: { type: "string" }, default: ["ann", "bo"] }, out: { type: "array", items: { type: "string" }, reducer: "append", default: [] } },
        start: "each",
        nodes: { each: { kind: "agent", map: { over: "customers" }, prompt: "Charge {{item}}", tools: ["chargeCard"], requireApproval: ["chargeCard"], output: "out", next: "END" } },
      }),
    );
    const note = `a note that goes on and on ${"and on ".repeat(30)}`;
    const script = join(cli.dir, "charges-script.json");
    writeFileSync(
      script,
      JSON.stringify({
        calls: [
          { node: "each", call: "model-1", index: 0, answer: { toolCalls: [{ name: "chargeCard", arguments: { amount: 10 } }] } },
          { node: "each", call: "model-1", index: 1, answer: { toolCalls: [{ name: "chargeCard", arguments: { amount: 20, note } }] } },
        ],
      }),
    );
    const { runId } = await cli.json<{ runId: string }>(["start", file]);
    expect((await cli.run(["worker", "--once", "--actions", actions], { PITWALL_LLM_SCRIPT: script })).code).toBe(0);
    expect(await cli.json<InterruptRecord[]>(["interrupts", "--run", runId])).toHaveLength(2);
    const rows = (await cli.run(["interrupts", "--run", runId])).stdout.trim().split("\n").slice(1);
    const byItem = Object.fromEntries(rows.map((r) => [r.split(/ {2,}/)[2], r.split(/ {2,}/).at(-1)]));
    expect(byItem["each[0]"]).toBe('chargeCard {"amount":10}');
    expect(byItem["each[1]"]).toMatch(/^chargeCard \{"amount":20,"note":"a note that goes on and on and on .*…$/);
    expect(Array.from(byItem["each[1]"]!.slice("chargeCard ".length))).toHaveLength(100);
  });
});

function escape(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
}
