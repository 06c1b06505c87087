import { describe, expect, it } from "vitest";
import { ValidationError, actionRegistry, checkWorkflowText, loadWorkflowText, parseJsonText } from "../../engine/index.js";
import { applyStatePatch } from "../../engine/state/patch.js";
import { StateValidator } from "../../engine/state/schema.js";

/** The messages a person reads when their input is wrong: they name the field and say what is wrong. */
describe("messages about bad input", () => {
  const wf = loadWorkflowText(
    JSON.stringify({
      name: "m",
      state: {
        operation: { type: ["object", "null"], properties: { kind: { type: "string", enum: ["delete", "archive"] }, limit: { type: "number" } }, default: null },
        nights: { type: "integer", default: 3 },
      },
      start: "a",
      nodes: { a: { action: "x" } },
    }),
    actionRegistry({ x: () => ({}) }),
  );

  it("names the bad field inside a nullable object, and what was given", () => {
    expect(() => wf.initialState({ operation: { kind: "delete", limit: "ten" } })).toThrow('run input is invalid at $.operation.limit: expected number, got string "ten"');
    expect(() => wf.initialState({ operation: { kind: "purge" } })).toThrow('run input is invalid at $.operation.kind: "purge" is not one of "delete", "archive"');
    const required = new StateValidator({ kind: { type: "string", enum: ["delete", "archive", "keep"] } });
    expect(() => required.parse({})).toThrow('state is invalid at $.kind: missing (expected "delete", "archive" or "keep")');
    // A start without a key the state requires says both ways out; a key inside a value does not.
    expect(() => required.parseInput({})).toThrow(`run input is invalid at $.kind: missing (expected "delete", "archive" or "keep"): give it in the input, or give the key a default (or make it optional) in the workflow's state`);
    const nested = new StateValidator({ order: { type: "object", properties: { id: { type: "string" } }, required: ["id"] } });
    expect(() => nested.parseInput({ order: {} })).toThrow(/^run input is invalid at \$\.order\.id: missing \(expected string\)$/);
    expect(() => wf.initialState({ operation: 7 })).toThrow("run input is invalid at $.operation: expected object or null, got number 7");
    const nullable = new StateValidator({ note: { type: "string", nullable: true } });
    expect(() => nullable.parse({})).toThrow("state is invalid at $.note: missing (expected string or null)");
    expect(() => wf.initialState({ nights: 1e400 })).toThrow("run input is invalid at $.nights: expected integer, got Infinity (not a finite number)");
    // Types in the words the schema is written in (JSON Schema's), not zod's.
    const typed = new StateValidator({ n: { type: "integer" }, scores: { type: "object", additionalProperties: { type: "number" } } });
    expect(() => typed.parse({ n: 1.5, scores: {} })).toThrow("state is invalid at $.n: must be an integer, got 1.5");
    expect(() => typed.parse({ n: 1, scores: 5 })).toThrow("state is invalid at $.scores: expected object, got number 5");
  });

  it("names every bad field inside a nullable object, not only the first", () => {
    const validator = new StateValidator({
      operation: {
        type: ["object", "null"],
        properties: { kind: { type: "string", enum: ["delete", "archive"] }, olderThanDays: { type: "integer", minimum: 30 }, limit: { type: "integer", maximum: 10000 } },
        additionalProperties: false,
      },
    });
    let issues: unknown;
    try {
      validator.parse({ operation: { kind: "purge", olderThanDays: "7", limit: 20000 } });
    } catch (error) {
      expect((error as Error).message).toBe('state is invalid at $.operation.kind: "purge" is not one of "delete", "archive" (and 2 more)');
      issues = (error as ValidationError).issues;
    }
    expect(issues).toEqual([
      { path: "$.operation.kind", message: '"purge" is not one of "delete", "archive"' },
      { path: "$.operation.olderThanDays", message: 'expected integer, got string "7"' },
      { path: "$.operation.limit", message: "must be at most 10000, got 20000" },
    ]);
  });

  it("says in words why a JSON Patch operation cannot be applied", () => {
    const validator = new StateValidator(wf.definition.state);
    const apply = (patch: unknown) => () => applyStatePatch({ operation: null, nights: 3 }, patch, validator, () => "replace");
    expect(apply([{ op: "test", path: "/nights", value: 99 }])).toThrow("patch operation 0 (test /nights) cannot be applied: the value at /nights is 3, not 99");
    expect(apply([{ op: "remove", path: "/nope" }])).toThrow("patch operation 0 (remove /nope) cannot be applied: nothing exists at /nope");
    // Malformed operations, and paths through values that cannot hold them: one ValidationError each, nothing thrown raw.
    expect(apply([{ op: "replace", path: "nights", value: 3 }])).toThrow('patch operation 0 (replace nights): the path must be a JSON Pointer starting with "/" (e.g. "/nights")');
    expect(apply([{ op: "replace", path: "/nights" }])).toThrow('patch operation 0 (replace /nights) needs a "value"');
    expect(apply([{ op: "move", path: "/nights" }])).toThrow('patch operation 0 (move /nights) needs a "from" JSON Pointer starting with "/"');
    expect(apply([{ op: "rename", path: "/nights" }])).toThrow('patch operation 0 has op "rename": use one of add, remove, replace, move, copy, test');
    expect(apply([{ op: "test", path: "/nights", value: 3 }, { op: "add", path: "/nights/x", value: 1 }])).toThrow(
      'patch operation 1 (add /nights/x) cannot be applied: /nights holds a number, which cannot hold "x"',
    );
    for (const patch of [[{ op: "replace", path: "nights", value: 3 }], [{ op: "add", path: "/nights/x", value: 1 }]]) {
      expect(apply(patch)).toThrow(ValidationError);
    }
  });

  it("reports a JSON syntax error once, in words, with its line and column", () => {
    expect(parseJsonText('{\n  "a": 1,\n  "b": @\n}')).toEqual({ error: "line 3, column 8: unexpected character", line: 3, column: 8 });
    expect(parseJsonText("{ // note\n\"a\": 1 }", { comments: true })).toEqual({ value: { a: 1 } });
    const problems = checkWorkflowText('{ "name": "x", "start": "a" "nodes": { "a": { "action": "x" } } ').problems;
    expect(problems).toEqual([expect.objectContaining({ code: "BAD_JSON", message: "line 1, column 29: expected ','" })]);
  });

  it("names an unknown state type and a missing required field in a workflow file", () => {
    const problems = checkWorkflowText(
      JSON.stringify({
        name: "bad-types",
        state: { n: { type: "wat" }, out: { type: "string", default: "" }, count: { type: "integer", default: "3" } },
        start: "a",
        nodes: { a: { kind: "tool", tool: "lookup", output: "out", next: "END" } },
      }),
    ).problems;
    expect(problems).toContainEqual(expect.objectContaining({ path: "$.state.n.type", code: "BAD_STATE_SCHEMA", message: '"wat" is not one of "string", "number", "integer", "boolean", "array", "object", "null"' }));
    expect(problems).toContainEqual(expect.objectContaining({ path: "$.nodes.a.instruction", code: "INVALID_FIELD", message: "required field is missing (expected string)" }));
    expect(problems).toContainEqual(expect.objectContaining({ path: "$.state.count.default", message: 'default does not match the schema: expected integer, got string "3"' }));
  });
});
