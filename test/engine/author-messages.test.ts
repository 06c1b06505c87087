import { describe, expect, it } from "vitest";
import { z } from "zod";
import { actionRegistry, checkWorkflowText, formatProblem, workflow } from "../../engine/index.js";

const noop = () => ({});
const actions = actionRegistry({ tasks: { noop, check: noop } });

function problemsOf(doc: Record<string, unknown>): string[] {
  return checkWorkflowText(JSON.stringify({ name: "t", start: "a", ...doc }), { actions }).problems.map(formatProblem);
}

describe("what a mistyped name most likely meant", () => {
  it("names the field meant for a misspelt one, and where a setting from other tools goes", () => {
    const found = problemsOf({
      maxSteps: 10,
      nodes: { a: { action: "tasks.noop", nxt: "END", timeout: 5, retries: 3, maxAttempt: 2, backoff: 10, retry: { maxAttempt: 2, backoff: 10 } } },
    });
    expect(found).toEqual(
      expect.arrayContaining([
        '$.maxSteps: INVALID_FIELD: unknown field "maxSteps": it goes in `limits`: { "maxSteps": 1000 }',
        '$.nodes.a.nxt: INVALID_FIELD: unknown field "nxt" (did you mean "next"?)',
        '$.nodes.a.timeout: INVALID_FIELD: unknown field "timeout": the field is `timeoutMs`, in milliseconds',
        '$.nodes.a.retries: INVALID_FIELD: unknown field "retries": retries go in `retry`: { "maxAttempts": 3 }',
        '$.nodes.a.maxAttempt: INVALID_FIELD: unknown field "maxAttempt": attempts go in `retry`: { "maxAttempts": 3 }',
        '$.nodes.a.backoff: INVALID_FIELD: unknown field "backoff": the backoff goes in `retry`: { "maxAttempts": 3, "backoffMs": 200 }',
        '$.nodes.a.retry.maxAttempt: INVALID_FIELD: unknown field "maxAttempt" (did you mean "maxAttempts"?)',
        '$.nodes.a.retry.backoff: INVALID_FIELD: unknown field "backoff": the field is `backoffMs`, the first wait in milliseconds',
      ]),
    );
  });

  it("takes End or end for END, the nearest node, or lists the nodes when few", () => {
    const found = problemsOf({ nodes: { a: { action: "tasks.noop", next: "End" }, b: { action: "tasks.noop", routes: { x: "end", y: "bb", z: "zzz" }, default: "END" } }, interruptBefore: ["B"] });
    expect(found).toEqual(
      expect.arrayContaining([
        '$.nodes.a.next: UNKNOWN_TARGET: "End" is not a node (nor END) (did you mean END?)',
        '$.nodes.b.routes.x: UNKNOWN_TARGET: route x goes to "end", which is not a node (nor END) (did you mean END?)',
        '$.nodes.b.routes.y: UNKNOWN_TARGET: route y goes to "bb", which is not a node (nor END) (did you mean "b"?)',
        '$.nodes.b.routes.z: UNKNOWN_TARGET: route z goes to "zzz", which is not a node (nor END) (nodes: a, b)',
        '$.interruptBefore[0]: UNKNOWN_NODE: node "B" is not defined (did you mean "b"?)',
      ]),
    );
  });

  it("names the action meant, and the kind", () => {
    expect(problemsOf({ nodes: { a: { action: "tasks.chek", next: "b" }, b: { kind: "aproval", question: "Go?" } } })).toEqual([
      '$.nodes.a.action: UNKNOWN_ACTION: action "tasks.chek" is not exported by the actions module (did you mean "tasks.check"?)',
      '$.nodes.b.kind: INVALID_FIELD: unknown kind "aproval" (did you mean "approval"?); use one of action, approval, wait, subgraph, llm, tool, agent',
    ]);
  });

  it("points at a state schema's unknown keyword, at any depth, and says which keywords are refused on purpose", () => {
    const found = problemsOf({
      state: {
        j: { type: "string", Default: "" },
        code: { type: "string", pattern: "^[A-Z]+$", default: "A" },
        o: { type: "object", properties: { x: { oneOf: [{ type: "integer" }] } }, default: {} },
      },
      nodes: { a: { action: "tasks.noop", next: "END" } },
    });
    expect(found).toEqual([
      '$.state.j.Default: BAD_STATE_SCHEMA: unknown keyword "Default" (did you mean "default"?)',
      expect.stringMatching(/^\$\.state\.code\.pattern: BAD_STATE_SCHEMA: "pattern" is refused in state schemas of workflow files, which take the JSON-Schema subset type, items, .*: check the text in the node that writes it$/),
      expect.stringMatching(/^\$\.state\.o\.properties\.x\.oneOf: BAD_STATE_SCHEMA: "oneOf" is refused .*: use anyOf$/),
    ]);
  });

  it("refuses a state key with a dot, which templates and paths would read as a key inside another, in JSON and in code", () => {
    expect(problemsOf({ state: { "a.b": { type: "string", default: "" } }, nodes: { a: { action: "tasks.noop", next: "END" } } })).toEqual([
      '$.state["a.b"]: BAD_STATE_SCHEMA: state key "a.b" holds a ".", which templates ({{a.b}}) and paths read as a key inside another: name it "a_b" or nest it',
    ]);
    expect(() => workflow("dotted", { state: z.object({ "a.b": z.string() }) }).node("a", noop, { next: "END" }).compile()).toThrow(/state key "a\.b" holds a "\."/);
  });
});

