import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { actionRegistry, checkWorkflowText, extendRegistry, formatProblem, loadActionModules, loadWorkflowText, type WorkflowDefinition } from "../../engine/index.js";
import { orderTools } from "../support/llm.js";

const registry = extendRegistry(actionRegistry({ done: () => ({}) }), { tools: orderTools().tools });

// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Doc = { name: string; state: Record<string, unknown>; start: string; nodes: Record<string, Record<string, any>> };

const BASE: Doc = {
  name: "model-nodes",
  state: {
    ticket: { type: "string", default: "" },
    draft: { type: "string", default: "" },
    order: { type: ["object", "null"], default: null },
    count: { type: "number", default: 0 },
  },
  start: "draft",
  nodes: {
    draft: { kind: "llm", prompt: "Reply to {{ticket}}", output: "draft", next: "lookup" },
    lookup: {
      kind: "tool",
      tool: "lookupOrder",
      instruction: "Find the order in {{ ticket }}",
      output: "order",
      outputOptions: ["FOUND", "NOT_FOUND"],
      routes: { FOUND: "agent", NOT_FOUND: "done" },
    },
    agent: { kind: "agent", prompt: "Help with {{order.orderId}}", tools: ["lookupOrder", "issueRefund"], requireApproval: ["issueRefund"], output: "draft", next: "done" },
    done: { action: "done", next: "END" },
  },
};

function problems(change: (doc: Doc) => void = () => {}, actions = registry): string[] {
  const doc = structuredClone(BASE);
  change(doc);
  return checkWorkflowText(JSON.stringify(doc), { actions }).problems.map(formatProblem);
}

describe("checking llm, tool and agent nodes", () => {
  it("accepts a workflow using all three kinds, and fills in their defaults canonically", () => {
    expect(problems()).toEqual([]);
    const definition: WorkflowDefinition = loadWorkflowText(JSON.stringify(BASE), registry).definition;
    expect(definition.nodes.agent).toMatchObject({ kind: "agent", maxTurns: 10, modelAttempts: 3 });
  });

  it.each<[string, (d: Doc) => void, string]>([
    ["an unknown tool", (d) => (d.nodes.lookup!.tool = "refundEverything"), '$.nodes.lookup.tool: UNKNOWN_TOOL: tool "refundEverything" is not in the `tools` export of the actions module'],
    ["an unknown agent tool", (d) => (d.nodes.agent!.tools = ["lookupOrder", "wire"]), '$.nodes.agent.tools[1]: UNKNOWN_TOOL: tool "wire" is not in the `tools` export of the actions module'],
    ["a template reading a missing key", (d) => (d.nodes.draft!.prompt = "Reply to {{ customer.name }}"), '$.nodes.draft.prompt: UNKNOWN_STATE_KEY: the template reads {{customer}}, but state has no key "customer"'],
    ["an output key that does not exist", (d) => (d.nodes.draft!.output = "reply"), '$.nodes.draft.output: UNKNOWN_STATE_KEY: state has no key "reply"'],
    [
      "a text answer into a number",
      (d) => (d.nodes.draft!.output = "count"),
      '$.nodes.draft.output: INVALID_FIELD: the answer is text, but state key "count" holds number; give the node a `schema` for a JSON answer',
    ],
    ["a route that is not an option", (d) => (d.nodes.lookup!.routes = { FOUND: "agent", MISSING: "done" }), '$.nodes.lookup.routes.MISSING: INVALID_FIELD: "MISSING" is not one of outputOptions (FOUND, NOT_FOUND)'],
    ["options without routes", (d) => {
      delete d.nodes.lookup!.routes;
      d.nodes.lookup!.next = "agent";
      d.nodes.done!.next = "END";
    }, '$.nodes.lookup.outputOptions: INVALID_FIELD: outputOptions choose a route: add `routes` (e.g. { "FOUND": "next" })'],
    ["routes without options", (d) => delete d.nodes.lookup!.outputOptions, "$.nodes.lookup.routes: INVALID_FIELD: a tool node routes on the model's classification: add `outputOptions` (or `routeOn`)"],
    [
      "an llm node with routes but no routeOn (it never returns a route key)",
      (d) => {
        delete d.nodes.draft!.next;
        d.nodes.draft!.routes = { yes: "lookup", no: "done" };
        d.nodes.draft!.default = "lookup";
      },
      '$.nodes.draft.routes: INVALID_FIELD: an llm node returns its answer, never a route key: add `routeOn: "draft"` to route on the answer in its output key (or on another state key), or use `next`',
    ],
    [
      "an agent node with routes but no routeOn",
      (d) => {
        delete d.nodes.agent!.next;
        d.nodes.agent!.routes = { done: "done" };
      },
      '$.nodes.agent.routes: INVALID_FIELD: an agent node returns its answer, never a route key: add `routeOn: "draft"`',
    ],
    [
      "classify without outputOptions (never asked)",
      (d) => {
        delete d.nodes.lookup!.outputOptions;
        delete d.nodes.lookup!.routes;
        d.nodes.lookup!.classify = "Was it found?";
        d.nodes.lookup!.next = "agent";
        d.nodes.done!.next = "END";
      },
      "$.nodes.lookup.classify: INVALID_FIELD: `classify` is what the model decides when it chooses one of `outputOptions`: without outputOptions it is never asked",
    ],
    ["approval for a tool the agent lacks", (d) => (d.nodes.agent!.requireApproval = ["deleteAccount"]), '$.nodes.agent.requireApproval[0]: INVALID_FIELD: "deleteAccount" is not one of this agent\'s tools (lookupOrder, issueRefund)'],
    [
      "an approval deadline without approvals",
      (d) => (delete d.nodes.agent!.requireApproval, (d.nodes.agent!.approvalDeadline = { seconds: 60, decision: "reject" })),
      "$.nodes.agent.approvalDeadline: INVALID_FIELD: `approvalDeadline` has no effect without `requireApproval`",
    ],
    ["an agent without tools", (d) => (d.nodes.agent!.tools = []), "$.nodes.agent.tools: INVALID_FIELD: must have at least 1 item, got 0"],
    ["a schema that cannot be used", (d) => (d.nodes.draft!.schema = { type: "object", properties: { a: { type: "blob" } } }), "$.nodes.draft.schema: INVALID_FIELD: schema cannot be used: "],
  ])("reports %s", (_what, change, expected) => {
    const found = problems(change);
    expect(found.some((p) => p.startsWith(expected)), found.join("\n")).toBe(true);
  });

  it("accepts an llm node that routes on its answer with routeOn", () => {
    const found = problems((d) => {
      d.state.verdict = { type: "string", enum: ["yes", "no"], default: "no" };
      d.nodes.draft = { kind: "llm", prompt: "Is {{ticket}} about an order?", schema: { type: "string", enum: ["yes", "no"] }, output: "verdict", routeOn: "verdict", routes: { yes: "lookup", no: "done" } };
    });
    expect(found).toEqual([]);
  });

  it("warns about an option without a route and no default", () => {
    expect(problems((d) => (d.nodes.lookup!.routes = { FOUND: "agent" }))).toContain(
      "$.nodes.lookup.routes: ROUTES_WITHOUT_DEFAULT (warning): routes without a `default`: a route key that matches none fails the run",
    );
  });

  it("a process that loaded modules without the tool cannot compile the workflow", () => {
    expect(() => loadWorkflowText(JSON.stringify(BASE), actionRegistry({ done: () => ({}) }))).toThrow(/UNKNOWN_TOOL: tool "lookupOrder" is not in the `tools` export/);
  });
});

