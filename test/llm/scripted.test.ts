import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { ScriptedProvider, modelFromEnv, type ModelCallInfo, type ModelRequest } from "../../engine/index.js";

const dir = mkdtempSync(join(tmpdir(), "pitwall-script-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function scriptFile(name: string, content: unknown): string {
  const file = join(dir, name);
  writeFileSync(file, typeof content === "string" ? content : JSON.stringify(content));
  return file;
}

const info = (node: string, call: string, attempt = 1, tokens: string[] = []): ModelCallInfo => ({
  signal: new AbortController().signal,
  runId: "r",
  node,
  call,
  index: null,
  attempt,
  idempotencyKey: `r/${node}/${call}`,
  onToken: (t) => tokens.push(t),
});
const request: ModelRequest = { messages: [{ role: "user", content: "Classify this, please." }], tools: [{ name: "lookupOrder", description: "d", parameters: { type: "object" } }] };

describe("the scripted provider", () => {
  const file = scriptFile("ok.json", {
    model: "recorded-model",
    calls: [
      { node: "lookup", call: "classify", attempt: 1, answer: { content: "PERHAPS" } },
      { node: "lookup", call: "classify", answer: { content: "FOUND", usage: { promptTokens: 40, completionTokens: 1 } } },
      { node: "lookup", call: "arguments", answer: { toolCalls: [{ name: "lookupOrder", arguments: { orderId: "A-1" } }] } },
      { node: "agent", call: "model-1", answer: { toolCalls: [{ name: "deleteEverything", arguments: "{}" }] } },
    ],
  });

  it("answers by node, call and attempt, streaming the text word by word", async () => {
    const provider = new ScriptedProvider(file);
    const tokens: string[] = [];
    expect(await provider.complete(request, info("lookup", "classify", 1, tokens))).toMatchObject({ content: "PERHAPS", model: "recorded-model" });
    expect(tokens).toEqual(["PERHAPS"]);
    expect(await provider.complete(request, info("lookup", "classify", 2))).toEqual({
      content: "FOUND",
      toolCalls: [],
      model: "recorded-model",
      usage: { promptTokens: 40, completionTokens: 1, totalTokens: 41 },
      finishReason: "stop",
    });
    expect((await provider.complete(request, info("lookup", "arguments"))).toolCalls).toEqual([{ id: "call_arguments_0", name: "lookupOrder", arguments: '{"orderId":"A-1"}' }]);
    expect(provider.description).toBe("scripted ok.json");
  });

  it("says what is missing when the script has no answer, or answers with a tool the node does not offer", async () => {
    const provider = new ScriptedProvider(file);
    await expect(provider.complete(request, info("draft", "model"))).rejects.toThrow('the model script ok.json has no answer for node "draft", call "model" (attempt 1)');
    await expect(provider.complete(request, info("agent", "model-1"))).rejects.toThrow('the model script answers node "agent", call "model-1" with tool "deleteEverything", which the node does not offer');
  });

  it("refuses a script file that is missing, not JSON, or malformed, naming the place", () => {
    expect(() => new ScriptedProvider(join(dir, "nope.json"))).toThrow(`cannot read the model script ${join(dir, "nope.json")}: no such file`);
    expect(() => new ScriptedProvider(scriptFile("bad.json", "{ calls: "))).toThrow(/is not valid JSON/);
    expect(() => new ScriptedProvider(scriptFile("shape.json", { calls: [{ node: "a", call: "model", answer: {} }] }))).toThrow(
      /is invalid at \$\.calls\.0\.answer: an answer needs `content` or `toolCalls`/,
    );
  });
});

describe("choosing the model from the environment", () => {
  const script = scriptFile("env.json", { calls: [{ node: "a", call: "model", answer: { content: "hi" } }] });

  it("takes an OpenAI-compatible server or a script, refuses both, else none", () => {
    expect(modelFromEnv({ PITWALL_LLM_BASE_URL: "http://localhost:11434/v1" })!.description).toBe("openai-compatible http://localhost:11434/v1");
    expect(() => modelFromEnv({ PITWALL_LLM_BASE_URL: "http://localhost:11434/v1", PITWALL_LLM_SCRIPT: script })).toThrow(
      "PITWALL_LLM_SCRIPT (a script of recorded answers) is set together with PITWALL_LLM_BASE_URL (a model server): unset one or the other",
    );
    expect(() => modelFromEnv({ PITWALL_LLM_API_KEY: "sk-key", PITWALL_LLM_SCRIPT: script })).toThrow(/^PITWALL_LLM_SCRIPT .* is set together with PITWALL_LLM_API_KEY \(a model server\)/);
    expect(modelFromEnv({ PITWALL_LLM_API_KEY: "sk-only-a-key" })!.description).toBe("openai-compatible https://api.openai.com/v1");
    expect(modelFromEnv({ PITWALL_LLM_SCRIPT: script })!.description).toBe("scripted env.json");
    expect(modelFromEnv({ PITWALL_LLM_BASE_URL: " ", PITWALL_LLM_SCRIPT: "" })).toBeUndefined();
    expect(() => modelFromEnv({ PITWALL_LLM_BASE_URL: "localhost:11434" })).toThrow(/does not start with http:\/\/ or https:\/\//);
  });
});
