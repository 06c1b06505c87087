import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { createEngine, openStore, readRunCalls } from "../../engine/index.js";
import { ChatServer, completion } from "../support/chat-server.js";
import { cliHarness } from "../support/cli.js";
import { compileJson, serverModel } from "../support/llm.js";

const text = { type: "string", default: "" };
const deepest = { name: "fact-check", state: { topic: text, checked: text }, start: "check", nodes: { check: { kind: "llm", prompt: "Check {{topic}}", output: "checked", next: "END" } } };
const research = {
  name: "research",
  state: { topic: text, summary: text },
  start: "summarize",
  nodes: {
    summarize: { kind: "llm", prompt: "Summarize {{topic}}", output: "summary", next: "check" },
    check: { kind: "subgraph", workflow: deepest, output: {}, next: "END" },
  },
};
const report = {
  name: "report",
  state: { topics: { type: "array", items: { type: "string" }, default: [] }, plan: text, summaries: { type: "array", items: { type: "string" }, reducer: "append", default: [] } },
  start: "plan",
  nodes: {
    plan: { kind: "llm", prompt: "Plan a report on {{topics}}", output: "plan", next: "each" },
    each: { kind: "subgraph", workflow: research, map: { over: "topics", as: "topic" }, output: { summaries: "summary" }, next: "END" },
  },
};

describe("tokens of a run with sub-workflows", () => {
  const cli = cliHarness();

  it("adds up what the models of its child runs used (theirs in turn), by the node that started them, apart from its own", async () => {
    const server = await new ChatServer().start();
    server.fallback = () => ({ kind: "json", body: completion({ content: "ok", usage: { prompt_tokens: 100, completion_tokens: 10 } }) });
    const store = await openStore(`sqlite:${join(cli.dir, "pitwall.db")}`, { create: true });
    const { workflow } = compileJson(report, { model: serverModel(server, { stream: false }) });
    const engine = createEngine({ store, workflows: [workflow] });
    let runId: string;
    try {
      const run = await engine.start(workflow, { topics: ["tides", "moons"] });
      runId = run.id;
      expect((await run.wait()).status).toBe("succeeded");
      const { tokens } = await readRunCalls(store, runId);
      expect([tokens.prompt, tokens.completion, tokens.byNode]).toEqual([100, 10, { plan: { prompt: 100, completion: 10 } }]);
      // Two research runs, each a summary and a fact-check run below it.
      expect(tokens.subWorkflows).toEqual({ prompt: 400, completion: 40, byNode: { each: { prompt: 400, completion: 40 } } });
    } finally {
      await engine.close();
      await store.close();
      await server.close();
    }
    const shown = (await cli.run(["show", runId])).stdout;
    expect(shown).toMatch(/^tokens +100 prompt \+ 10 completion tokens\n +\+ 400 prompt \+ 40 completion tokens in sub-workflows \(each 400\+40\)$/m);
    const json = await cli.json<{ tokens: unknown }>(["show", runId]);
    expect(json.tokens).toEqual({ prompt: 100, completion: 10, byNode: { plan: { prompt: 100, completion: 10 } }, subWorkflows: { prompt: 400, completion: 40, byNode: { each: { prompt: 400, completion: 40 } } } });
  });
});