describe("a wait node's until", () => {
  const untilProblem = (until: unknown) => problemsOf({ nodes: { a: { kind: "wait", until, next: "END" } } });
  it("says a date-time without an offset needs one, with an example, and a text that is no date-time that it is not one", () => {
    expect(untilProblem("2026-12-01T09:00:00")).toEqual([
      '$.nodes.a.until: INVALID_FIELD: "2026-12-01T09:00:00" has no UTC offset, so it names another moment in every time zone: add one, e.g. 2026-12-01T09:00:00Z (UTC) or 2026-12-01T09:00:00+01:00',
    ]);
    expect(untilProblem("2026-12-01")).toEqual([
      '$.nodes.a.until: INVALID_FIELD: "2026-12-01" has no time: give the moment with its UTC offset, e.g. 2026-12-01T09:00:00Z (UTC) or 2026-12-01T09:00:00+01:00',
    ]);
    expect(untilProblem("next tuesday")).toEqual(['$.nodes.a.until: INVALID_FIELD: "next tuesday" is not an ISO date-time: write it as 2026-12-01T09:00:00Z (or with an offset, +01:00)']);
    expect(untilProblem("2099-12-01T09:00:00+01:00")).toEqual([]);
  });
});

describe("names people cannot tell apart", () => {
  it("refuses a node name or state key holding a control, zero-width or bidirectional character, naming it", () => {
    const found = problemsOf({
      state: { "note\u200b": { type: "string", default: "" } },
      nodes: { a: { action: "tasks.noop", next: "send" }, send: { action: "tasks.noop", next: "END" }, "send\u202e": { action: "tasks.noop", next: "END" }, "x\u001b[2J": { action: "tasks.noop", next: "END" } },
    });
    expect(found).toEqual(
      expect.arrayContaining([
        '$.nodes["send\u202e"]: INVALID_FIELD: node name "send\u202e" holds U+202E, a character people cannot see (or that reorders what they see): operators could not tell it from another name',
        '$.nodes["x\\u001b[2J"]: INVALID_FIELD: node name "x\\u001b[2J" holds U+001B, a character people cannot see (or that reorders what they see): operators could not tell it from another name',
        '$.state["note\u200b"]: BAD_STATE_SCHEMA: state key "note\u200b" holds U+200B, a character people cannot see (or that reorders what they see): operators could not tell it from another name',
      ]),
    );
    expect(() => workflow("hidden", { state: z.object({}) }).node("go\u2066", noop, { next: "END" }).compile()).toThrow(/node name "go\u2066" holds U\+2066/);
  });
});
