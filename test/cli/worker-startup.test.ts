import { existsSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { createEngine, openStore, workflow } from "../../engine/index.js";
import { cliHarness } from "../support/cli.js";

/** No model from the environment the tests run in: each test says which it sets. */
const NO_MODEL = { PITWALL_LLM_BASE_URL: "", PITWALL_LLM_API_KEY: "", PITWALL_LLM_SCRIPT: "", PITWALL_LLM_MODEL: "" };

const TOOLS_ONLY = `export const tools = {
  getWeather: {
    description: "Weather for a city",
    parameters: { type: "object", properties: { city: { type: "string" } }, required: ["city"] },
    run: ({ city }) => ({ city, sky: "sunny" }),
  },
};
`;

const WEATHER = {
  name: "weather",
  state: { city: { type: "string" }, weather: { type: ["object", "null"], default: null } },
  start: "get",
  nodes: { get: { kind: "tool", tool: "getWeather", instruction: "Get the weather for {{city}}", output: "weather", next: "END" } },
};

const SCRIPT = { calls: [{ node: "get", call: "arguments", answer: { toolCalls: [{ name: "getWeather", arguments: { city: "Porto" } }] } }] };

describe("what a worker says when it starts", () => {
  const cli = cliHarness();
  const file = (name: string, text: string) => {
    writeFileSync(join(cli.dir, name), text);
    return join(cli.dir, name);
  };

  it("names the actions and tools it loaded, and the model of its model nodes", async () => {
    const tools = file("tools.mjs", TOOLS_ONLY);
    const script = file("script.json", JSON.stringify(SCRIPT));
    const { runId } = await cli.json<{ runId: string }>(["start", file("weather.json", JSON.stringify(WEATHER)), "--input", '{"city":"Porto"}']);
    const worker = await cli.run(["worker", "--once", "--actions", tools], { ...NO_MODEL, PITWALL_LLM_SCRIPT: script });
    expect(worker.code).toBe(0);
    expect(worker.stderr).toMatch(/^\S+Z INFO  loaded no actions and 1 tool \(getWeather\)\n\S+Z INFO  model: scripted script.json\n/);
    expect(worker.stderr).not.toContain("no actions modules loaded");
    expect(worker.stdout).toContain(`run ${runId} succeeded`);

    const server = await cli.run(["worker", "--once"], { ...NO_MODEL, PITWALL_LLM_BASE_URL: "http://127.0.0.1:9/v1" });
    expect(server.stderr).toContain("INFO  model: openai-compatible http://127.0.0.1:9/v1\n");
  });

  it("warns of a workflow it is limited to that no one has stored, with the closest known name", async () => {
    await cli.json(["start", file("emb.json", JSON.stringify({ name: "emb", start: "n", nodes: { n: { kind: "wait", seconds: 0, next: "END" } } }))]);
    const typo = await cli.run(["worker", "--once", "--workflow", "emd"], NO_MODEL);
    expect(typo.code).toBe(0);
    expect(typo.stderr).toMatch(/^\S+Z WARN  this worker is limited to workflow emd, which is neither in the store nor registered in this process \(did you mean emb\?\): it takes no run of it until one is stored$/m);
    const far = await cli.run(["worker", "--once", "--workflow", "payroll,emb"], NO_MODEL);
    expect(far.stderr).toMatch(/WARN  this worker is limited to workflow payroll, which is neither in the store nor registered in this process \(known: (\w+, )*emb(, \w+)*\): it takes no run of it until one is stored\n/);
    expect(far.stdout).toMatch(/run run-\S+ succeeded/);
    expect(far.stderr).not.toContain("workflow emb, which");
  });

  it("says a run of a workflow built in code is for a worker of the program that defines it", async () => {
    const store = await openStore(`sqlite:${join(cli.dir, "pitwall.db")}`);
    try {
      const state = z.object({ log: z.array(z.string()).default([]) });
      const plain = workflow("emb", { state }).node("a", () => ({ log: ["a"] }), { next: "b" }).node("b", () => ({ log: ["b"] }), { next: "END" }).compile();
      const routed = workflow("routed", { state })
        .node("pick", () => ({}), { routes: { one: "a", two: "a" }, route: () => "one" })
        .node("a", () => ({}), { next: "END" })
        .compile();
      const engine = createEngine({ store, workflows: [plain, routed], worker: false });
      await engine.start(plain, {});
      await engine.start(routed, {});
      await engine.close();
    } finally {
      await store.close();
    }
    const worker = await cli.run(["worker", "--once"], NO_MODEL);
    expect(worker.stderr).toContain(
      'left for a worker that can run it: workflow emb cannot run here: action "a" is not exported by any loaded actions module; none of its actions (a, b) is: if workflow emb was built in code, only a worker of the program that defines it (createEngine({ workflows })) can run it\n',
    );
    expect(worker.stderr).toContain("left for a worker that can run it: workflow routed was built in code (node pick routes by a function): only a worker of the program that defines it (createEngine({ workflows })) can run it\n");
  });

  it.each([
    [
      "a script and a server at once",
      { PITWALL_LLM_SCRIPT: "script.json", PITWALL_LLM_API_KEY: "sk-SECRETKEY123456" },
      "PITWALL_LLM_SCRIPT (a script of recorded answers) is set together with PITWALL_LLM_API_KEY (a model server): unset one or the other",
    ],
    ["a script that does not exist", { PITWALL_LLM_SCRIPT: "/nonexistent.json" }, "cannot read the model script /nonexistent.json: no such file"],
    ["a script that is not JSON", { PITWALL_LLM_SCRIPT: "@bad.json" }, "is not valid JSON"],
    [
      "a base URL that is not one (a key in the wrong variable)",
      { PITWALL_LLM_BASE_URL: "sk-SECRETKEY123456" },
      "the model base URL does not start with http:// or https:// (expected e.g. http://localhost:11434/v1; the value, 18 characters, is not shown in case it is a key)",
    ],
  ])("refuses to start with %s, in one line, before it opens the store", async (_what, env, message) => {
    const values = Object.fromEntries(Object.entries(env).map(([k, v]) => [k, v.startsWith("@") ? file(v.slice(1), "{ calls: ") : v]));
    const store = join(cli.dir, "untouched.db");
    const worker = await cli.run(["worker", "--once"], { ...NO_MODEL, ...values, PITWALL_STORE: `sqlite:${store}` });
    expect(worker.code).toBe(2);
    expect(worker.stderr.split("\n")).toEqual([expect.stringMatching(/^pitwall worker: /), ""]);
    expect(worker.stderr).toContain(message);
    expect(worker.stderr).not.toContain("SECRETKEY");
    expect(existsSync(store)).toBe(false);
  });
});
