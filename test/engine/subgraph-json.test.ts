import { describe, expect, it } from "vitest";
import { actionRegistry, loadWorkflowValue } from "../../engine/index.js";
import { engineHarness } from "../support/engine.js";
import { storeFactories } from "../support/stores.js";

// Sub-workflows written as JSON, run to the end on a real SQLite file.
const sqlite = storeFactories.find((f) => f.name === "sqlite")!;

const actions = actionRegistry({
  t: {
    shout: (s: { item: string }) => ({ found: [s.item.toUpperCase()] }),
    shoutTopic: (s: { topic: string }) => ({ found: [s.topic.toUpperCase()] }),
    nothing: () => ({}),
    note: () => ({ found: ["noted"] }),
    summarize: () => ({ summary: "child summary" }),
    reset: () => ({ n: 0, summary: "" }),
  },
});

const found = { type: "array", items: { type: "string" }, reducer: "append", default: [] };

/** A parent whose one node is the given sub-workflow node. */
function parent(state: Record<string, unknown>, sub: Record<string, unknown>) {
  return loadWorkflowValue({ name: "parent", state, start: "s", nodes: { s: { kind: "subgraph", next: "END", ...sub } } }, actions);
}

function child(state: Record<string, unknown>, action: string) {
  return { name: "child", state, start: "x", nodes: { x: { action, next: "END" } } };
}

describe("JSON sub-workflows (sqlite store)", () => {
  const harness = engineHarness(sqlite);

  /** Runs the workflow to its end and gives its final state. */
  async function finalState(wf: ReturnType<typeof parent>, input?: Record<string, unknown>) {
    const engine = await harness.engine([wf]);
    const run = await engine.start(wf, input);
    expect((await run.wait({ timeoutMs: 10_000 })).status).toBe("succeeded");
    return run.state();
  }

  it("maps a sub-workflow over a list: each item goes into the child's `item` key, which needs no default", async () => {
    const wf = parent(
      { items: { type: "array", items: { type: "string" } }, found },
      { workflow: child({ item: { type: "string" }, found }, "t.shout"), map: { over: "items" } },
    );
    expect((await finalState(wf, { items: ["a", "b", "c"] })).found).toEqual(["A", "B", "C"]);
  });

  it("puts each item into the child key that map.as names", async () => {
    const wf = parent(
      { items: { type: "array", items: { type: "string" } }, found },
      { workflow: child({ topic: { type: "string" }, found }, "t.shoutTopic"), map: { over: "items", as: "topic" } },
    );
    expect((await finalState(wf, { items: ["owl", "bat"] })).found).toEqual(["OWL", "BAT"]);
  });

  const parentState = { summary: { type: "string", default: "PARENT VALUE" }, n: { type: "integer", default: 7 } };
  const childState = { summary: { type: "string", default: "" }, n: { type: "integer", default: 0 } };

  it("keeps the parent's values of shared keys the child only started with from its defaults", async () => {
    const wf = parent(parentState, { input: {}, workflow: child(childState, "t.nothing") });
    expect(await finalState(wf)).toEqual({ summary: "PARENT VALUE", n: 7 });
  });

  it("brings back the shared keys the child changed, and only those", async () => {
    const wf = parent(parentState, { input: {}, workflow: child(childState, "t.summarize") });
    expect(await finalState(wf)).toEqual({ summary: "child summary", n: 7 });
  });

  it("compares with the value the child started with, given by the parent", async () => {
    // Given n = 7 and summary, the child writes 0 and "": both differ from what it started with.
    const wf = parent(parentState, { workflow: child(childState, "t.reset") });
    expect(await finalState(wf)).toEqual({ summary: "", n: 0 });
  });

  it("an explicit output copies the child's value even when the child did not change it", async () => {
    const wf = parent(parentState, { input: {}, output: { summary: "summary" }, workflow: child(childState, "t.nothing") });
    expect(await finalState(wf)).toEqual({ summary: "", n: 7 });
  });

  it("an append key the child started from its own default gets only what the child added", async () => {
    const wf = parent({ found }, { input: {}, workflow: child({ found: { ...found, default: ["seed"] } }, "t.note") });
    expect((await finalState(wf)).found).toEqual(["noted"]);
  });
});
