import { describe, expect, it } from "vitest";
import { actionRegistry, checkWorkflowText, formatProblem } from "../../engine/index.js";

const actions = actionRegistry({ f: () => ({}) });

/** The problems of a node `a` routing on `key` (its schema given) with these routes. */
function problemsOf(key: Record<string, unknown>, routes: Record<string, string>, node: Record<string, unknown> = { action: "f" }): string[] {
  const doc = {
    name: "routes",
    state: { k: key, answer: { type: "string", default: "" } },
    start: "a",
    nodes: { a: { ...node, routeOn: "k", routes, default: "b" }, b: { action: "f", next: "END" } },
  };
  return checkWorkflowText(JSON.stringify(doc), { actions }).problems.map(formatProblem);
}

describe("route keys their routeOn key can never produce", () => {
  it("refuses routes a boolean cannot choose, naming the key, its type and its values", () => {
    expect(problemsOf({ type: "boolean", default: false }, { yes: "b", no: "b" })).toEqual([
      '$.nodes.a.routes.yes: INVALID_FIELD: route "yes" can never be chosen: k is a boolean (true or false)',
      '$.nodes.a.routes.no: INVALID_FIELD: route "no" can never be chosen: k is a boolean (true or false)',
    ]);
    expect(problemsOf({ type: "boolean", default: false }, { true: "b", false: "b" })).toEqual([]);
  });

  it("refuses an enum value spelled otherwise, with the nearest value", () => {
    expect(problemsOf({ type: "string", enum: ["lo", "hi"], default: "lo" }, { LO: "b", high: "b", hi: "b" })).toEqual([
      '$.nodes.a.routes.LO: INVALID_FIELD: route "LO" can never be chosen: k is one of "lo", "hi" (did you mean "lo"?)',
      '$.nodes.a.routes.high: INVALID_FIELD: route "high" can never be chosen: k is one of "lo", "hi"',
    ]);
  });

  it("refuses a null route: null chooses no route, the run takes the default", () => {
    expect(problemsOf({ type: "string", enum: ["x", "y"], nullable: true, default: null }, { null: "b", x: "b" })).toEqual([
      '$.nodes.a.routes.null: INVALID_FIELD: route "null" can never be chosen: k is one of "x", "y", or null: null chooses no route, so when k is null the run takes `default`',
    ]);
    expect(problemsOf({ type: ["boolean", "null"], default: null }, { null: "b", true: "b" })[0]).toContain('route "null" can never be chosen: k is a boolean (true or false), or null: null chooses no route');
  });

  it("takes any key from a string without enum (the text \"null\" too), and numbers' JSON text from a number", () => {
    expect(problemsOf({ type: "string", default: "" }, { null: "b", anything: "b" })).toEqual([]);
    expect(problemsOf({ type: "integer", default: 0 }, { "1": "b", "-2": "b", "1.5": "b", one: "b" })).toEqual([
      '$.nodes.a.routes["1.5"]: INVALID_FIELD: route "1.5" can never be chosen: k is an integer (a route key like "3")',
      '$.nodes.a.routes.one: INVALID_FIELD: route "one" can never be chosen: k is an integer (a route key like "3")',
    ]);
    expect(problemsOf({ type: "number", default: 0 }, { "1.5": "b" })).toEqual([]);
  });

  it("checks an llm node's routes against its answer's enum", () => {
    const llm = { kind: "llm", prompt: "Yes or no?", output: "k", schema: { type: "string", enum: ["yes", "no"] } };
    expect(problemsOf({ type: "string", enum: ["yes", "no"], default: "no" }, { yes: "b", No: "b" }, llm)).toEqual([
      '$.nodes.a.routes.No: INVALID_FIELD: route "No" can never be chosen: k is one of "yes", "no" (did you mean "no"?)',
    ]);
  });
});
