import { describe, expect, it } from "vitest";
import { z } from "zod";
import { WorkflowError, actionRegistry, checkWorkflowText, formatProblem, loadWorkflowValue, workflow, type ModelProvider, type Problem } from "../../engine/index.js";
import { engineHarness } from "../support/engine.js";
import { storeFactories } from "../support/stores.js";

// A mapped node runs once per item, in one step: validation must say what that step's barrier refuses.
const sqlite = storeFactories.find((f) => f.name === "sqlite")!;

const actions = actionRegistry({ t: { shout: (s: { item: string }) => ({ last: s.item.toUpperCase() }), nothing: () => ({}) } });

const parentState = {
  items: { type: "array", items: { type: "string" } },
  last: { type: "string", default: "" },
  out: { type: "string", default: "" },
  outs: { type: "array", items: { type: "string" }, reducer: "append", default: [] },
};
const childState = { item: { type: "string" }, last: { type: "string", default: "" }, maybe: { type: "string", optional: true } };

/** A parent whose one node runs the child, which runs `action`, once per item of `items`. */
function mapped(sub: Record<string, unknown>, action = "t.shout") {
  const child = { name: "child", state: childState, start: "x", nodes: { x: { action, next: "END" } } };
  return { name: "parent", state: parentState, start: "each", nodes: { each: { kind: "subgraph", workflow: child, map: { over: "items" }, next: "END", ...sub } } };
}

const problems = (doc: unknown) => checkWorkflowText(JSON.stringify(doc), { actions }).problems.map(formatProblem);

const each = '"each" runs once per item of "items", all in one step';

describe("a mapped node's writes to a replace key", () => {
  const harness = engineHarness(sqlite);

  /** How a run of the workflow over `items` ends, and its state. */
  async function run(doc: unknown, items: string[]) {
    const wf = loadWorkflowValue(doc, actions);
    const engine = await harness.engine([wf]);
    const handle = await engine.start(wf, { items });
    const end = await handle.wait({ timeoutMs: 10_000 });
    return { status: end.status, code: end.error?.code, state: await handle.state() };
  }

  it("is an error where a sub-workflow's `output` brings a key back from every item, as every run with two items fails", () => {
    const doc = mapped({ output: { out: "last" } });
    expect(problems(doc)).toEqual([
      `$.nodes.each.output.out: WRITE_CONFLICT: ${each}, and each brings the sub-workflow child's "last" back into state key "out", whose reducer (replace) keeps one value: with two items or more the step fails (WRITE_CONFLICT); make "out" a list with the append reducer (one value per item, in item order), or leave it out of \`output\``,
    ]);
    // Refused before it runs: the run below, whose children change a key shared by name, shows what the step would do.
    expect(() => loadWorkflowValue(doc, actions)).toThrow(/is invalid: \$\.nodes\.each\.output\.out: WRITE_CONFLICT: /);
  });

  it("takes the fix it names: into a list with the append reducer, each item's value in item order", async () => {
    const doc = mapped({ output: { outs: "last" } });
    expect(problems(doc)).toEqual([]);
    expect(await run(doc, ["a", "b", "c"])).toMatchObject({ status: "succeeded", state: { outs: ["A", "B", "C"] } });
  });

  it("is a warning where a child key may end without a value, or a key comes back by name only from a child that changed it", async () => {
    expect(problems(mapped({ output: { out: "maybe" } }))).toEqual([
      `$.nodes.each.output.out: WRITE_CONFLICT (warning): ${each}, and each run that ends with a value of it brings the sub-workflow child's "maybe" back into state key "out", whose reducer (replace) keeps one value: with two such runs the step fails (WRITE_CONFLICT); make "out" a list with the append reducer (one value per item, in item order), or leave it out of \`output\``,
    ]);
    const byName = [
      `$.nodes.each.workflow: WRITE_CONFLICT (warning): ${each}, and, as \`output\` is not given, each run that changes "last" (a key it shares by name with the sub-workflow child) brings it back, and its reducer (replace) keeps one value: two such runs fail the step (WRITE_CONFLICT); say what comes back with \`output\`: into a list key with the append reducer, or {} for nothing`,
    ];
    expect(problems(mapped({}))).toEqual(byName);
    expect(problems(mapped({}, "t.nothing"))).toEqual(byName);
    // Both ways the warning says: children that change the key fail the step, children that do not come back with nothing.
    expect(await run(mapped({}), ["a", "b"])).toMatchObject({ status: "failed", code: "WRITE_CONFLICT" });
    expect(await run(mapped({}, "t.nothing"), ["a", "b"])).toMatchObject({ status: "succeeded", state: { last: "" } });
    expect(problems(mapped({ output: {} }))).toEqual([]);
  });

  it("is an error for a mapped model node's output, in a workflow built in code too", async () => {
    const model: ModelProvider = { description: "fixed", complete: async () => ({ content: "ok", toolCalls: [], model: "fixed" }) };
    const build = (reducers: { answer?: "append" }) =>
      workflow("asks", { state: z.object({ items: z.array(z.string()), answer: reducers.answer ? z.array(z.string()).default([]) : z.string().default("") }), reducers, model })
        .llm("ask", { prompt: "About {{item}}?", output: "answer", map: { over: "items" }, next: "END" })
        .compile();
    let refused: Problem[] = [];
    try {
      build({});
    } catch (error) {
      refused = (error as WorkflowError).problems as Problem[];
    }
    expect(refused.map(formatProblem)).toEqual([
      '$.nodes.ask.output: WRITE_CONFLICT: "ask" runs once per item of "items", all in one step, and each writes its answer to state key "answer", whose reducer (replace) keeps one value: with two items or more the step fails (WRITE_CONFLICT); make "answer" a list with the append reducer (one value per item, in item order)',
    ]);
    const fixed = build({ answer: "append" });
    const engine = await harness.engine([fixed]);
    const handle = await engine.start(fixed, { items: ["a", "b"] });
    expect((await handle.wait({ timeoutMs: 10_000 })).status).toBe("succeeded");
    expect((await handle.state()).answer).toEqual(["ok", "ok"]);
  });
});
