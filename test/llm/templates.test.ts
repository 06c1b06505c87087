import { describe, expect, it } from "vitest";
import { actionRegistry, checkWorkflowText, formatProblem } from "../../engine/index.js";
import { engineHarness, until } from "../support/engine.js";
import { chatServerEach, completion } from "../support/chat-server.js";
import { compileJson, serverModel } from "../support/llm.js";
import { storeFactories } from "../support/stores.js";

// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Doc = { name: string; state: Record<string, any>; start: string; nodes: Record<string, Record<string, any>> };

const BASE: Doc = {
  name: "templates",
  state: {
    topics: { type: "array", items: { type: "object", properties: { title: { type: "string" } } }, default: [] },
    notes: { type: "array", items: { type: "string" }, reducer: "append", default: [] },
    summary: { type: "string", default: "" },
    count: { type: "integer", default: 0 },
  },
  start: "each",
  nodes: {
    each: { kind: "llm", prompt: "Write a note on {{ item.title }} (topic {{index}} of {{topics}})", output: "notes", map: { over: "topics" }, next: "sum" },
    sum: { kind: "llm", prompt: "Summarize {{notes}}", output: "summary", next: "review" },
    review: { kind: "approval", question: "Send this? {{ summary }}", decisions: ["approve"], next: "END" },
  },
};

const registry = actionRegistry({});

function problems(change: (doc: Doc) => void = () => {}): string[] {
  const doc = structuredClone(BASE);
  change(doc);
  return checkWorkflowText(JSON.stringify(doc), { actions: registry }).problems.map(formatProblem);
}

describe("templates of model nodes and approval questions", () => {
  it("accepts {{item}}, {{item.field}} and {{index}} in a mapped node, and state keys in an approval's question", () => {
    expect(problems()).toEqual([]);
  });

  it.each<[string, (d: Doc) => void, string]>([
    ["{{item}} in a node that is not mapped", (d) => (d.nodes.sum!.prompt = "Summarize {{item}}"), "$.nodes.sum.prompt: UNKNOWN_STATE_KEY: the template reads {{item}}, the item of a mapped node, but this node has no `map: { over }` (and state has no key \"item\")"],
    ["{{index}} in a node that is not mapped", (d) => (d.nodes.sum!.system = "You are #{{index}}"), "$.nodes.sum.system: UNKNOWN_STATE_KEY: the template reads {{index}}, the position of the item of a mapped node, but this node has no `map: { over }`"],
    ["an unclosed {{", (d) => (d.nodes.sum!.prompt = "Summarize {{notes"), '$.nodes.sum.prompt: INVALID_FIELD: "{{" at character 11 is never closed with "}}", so it would be sent as written'],
    ["a placeholder that is not a path", (d) => (d.nodes.sum!.prompt = "Summarize {{ the notes }} and {{notes}}"), '$.nodes.sum.prompt: INVALID_FIELD: "{{ the notes }}" is not a placeholder'],
    ["an approval question reading a missing key", (d) => (d.nodes.review!.question = "Send {{draft}}?"), '$.nodes.review.question: UNKNOWN_STATE_KEY: the template reads {{draft}}, but state has no key "draft"'],
    ["an unclosed {{ in an approval question", (d) => (d.nodes.review!.question = "Send {{summary?"), '$.nodes.review.question: INVALID_FIELD: "{{" at character 6 is never closed'],
    // The schema says object, the key holds an integer: the run failed with "wrote an invalid update".
    ["a schema's type the output key cannot hold", (d) => (d.nodes.sum = { kind: "llm", prompt: "Count", schema: { type: "object" }, output: "count", next: "review" }), '$.nodes.sum.schema: INVALID_FIELD: the answer is object (by `schema`), but state key "count" holds integer: writing it would fail the node at run time'],
    ["a schema's type an appending key's items cannot hold", (d) => (d.nodes.each!.schema = { type: "array", items: { type: "integer" } }), '$.nodes.each.schema: INVALID_FIELD: the answer\'s items are integer (by `schema`), but state key "notes" appends string'],
  ])("refuses %s", (_what, change, expected) => {
    const found = problems(change);
    expect(found.some((p) => p.startsWith(expected)), found.join("\n")).toBe(true);
  });

  it("warns when only some of a schema's values fit, and takes those that all do", () => {
    expect(problems((d) => (d.nodes.sum = { kind: "llm", prompt: "Count", schema: { type: "number" }, output: "count", next: "review" }))).toEqual([
      '$.nodes.sum.schema: INVALID_FIELD (warning): the answer is number (by `schema`), but state key "count" holds integer: a number that is not whole would fail the node at run time',
    ]);
    expect(problems((d) => (d.nodes.sum = { kind: "llm", prompt: "Count", schema: { type: "integer", minimum: 0 }, output: "count", next: "review" }))).toEqual([]);
    expect(problems((d) => (d.nodes.each!.schema = { type: "string" }))).toEqual([]);
  });
});

describe("templates filled at run time", () => {
  const harness = engineHarness(storeFactories[0]!);
  const server = chatServerEach();

  it("a mapped llm node asks about each item, and an approval's question shows the state", async () => {
    server.reply(
      { kind: "json", body: completion({ content: "note" }) },
      { kind: "json", body: completion({ content: "note" }) },
      { kind: "json", body: completion({ content: "two notes" }) },
    );
    const { workflow } = compileJson(BASE, { model: serverModel(server) });
    const engine = await harness.engine([workflow]);
    const run = await engine.start(workflow, { topics: [{ title: "tides" }, { title: "moons" }] });
    const [pending] = await until(async () => {
      const found = await engine.store.listInterrupts({ runId: run.id, status: "pending" });
      return found.length > 0 ? found : undefined;
    });
    const prompts = server.received.slice(0, 2).map((r) => (r.body.messages as { content: string }[]).at(-1)!.content);
    const list = JSON.stringify([{ title: "tides" }, { title: "moons" }]);
    expect(prompts.sort()).toEqual([`Write a note on moons (topic 1 of ${list})`, `Write a note on tides (topic 0 of ${list})`]);
    expect(pending!.request).toMatchObject({ question: "Send this? two notes" });
  });

  it("fills an absent optional key, and a path into nothing, as empty; null as null; other values as JSON", async () => {
    server.reply({ kind: "json", body: completion({ content: "ok" }) });
    const doc = {
      name: "fill",
      state: {
        q: { type: "string", optional: true },
        n: { type: ["object", "null"], default: null },
        count: { type: "integer", default: 3 },
        on: { type: "boolean", default: false },
        a: { type: "string", default: "" },
      },
      start: "ask",
      nodes: { ask: { kind: "llm", prompt: "Q=[{{q}}] N=[{{n}}] NN=[{{n.deep}}] C=[{{count}}] B=[{{on}}]", output: "a", next: "END" } },
    };
    const { workflow } = compileJson(doc, { model: serverModel(server) });
    const engine = await harness.engine([workflow]);
    const run = await engine.start(workflow, {});
    expect((await run.wait()).status).toBe("succeeded");
    expect((server.received[0]!.body.messages as { content: string }[]).at(-1)!.content).toBe("Q=[] N=[null] NN=[] C=[3] B=[false]");
  });
});