describe("loading tools from actions modules", () => {
  const dir = mkdtempSync(join(tmpdir(), "pitwall-tools-"));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));
  const module = (name: string, text: string) => {
    const file = join(dir, name);
    writeFileSync(file, text);
    return file;
  };

  it("reads the `tools` export beside the actions, with JSON Schema or zod parameters", async () => {
    const file = module(
      "ok.mjs",
      `export default { greet: () => ({}) };
       export const tools = { weather: { description: "Weather in a city", parameters: { type: "object", properties: { city: { type: "string" } }, required: ["city"] }, run: ({ city }) => ({ city, sky: "clear" }) } };`,
    );
    const only = module("only-tools.mjs", `export const tools = { clock: { description: "The time", parameters: { type: "object" }, run: () => "noon" } };`);
    const loaded = await loadActionModules([file, only]);
    expect(loaded.names()).toEqual(["greet"]);
    expect(loaded.toolNames!()).toEqual(["clock", "weather"]);
    expect(loaded.tool!("weather")!.spec).toEqual({
      name: "weather",
      description: "Weather in a city",
      parameters: { type: "object", properties: { city: { type: "string" } }, required: ["city"] },
    });
  });

  it.each([
    ["no-run.mjs", `export const tools = { a: { description: "A", parameters: { type: "object" } } };`, 'tool "a" has no `run` function'],
    ["no-description.mjs", `export const tools = { a: { parameters: { type: "object" }, run() {} } };`, 'tool "a" needs a `description` (the model reads it)'],
    ["not-object.mjs", `export const tools = { a: { description: "A", parameters: { type: "string" }, run() {} } };`, 'tool "a" must take an object of arguments'],
    ["bad-name.mjs", `export const tools = { "a b": { description: "A", parameters: { type: "object" }, run() {} } };`, 'tool name "a b" must be 1-64 letters'],
    ["no-timeout.mjs", `export const tools = { a: { description: "A", parameters: { type: "object" }, run() {}, timeoutMs: 3e9 } };`, 'tool "a" has timeoutMs 3000000000: give whole milliseconds from 1 to 2147483647'],
    ["bad-concurrent.mjs", `export const tools = { a: { description: "A", parameters: { type: "object" }, run() {}, concurrent: "no" } };`, 'tool "a" has concurrent "no": give true or false'],
    ["bad-retry.mjs", `export const tools = { a: { description: "A", parameters: { type: "object" }, run() {}, retry: { maxAttempts: 0 } } };`, 'tool "a" has a retry policy that cannot be used: maxAttempts:'],
    ["twice.mjs", `export const tools = { lookupOrder: { description: "A", parameters: { type: "object" }, run() {} } };`, 'tool "lookupOrder" is exported twice'],
  ])("refuses %s clearly", async (name, text, message) => {
    const first = module("first.mjs", `export const tools = { lookupOrder: { description: "L", parameters: { type: "object" }, run() {} } };`);
    const file = module(name, text);
    await expect(loadActionModules([first, file])).rejects.toThrow(`actions module ${file}: ${message}`);
  });
});
