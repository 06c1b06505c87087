import { describe, expect, it } from "vitest";
import { z } from "zod";
import { actionRegistry, checkWorkflowText, formatProblem, workflow } from "../../engine/index.js";

const noop = () => ({});
const actions = actionRegistry({ noop });

// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Doc = { name: string; state: Record<string, any>; start: string; nodes: Record<string, Record<string, any>>; [field: string]: unknown };

const BASE: Doc = {
  name: "effects",
  state: {
    n: { type: "integer", default: 0 },
    ok: { type: "boolean", default: false },
    level: { type: "string", enum: ["low", "high"], default: "low" },
  },
  start: "a",
  nodes: {
    a: { action: "noop", next: ["b", "c"] },
    b: { action: "noop", next: "END" },
    c: { action: "noop", next: "END" },
  },
};

function problems(change: (doc: Doc) => void): string[] {
  const doc = structuredClone(BASE);
  change(doc);
  return checkWorkflowText(JSON.stringify(doc), { actions }).problems.map(formatProblem);
}

describe("fields that do nothing, and settings that contradict each other", () => {
  it("accepts the base workflow", () => {
    expect(problems(() => {})).toEqual([]);
  });

  it.each<[string, (d: Doc) => void, string]>([
    // The child ran 3 s past a 200 ms timeout: the subgraph node's attempt only starts it.
    ["timeoutMs on a subgraph node", (d) => (d.nodes.b = { kind: "subgraph", workflow: { name: "child", start: "x", nodes: { x: { action: "noop", next: "END" } } }, timeoutMs: 200, next: "END" }), "$.nodes.b.timeoutMs: INVALID_FIELD: `timeoutMs` has no effect on a subgraph node: a subgraph node only starts its child run and waits for it without a limit"],
    ["retry on an approval", (d) => (d.nodes.b = { kind: "approval", question: "Go?", decisions: ["approve"], retry: { maxAttempts: 3 }, next: "END" }), "$.nodes.b.retry: INVALID_FIELD: `retry` has no effect on an approval node: an approval only asks a person"],
    ["timeoutMs on an approval", (d) => (d.nodes.b = { kind: "approval", question: "Go?", decisions: ["approve"], timeoutMs: 1000, next: "END" }), "$.nodes.b.timeoutMs: INVALID_FIELD: `timeoutMs` has no effect on an approval node"],
    ["retry on a wait", (d) => (d.nodes.b = { kind: "wait", seconds: 5, retry: { maxAttempts: 2 }, next: "END" }), "$.nodes.b.retry: INVALID_FIELD: `retry` has no effect on a wait node"],
    ["atMostOnce on a wait", (d) => (d.nodes.b = { kind: "wait", seconds: 5, atMostOnce: true, next: "END" }), "$.nodes.b.atMostOnce: INVALID_FIELD: `atMostOnce` has no effect on a wait node"],
    ["timeoutMs on a wait", (d) => (d.nodes.b = { kind: "wait", seconds: 5, timeoutMs: 100, next: "END" }), "$.nodes.b.timeoutMs: INVALID_FIELD: `timeoutMs` has no effect on a wait node"],
    ["a target listed twice", (d) => (d.nodes.a!.next = ["b", "b"]), '$.nodes.a.next[1]: INVALID_FIELD: "b" is listed more than once: a node runs once per step however often it is listed'],
    ["a route target listed twice", (d) => (d.nodes.a = { action: "noop", routes: { both: ["b", "c", "b"] }, default: "END" }), '$.nodes.a.routes.both[2]: INVALID_FIELD: "b" is listed more than once'],
    ["END beside nodes", (d) => (d.nodes.a!.next = ["b", "END", "c"]), '$.nodes.a.next[1]: INVALID_FIELD: END beside "b", "c" does nothing: they still run'],
    ["a backoff cap below the backoff", (d) => (d.nodes.b!.retry = { maxAttempts: 3, backoffMs: 5000, maxBackoffMs: 1000 }), "$.nodes.b.retry.maxBackoffMs: INVALID_FIELD: maxBackoffMs 1000 is below backoffMs 5000: every wait would be 1000 ms, not 5000"],
    ["a backoff above the default cap", (d) => (d.nodes.b!.retry = { maxAttempts: 3, backoffMs: 60000 }), "$.nodes.b.retry.backoffMs: INVALID_FIELD: maxBackoffMs 30000 (the default) is below backoffMs 60000"],
    ["minimum above maximum", (d) => (d.state.n = { type: "integer", minimum: 10, maximum: 5, default: 7 }), "$.state.n.minimum: BAD_STATE_SCHEMA: minimum 10 is above maximum 5: no value can match"],
    ["minLength above maxLength, nested", (d) => (d.state.x = { type: "object", properties: { code: { type: "string", minLength: 4, maxLength: 2 } }, optional: true }), "$.state.x.properties.code.minLength: BAD_STATE_SCHEMA: minLength 4 is above maxLength 2"],
    ["minItems above maxItems", (d) => (d.state.x = { type: "array", items: { type: "string" }, minItems: 3, maxItems: 1, optional: true }), "$.state.x.minItems: BAD_STATE_SCHEMA: minItems 3 is above maxItems 1"],
  ])("refuses %s", (_what, change, expected) => {
    const found = problems(change);
    expect(found.some((p) => p.startsWith(expected)), found.join("\n")).toBe(true);
  });

  it.each<[string, (d: Doc) => void, string]>([
    ["a repeated interruptBefore entry", (d) => (d.interruptBefore = ["b", "c", "b"]), '$.interruptBefore[2]: INVALID_FIELD (warning): "b" is listed more than once: pausing there once is the same'],
    ["a repeated waitFor entry", (d) => ((d.nodes.b!.next = "j"), (d.nodes.c!.next = "j"), (d.nodes.j = { action: "noop", waitFor: ["b", "c", "c"], next: "END" })), '$.nodes.j.waitFor[2]: INVALID_FIELD (warning): "c" is listed more than once: waiting for it once is the same'],
    ["a repeated interruptAfter entry", (d) => (d.interruptAfter = ["c", "c"]), '$.interruptAfter[1]: INVALID_FIELD (warning): "c" is listed more than once'],
  ])("warns about %s", (_what, change, expected) => {
    const found = problems(change);
    expect(found.some((p) => p.startsWith(expected)), found.join("\n")).toBe(true);
  });

  it("keeps the fields each kind honours: retry and timeoutMs on actions, retry on subgraphs, atMostOnce on actions", () => {
    expect(
      problems((d) => {
        d.nodes.b = { action: "noop", retry: { maxAttempts: 3, backoffMs: 100, maxBackoffMs: 100 }, timeoutMs: 500, atMostOnce: true, next: "END" };
        d.nodes.c = { kind: "subgraph", workflow: { name: "child", start: "x", nodes: { x: { action: "noop", next: "END" } } }, retry: { maxAttempts: 2 }, next: "END" };
      }),
    ).toEqual([]);
  });

  it("refuses contradicting bounds in a workflow built in code, and in an llm node's schema", () => {
    expect(() => workflow("bounds", { state: z.object({ n: z.number().min(10).max(5).default(7) }) }).node("a", noop, { next: "END" }).compile()).toThrow(/minimum 10 is above maximum 5/);
    expect(() => workflow("bounds", { state: z.object({ n: z.number().gt(3).max(3).optional() }) }).node("a", noop, { next: "END" }).compile()).toThrow(/exclusiveMinimum 3 leaves no number below maximum 3/);
    const found = problems((d) => {
      d.state.answer = { type: "object", default: {} };
      d.nodes.b = { kind: "llm", prompt: "Hi", output: "answer", schema: { type: "object", properties: { n: { type: "integer", minimum: 3, maximum: 1 } } }, next: "END" };
    });
    expect(found).toContain("$.nodes.b.schema.properties.n.minimum: INVALID_FIELD: minimum 3 is above maximum 1: no value can match");
  });

  describe("routes that cover every value of their routeOn key need no default", () => {
    const warned = (found: string[]) => found.some((p) => p.includes("ROUTES_WITHOUT_DEFAULT"));
    it.each<[string, (d: Doc) => void, boolean]>([
      ["a boolean with true and false", (d) => (d.nodes.a = { action: "noop", routeOn: "ok", routes: { true: "b", false: "c" } }), false],
      ["a boolean with true only", (d) => (d.nodes.a = { action: "noop", routeOn: "ok", routes: { true: "b", FALSE: "c" } }), true],
      ["a nullable boolean (null chooses no route)", (d) => ((d.state.ok = { type: ["boolean", "null"], default: null }), (d.nodes.a = { action: "noop", routeOn: "ok", routes: { true: "b", false: "c" } })), true],
      ["an optional boolean (absent chooses no route)", (d) => ((d.state.ok = { type: "boolean", optional: true }), (d.nodes.a = { action: "noop", routeOn: "ok", routes: { true: "b", false: "c" } })), true],
      ["an enum with a route per value", (d) => (d.nodes.a = { action: "noop", routeOn: "level", routes: { low: "b", high: "c" } }), false],
      ["an enum missing a value", (d) => (d.nodes.a = { action: "noop", routeOn: "level", routes: { low: "b", medium: "c" } }), true],
      ["an integer enum", (d) => ((d.state.n = { type: "integer", enum: [1, 2], default: 1 }), (d.nodes.a = { action: "noop", routeOn: "n", routes: { "1": "b", "2": "c" } })), false],
    ])("%s", (_what, change, warns) => {
      expect(warned(problems(change))).toBe(warns);
    });
  });
});
