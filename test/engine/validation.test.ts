import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { z as z3 } from "zod/v3";
import {
  WorkflowError,
  checkWorkflowText,
  formatProblem,
  formatProblemIn,
  loadWorkflowFile,
  loadWorkflowText,
  loadWorkflowValue,
  renderGraph,
  workflow,
} from "../../engine/index.js";
import { checkActions as actions, problemsOf } from "../support/workflow-checks.js";

const noop = () => ({});

/** The problems a one-node workflow over `state` is refused with: path, code and message. */
function problemsOfState(state: z.ZodObject): string[] {
  try {
    workflow("shaped", { state }).node("a", noop, { next: "END" }).compile();
    return [];
  } catch (error) {
    return (error as WorkflowError).problems.map((p) => `${p.path} ${p.code} ${p.message}`);
  }
}

const TASK_QUEUE = {
  name: "task-queue",
  state: {
    tasks: { type: "array", items: { type: "string" }, reducer: "append", default: [] },
    done: { type: "boolean", default: false },
  },
  start: "init",
  nodes: {
    init: { action: "tasks.init", next: "work" },
    work: { action: "tasks.work", retry: { maxAttempts: 3, backoffMs: 100 }, timeoutMs: 30000, next: "check" },
    check: { action: "tasks.check", routes: { YES: "fanout", NO: "work" }, default: "work" },
    fanout: { action: "tasks.noop", next: ["a", "b"] },
    a: { action: "tasks.a", next: "join" },
    b: { action: "tasks.b", next: "join" },
    join: { action: "tasks.join", waitFor: ["a", "b"], next: "END" },
  },
  limits: { maxSteps: 500, concurrency: 8 },
};

function variant(change: (doc: typeof TASK_QUEUE & Record<string, unknown>) => void) {
  const doc = structuredClone(TASK_QUEUE) as typeof TASK_QUEUE & Record<string, unknown>;
  change(doc);
  return doc;
}

describe("workflow validation", () => {
  it("accepts the issue's task-queue workflow with no problem", () => {
    expect(problemsOf(TASK_QUEUE)).toEqual([]);
  });

  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  it.each<[string, string, (d: any) => void]>([
    ["MISSING_START", "$.start", (d: any) => (d.start = "nope")],
    ["UNKNOWN_TARGET", "$.nodes.work.next", (d: any) => (d.nodes.work.next = "nowhere")],
    ["UNKNOWN_TARGET", "$.nodes.check.routes.YES", (d: any) => (d.nodes.check.routes.YES = "nowhere")],
    ["UNKNOWN_TARGET", "$.nodes.check.routes.YES[1]", (d: any) => (d.nodes.check.routes.YES = ["fanout", "nowhere"])],
    ["UNREACHABLE_NODE", "$.nodes.orphan", (d: any) => (d.nodes.orphan = { action: "tasks.noop", next: "END" })],
    ["UNKNOWN_ACTION", "$.nodes.init.action", (d: any) => (d.nodes.init.action = "tasks.missing")],
    ["BAD_REDUCER", "$.state.tasks.reducer", (d: any) => (d.state.tasks.reducer = "concat")],
    ["BAD_REDUCER", "$.state.done.reducer", (d: any) => (d.state.done.reducer = "append")],
    ["BAD_STATE_SCHEMA", "$.state.done.type", (d: any) => (d.state.done.type = "flag")],
    ["BAD_STATE_SCHEMA", "$.state.done.default", (d: any) => (d.state.done.default = "yes")],
    // A limit for one type without a type constrains nothing (zod would build "any value").
    ["BAD_STATE_SCHEMA", "$.state.extra.maxItems", (d: any) => (d.state.extra = { maxItems: 2 })],
    ["BAD_STATE_SCHEMA", "$.state.extra.properties.name.minLength", (d: any) => (d.state.extra = { type: "object", properties: { name: { minLength: 3 } }, default: {} })],
    ["WAITFOR_NOT_PREDECESSOR", "$.nodes.join.waitFor[0]", (d: any) => (d.nodes.join.waitFor = ["init", "b"])],
    // An edge into a join from a node it does not wait for would never run it (the run "succeeded" without it).
    ["EDGE_NOT_AWAITED", "$.nodes.check.routes.YES", (d: any) => (d.nodes.check.routes.YES = "join")],
    ["EDGE_NOT_AWAITED", "$.nodes.fanout.next", (d: any) => (d.nodes.fanout.next = ["a", "b", "join"])],
    // A rejection that goes on to the next node would approve everything.
    ["REJECT_GOES_ON", "$.nodes.init.next", (d: any) => (d.nodes.init = { kind: "approval", question: "Go?", next: "work" })],
    // A start node that waits for anything never runs: the run ended after 0 steps.
    ["INVALID_FIELD", "$.nodes.init.waitFor", (d: any) => ((d.nodes.init.waitFor = ["work"]), (d.nodes.check.routes.NO = "init"))],
    ["INVALID_FIELD", "$.nodes.work.retry.maxAttempts", (d: any) => (d.nodes.work.retry.maxAttempts = 0)],
    ["INVALID_FIELD", "$.nodes.a.colour", (d: any) => (d.nodes.a.colour = "red")],
    ["CONFLICTING_EDGES", "$.nodes.check.next", (d: any) => (d.nodes.check.next = "work")],
    ["UNKNOWN_STATE_KEY", "$.nodes.check.routeOn", (d: any) => (d.nodes.check.routeOn = "verdict")],
    ["UNKNOWN_NODE", "$.interruptBefore[0]", (d: any) => (d.interruptBefore = ["ghost"])],
    ["INVALID_FIELD", '$.nodes[""]', (d: any) => (d.nodes[""] = { action: "tasks.noop", next: "END" })],
    ["INVALID_FIELD", "$.nodes.check.routes", (d: any) => ((d.nodes.check.routes = {}), delete d.nodes.check.default, (d.nodes.check.next = "fanout"))],
    // A wake time past any date failed at run time with "Invalid time value".
    ["INVALID_FIELD", "$.nodes.summary.seconds", (d: any) => ((d.nodes.summary = { kind: "wait", seconds: 1e15, next: "END" }), (d.nodes.join.next = "summary"))],
  ])("reports %s at %s", (code, path, change) => {
    const problems = problemsOf(variant(change));
    expect(problems).toContainEqual(expect.objectContaining({ code, path, severity: "error" }));
  });

  it("takes an approval with next when it offers no reject, or when every decision ends the run", () => {
    for (const approval of [{ decisions: ["approve", "edit"], next: "work" }, { next: "END" }, { routes: { approve: "work", reject: "END" } }]) {
      const problems = problemsOf(variant((d: any) => (d.nodes.init = { kind: "approval", question: "Go?", ...approval })));
      expect(problems.filter((p) => p.code === "REJECT_GOES_ON")).toEqual([]);
    }
  });

  it("checks an approval's deadline: its decision one of the node's, not edit, a time above 0; a timeout route only with it", () => {
    const approval = (fields: object) => (d: any) => (d.nodes.init = { kind: "approval", question: "Go?", routes: { approve: "work", reject: "END" }, ...fields });
    const said = (fields: object) => problemsOf(variant(approval(fields))).filter((p) => p.severity === "error").map((p) => `${p.path} ${p.message}`);
    expect(said({ deadline: { seconds: 60, decision: "reject" }, routes: { approve: "work", reject: "END", timeout: "END" } })).toEqual([]);
    expect(said({ decisions: ["approve", "edit"], deadline: { seconds: 60, decision: "reject" } }).join("\n")).toContain(
      '$.nodes.init.deadline.decision "reject" is not one of this approval\'s decisions (approve, edit)',
    );
    expect(said({ deadline: { seconds: 60, decision: "edit" } }).join("\n")).toContain('$.nodes.init.deadline.decision "edit" is not one of "approve", "reject"');
    expect(said({ deadline: { seconds: 0, decision: "reject" } }).join("\n")).toContain("$.nodes.init.deadline.seconds");
    // A decision left out says what it may be (zod's own: `undefined is not one of ...`).
    expect(said({ deadline: { seconds: 60 } })).toEqual(['$.nodes.init.deadline.decision required field is missing (expected "approve" or "reject")']);
    expect(said({ routes: { approve: "work", reject: "END", timeout: "END" } }).join("\n")).toContain('"timeout" is not one of this approval\'s decisions (approve, reject, edit); the "timeout" route needs a deadline');
    expect(said({ timeoutMs: 1000 }).join("\n")).toContain("give it a deadline");
  });

  it("reports warnings for routes without a default and for nodes with no path to END", () => {
    const problems = problemsOf(
      variant((d: any) => {
        delete d.nodes.check.default;
        d.nodes.check.routes = { YES: "fanout", NO: "spin" };
        // A loop a route could leave (here only for itself): an operator may be meant to end it.
        d.nodes.spin = { action: "tasks.noop", routes: { again: "spin" }, default: "spin" };
      }),
    );
    expect(problems).toContainEqual(expect.objectContaining({ path: "$.nodes.check.routes", code: "ROUTES_WITHOUT_DEFAULT", severity: "warning" }));
    expect(problems).toContainEqual(expect.objectContaining({ path: "$.nodes.spin", code: "NO_PATH_TO_END", severity: "warning" }));
    expect(problems.filter((p) => p.severity === "error")).toEqual([]);
  });

  it("refuses a loop of `next` edges only that never reaches END, once, where the run enters it", () => {
    const problems = problemsOf(
      variant((d: any) => {
        d.nodes.check.routes = { YES: "fanout", NO: "spin" };
        d.nodes.spin = { action: "tasks.noop", next: "spin2" };
        d.nodes.spin2 = { action: "tasks.noop", next: "spin" };
      }),
    ).filter((p) => p.code === "NO_PATH_TO_END");
    expect(problems).toEqual([
      {
        path: "$.nodes.spin",
        line: expect.any(Number),
        column: 5,
        code: "NO_PATH_TO_END",
        severity: "error",
        message: 'from "spin" the run goes round "spin" → "spin2" by `next` edges only and never reaches END: a run that gets here can never end (it fails at limits.maxSteps); give a node of the loop routes with a way to END',
      },
    ]);
    expect(() => workflow("forever", { state: z.object({ n: z.number() }) }).node("spin", noop, { next: "spin" }).compile()).toThrow(/from "spin" the run goes round "spin" by `next` edges only/);
  });

  it("reports every problem at once", () => {
    const problems = problemsOf(
      variant((d: any) => {
        d.start = "nope";
        d.nodes.init.action = "tasks.missing";
        d.state.tasks.reducer = "concat";
      }),
    );
    expect(problems.map((p) => p.code).sort()).toEqual(expect.arrayContaining(["BAD_REDUCER", "MISSING_START", "UNKNOWN_ACTION"]));
  });

  it("reports malformed JSON with line and column, and a node written twice", () => {
    const broken = checkWorkflowText('{\n  "name": "x",\n  "start": "a"\n  "nodes": {}\n}').problems;
    expect(broken).toEqual([{ path: "$", code: "BAD_JSON", severity: "error", message: "line 4, column 3: expected ','", line: 4, column: 3 }]);
    const twice = checkWorkflowText('{"name":"x","start":"a","nodes":{"a":{"action":"tasks.noop"},\n"a":{"action":"tasks.noop"}}}', { actions }).problems;
    expect(twice).toContainEqual(expect.objectContaining({ code: "DUPLICATE_NODE", path: "$.nodes.a", message: expect.stringContaining("line 2, column 1"), line: 2, column: 1 }));
  });

  it("checks both definitions of a node written twice, each at its own line, without calling unreachable what only the dropped one leads to", () => {
    const text = [
      "{",
      '  "name": "twice",',
      '  "start": "a",',
      '  "nodes": {',
      '    "a": { "action": "tasks.noop", "next": ["b", "c", "b"] },',
      '    "b": { "action": "tasks.noop", "next": "END" },',
      '    "c": { "action": "tasks.noop", "next": "END" },',
      '    "lone": { "action": "tasks.noop", "next": "END" },',
      '    "a": { "action": "tasks.noop", "next": "b", "retry": { "backoffMs": 100, "maxBackoffMs": 10 } }',
      "  }",
      "}",
    ].join("\n");
    expect(checkWorkflowText(text, { actions }).problems.map((p) => formatProblemIn("twice.json", p))).toEqual([
      'twice.json:9:5: $.nodes.a: DUPLICATE_NODE: node "a" is defined twice (again at line 9, column 5)',
      "twice.json:9:78: $.nodes.a.retry.maxBackoffMs: INVALID_FIELD: maxBackoffMs 10 is below backoffMs 100: every wait would be 10 ms, not 100; raise maxBackoffMs or lower backoffMs",
      'twice.json:8:5: $.nodes.lone: UNREACHABLE_NODE: no path from "a" reaches "lone"',
      'twice.json:5:55: $.nodes.a.next[2]: INVALID_FIELD: "b" is listed more than once: a node runs once per step however often it is listed (`map: { over }` runs it once per item)',
    ]);
  });

  it("loadWorkflowFile's error names its first problem, and how to see them all", () => {
    const file = join(mkdtempSync(join(tmpdir(), "pitwall-load-")), "three.json");
    writeFileSync(file, JSON.stringify({ name: "three", start: "nope", nodes: { a: { action: "tasks.nope", next: "nowhere" } } }));
    expect(() => loadWorkflowFile(file, actions)).toThrow(
      `${file} is invalid: ${file}:1:46: $.nodes.a.action: UNKNOWN_ACTION: action "tasks.nope" is not exported by the actions module (did you mean "tasks.noop"?) (and 2 more; pitwall validate ${file} or the WorkflowError's problems list them)`,
    );
  });

  it("says an integer key expects an integer when given what is no number at all", () => {
    expect(problemsOf(variant((d: any) => (d.state.count = { type: "integer", default: "0" }))).map(formatProblem)).toEqual([
      '$.state.count.default: BAD_STATE_SCHEMA: default does not match the schema: expected integer, got string "0"',
    ]);
  });

  it("reports maxBackoffMs below backoffMs beside another mistake in the same retry", () => {
    expect(problemsOf(variant((d: any) => (d.nodes.work.retry = { maxAttempts: 0, backoffMs: 100, maxBackoffMs: 10 }))).map(formatProblem)).toEqual([
      "$.nodes.work.retry.maxAttempts: INVALID_FIELD: must be at least 1, got 0",
      "$.nodes.work.retry.maxBackoffMs: INVALID_FIELD: maxBackoffMs 10 is below backoffMs 100: every wait would be 10 ms, not 100; raise maxBackoffMs or lower backoffMs",
    ]);
  });

  it("refuses an enum value its type refuses, which no value can ever be", () => {
    const enums = { level: { type: "integer", enum: [1, 2, "3"], default: 1 }, mode: { type: ["string", "null"], enum: ["a", null, 1.5], default: "a" }, n: { type: "number", enum: [1, 2.5], default: 1 } };
    expect(problemsOf(variant((d: any) => Object.assign(d.state, enums))).map(formatProblem)).toEqual([
      '$.state.level.enum[2]: BAD_STATE_SCHEMA: enum value "3" is a string, which "type": "integer" refuses: no value can ever be "3"',
      '$.state.mode.enum[2]: BAD_STATE_SCHEMA: enum value 1.5 is a number, which "type": ["string","null"] refuses: no value can ever be 1.5',
    ]);
  });

  it("refuses names JavaScript objects hold already (__proto__, constructor, toString) for nodes, state keys and routes", () => {
    const text = JSON.stringify({
      name: "x",
      state: { n: { type: "integer", default: 0 }, toString: { type: "string", default: "" } },
      start: "a",
      nodes: { a: { action: "tasks.noop", next: "constructor" }, constructor: { action: "tasks.noop", next: "END" }, b: { action: "tasks.noop", routes: { valueOf: "END" }, default: "END" } },
    }).replace('"nodes":{', '"nodes":{"__proto__":{"action":"tasks.noop","next":"END"},');
    const found = checkWorkflowText(text, { actions }).problems.map((p) => `${p.path} ${p.code}`);
    expect(found).toEqual(
      expect.arrayContaining(["$.nodes.__proto__ INVALID_FIELD", "$.nodes.constructor INVALID_FIELD", "$.state.toString BAD_STATE_SCHEMA", "$.nodes.b.routes.valueOf INVALID_FIELD"]),
    );
    expect(() => workflow("proto", { state: z.object({}) }).node("toString", noop, { next: "END" }).compile()).toThrow(/"toString" is a name JavaScript objects hold already/);
    expect(() => workflow("proto", { state: z.object({}) }).node("__proto__", noop, { next: "END" }).compile()).toThrow(/"__proto__" is a name JavaScript objects hold already/);
  });

  it("says once that a name cannot be a node's when the node is written twice, beside the duplicate, in a file and in code", () => {
    const text = [
      "{",
      '  "name": "x",',
      '  "start": "a",',
      '  "nodes": {',
      '    "a": { "action": "tasks.noop", "next": "END" },',
      '    "__proto__": { "action": "tasks.noop", "next": "END" },',
      '    "__proto__": { "action": "tasks.noop", "next": "END" }',
      "  }",
      "}",
    ].join("\n");
    expect(checkWorkflowText(text, { actions }).problems.map((p) => formatProblemIn("proto.json", p))).toEqual([
      'proto.json:7:5: $.nodes.__proto__: DUPLICATE_NODE: node "__proto__" is defined twice (again at line 7, column 5)',
      'proto.json:7:5: $.nodes.__proto__: INVALID_FIELD: "__proto__" is a name JavaScript objects hold already (like constructor, toString, __proto__): choose another',
    ]);
    const built = workflow("proto", { state: z.object({}) }).node("a", noop, { next: "END" }).node("START", noop, { next: "END" }).node("START", noop, { next: "END" });
    expect(() => built.compile()).toThrow(
      'workflow proto is invalid:\n$.nodes.START: DUPLICATE_NODE: node "START" is added twice: the workflow would keep only the last; give each node its own name\n$.nodes.START: INVALID_FIELD: "START" is reserved and cannot name a node',
    );
  });

  it("refuses a node that routes both by routeOn and by a route function", () => {
    const build = () =>
      workflow("both", { state: z.object({ k: z.string().default("x") }) })
        .node("a", noop, { routeOn: "k", route: () => "y", routes: { x: "END", y: "END" } })
        .compile();
    expect(build).toThrow("$.nodes.a.routeOn: INVALID_FIELD: a node chooses its route by `routeOn` or by its route function, not both: the function's choice would be ignored");
  });

  it("keeps what checking warned of on the compiled workflow, built in code or loaded from JSON", () => {
    const routed = workflow("warned", { state: z.object({ mode: z.string().default("x") }) })
      .node("a", noop, { routeOn: "mode", routes: { x: "b" }, default: "END" })
      .node("b", noop, { routeOn: "mode", routes: { x: "END" } })
      .compile();
    expect(routed.warnings.map((p) => `${p.path} ${p.code}`)).toEqual(["$.nodes.b.routes ROUTES_WITHOUT_DEFAULT"]);
    expect(routed.warnings.every((p) => p.severity === "warning")).toBe(true);
    const clean = workflow("clean", { state: z.object({}) }).node("a", noop, { next: "END" }).compile();
    expect(clean.warnings).toEqual([]);
    const loaded = loadWorkflowValue({ name: "j", state: { mode: { type: "string", default: "x" } }, start: "a", nodes: { a: { action: "tasks.noop", routeOn: "mode", routes: { x: "END" } } } }, actions);
    expect(loaded.warnings.map((p) => p.code)).toContain("ROUTES_WITHOUT_DEFAULT");
  });

  it("reports an edge to no node once, without the missing paths to END that follow from it", () => {
    expect(problemsOf(variant((d: any) => (d.nodes.work.next = "nowhere"))).map((p) => `${p.path} ${p.code}`)).toEqual(["$.nodes.work.next UNKNOWN_TARGET"]);
  });

  it("reports only the bad field of a node, not problems elsewhere that follow from dropping it", () => {
    const problems = (patch: (d: any) => void) => problemsOf(variant(patch)).filter((p) => p.severity === "error").map((p) => `${p.path} ${p.code}`);
    expect(problems((d) => (d.nodes.work.timeoutMs = 0))).toEqual(["$.nodes.work.timeoutMs INVALID_FIELD"]);
    // Longer than a timer holds, it would fire at once: the node would time out as it starts.
    expect(problems((d) => (d.nodes.work.timeoutMs = 3_000_000_000))).toEqual(["$.nodes.work.timeoutMs INVALID_FIELD"]);
    expect(problems((d) => (d.nodes.work.retry.maxBackoffMs = 3_000_000_000))).toEqual(["$.nodes.work.retry.maxBackoffMs INVALID_FIELD"]);
    expect(problems((d) => (d.nodes[d.start].retry = { maxAttempts: "3" }))).toEqual([expect.stringMatching(/^\$\.nodes\.\w+\.retry\.maxAttempts INVALID_FIELD$/)]);
    expect(problemsOf(variant((d: any) => (d.nodes.work.timeoutMs = 0))).map((p) => p.code)).not.toContain("NO_PATH_TO_END");
  });

  it("refuses a state type that JSON cannot hold (a Date would come back a string after a restart)", () => {
    const build = () => workflow("dated", { state: z.object({ at: z.date(), n: z.number().default(0) }) }).node("a", noop, { next: "END" }).compile();
    expect(build).toThrow(WorkflowError);
    try {
      build();
    } catch (error) {
      expect((error as WorkflowError).problems).toEqual([
        expect.objectContaining({ path: "$.state.at", code: "BAD_STATE_SCHEMA", message: expect.stringMatching(/^Date cannot be represented in JSON Schema: state is stored as JSON/) }),
      ]);
    }
  });

  it("refuses a transform or preprocess (input parsed, writes not) and a default drawn anew at each compile (every process another version)", () => {
    expect(problemsOfState(z.object({ d: z.string().transform((s) => s.toUpperCase()) }))).toEqual([
      "$.state.d BAD_STATE_SCHEMA a transform changes values as they are parsed, but state is checked, not parsed, as nodes write it: give the plain type, and shape the value in the node that writes it",
    ]);
    expect(problemsOfState(z.object({ d: z.preprocess((x) => String(x).toUpperCase(), z.string()), nested: z.object({ n: z.preprocess(Number, z.number()) }) }))).toEqual([
      "$.state.d BAD_STATE_SCHEMA a preprocess changes values as they are parsed, but state is checked, not parsed, as nodes write it: give the plain type, and shape the value in the node that writes it",
      "$.state.nested BAD_STATE_SCHEMA a preprocess changes values as they are parsed, but state is checked, not parsed, as nodes write it: give the plain type, and shape the value in the node that writes it",
    ]);
    // A pipe into a narrower check changes nothing: it stays allowed.
    expect(problemsOfState(z.object({ code: z.string().pipe(z.string().length(3)) }))).toEqual([]);
    let drawn = 0;
    expect(problemsOfState(z.object({ id: z.string().default(() => `id-${drawn++}`) }))).toEqual([
      `$.state.id BAD_STATE_SCHEMA the default of "id" is a function giving another value each time: the workflow's version (the hash of its definition) would differ in every process, and no process could resume another's runs; give a fixed default, or set the value in the run's input or its first node`,
    ]);
    // A function that gives the same value each time is a fixed default.
    expect(problemsOfState(z.object({ list: z.array(z.string()).default(() => []) }))).toEqual([]);
  });

  it("refuses what rewrites a value as it is parsed (codec, .catch, .trim and kin, z.coerce), naming the key and what to give instead", () => {
    const problem = (schema: z.ZodType) => problemsOfState(z.object({ n: z.number().default(0), key: schema as z.ZodString }));
    const [codec] = problem(z.stringbool());
    expect(codec).toMatch(/^\$\.state\.key BAD_STATE_SCHEMA a codec \(z\.stringbool\(\), z\.codec\(\)\) decodes values as they are parsed: .*give the type the state holds \(z\.boolean\(\) for z\.stringbool\(\)\)/);
    expect(problem(z.codec(z.string(), z.number(), { decode: Number, encode: String }))).toEqual([codec]);
    const [caught] = problem(z.number().catch(0));
    expect(caught).toMatch(/^\$\.state\.key BAD_STATE_SCHEMA a \.catch\(\) puts its fallback in place of an invalid value .*give the plain type \(with \.default\(\) for a missing value\)/);
    expect(problem(z.array(z.object({ tag: z.string().catch("none") })))).toEqual([caught]);
    const [rewritten] = problem(z.string().trim());
    expect(rewritten).toMatch(/^\$\.state\.key BAD_STATE_SCHEMA a \.trim\(\), \.toLowerCase\(\), \.toUpperCase\(\), \.normalize\(\) or \.overwrite\(\) rewrites values as they are parsed.*check the form instead \(\.lowercase\(\), \.uppercase\(\)/);
    for (const schema of [z.string().toLowerCase(), z.string().toUpperCase(), z.string().normalize(), z.number().overwrite(Math.round), z.object({ email: z.string().trim() })]) {
      expect(problem(schema)).toEqual([rewritten]);
    }
    const [coerced] = problem(z.coerce.number());
    expect(coerced).toMatch(/^\$\.state\.key BAD_STATE_SCHEMA z\.coerce converts values as they are parsed .*give the plain type \(z\.number\(\), z\.boolean\(\), \.\.\.\)/);
    expect(problem(z.object({ on: z.coerce.boolean() }))).toEqual([coerced]);
    // What the messages offer instead compiles, and checks what the refused schema rewrote.
    expect(problem(z.boolean())).toEqual([]);
    expect(problem(z.string().lowercase().regex(/^\S(.*\S)?$/))).toEqual([]);
    const wf = workflow("checked-form", { state: z.object({ tag: z.string().lowercase().default("a") }) }).node("a", noop, { next: "END" }).compile();
    expect(() => wf.validator.parseInput({ tag: "Mixed" })).toThrow(/tag/);
  });

  it("refuses a refinement, which the state's stored checks (what operators' edits are checked against) cannot hold", () => {
    const refused = (state: z.ZodObject) => problemsOfState(state).map((p) => p.split(" ").slice(0, 2).join(" "));
    expect(refused(z.object({ even: z.number().refine((n) => n % 2 === 0).default(0) }))).toEqual(["$.state.even BAD_STATE_SCHEMA"]);
    expect(refused(z.object({ range: z.object({ lo: z.number(), hi: z.number() }).superRefine(() => {}).optional() }))).toEqual(["$.state.range BAD_STATE_SCHEMA"]);
    expect(() => workflow("refined", { state: z.object({ even: z.number().refine((n) => n % 2 === 0) }) }).node("a", noop, { next: "END" }).compile()).toThrow(
      /a refinement \(\.refine, \.superRefine, \.check\) is code, and the state's checks are stored as JSON Schema/,
    );
    // A zod 3 schema says so, not what zod 4's internals lacked in it.
    expect(() => workflow("three", { state: z3.object({ n: z3.number() }) as never }).node("a", noop, { next: "END" }).compile()).toThrow(
      '$.state: BAD_STATE_SCHEMA: the state is not a zod 4 object schema (zod 3 and "zod/v3" schemas are not supported): import { z } from "zod" with zod 4 installed',
    );
    // What JSON Schema says (a format, a pattern, bounds) stays allowed.
    expect(refused(z.object({ mail: z.email().optional(), id: z.uuid().optional(), n: z.number().min(1).optional(), code: z.string().regex(/^[A-Z]{3}$/).optional() }))).toEqual([]);
  });

  it("formats problems as the CLI prints them", () => {
    const [problem] = problemsOf(variant((d: any) => (d.nodes.work.next = "nowhere")));
    expect(formatProblem(problem!)).toBe('$.nodes.work.next: UNKNOWN_TARGET: "nowhere" is not a node (nor END) (nodes: init, work, check, fanout, a, b, join)');
    expect(formatProblemIn("wf.json", problem!)).toBe(`wf.json:${problem!.line}:${problem!.column}: ${formatProblem(problem!)}`);
  });
});

describe("one model for code and data", () => {
  const inCode = () =>
    workflow("task-queue", {
      state: z.object({ tasks: z.array(z.string()).default([]), done: z.boolean().default(false) }),
      reducers: { tasks: "append" },
      limits: { maxSteps: 500, concurrency: 8 },
    })
      .node("init", noop, { action: "tasks.init", next: "work" })
      .node("work", noop, { action: "tasks.work", retry: { maxAttempts: 3, backoffMs: 100 }, timeoutMs: 30000, next: "check" })
      .node("check", noop, { action: "tasks.check", routes: { YES: "fanout", NO: "work" }, default: "work" })
      .node("fanout", noop, { action: "tasks.noop", next: ["b", "a"] })
      .node("a", noop, { action: "tasks.a", next: "join" })
      .node("b", noop, { action: "tasks.b", next: "join" })
      .node("join", noop, { action: "tasks.join", waitFor: ["a", "b"], next: "END" })
      .compile();

  it("gives the same canonical definition and version", () => {
    const fromJson = loadWorkflowText(JSON.stringify(TASK_QUEUE), actions);
    const fromCode = inCode();
    expect(fromCode.definition).toEqual(fromJson.definition);
    expect(fromCode.version).toBe(fromJson.version);
    expect(fromCode.version).toMatch(/^[0-9a-f]{16}$/);
  });

  it("changes the version when the graph changes", () => {
    const a = loadWorkflowText(JSON.stringify(TASK_QUEUE), actions);
    const b = loadWorkflowText(JSON.stringify(variant((d: any) => (d.nodes.work.timeoutMs = 1000))), actions);
    expect(a.version).not.toBe(b.version);
  });

  it("renders the graph as text with route labels, fan-out and fan-in", () => {
    const text = renderGraph(loadWorkflowText(JSON.stringify(TASK_QUEUE), actions).definition);
    expect(text).toContain("start → init");
    expect(text).toMatch(/check .*action tasks\.check/);
    expect(text).toMatch(/\[YES\]\s+→ fanout/);
    expect(text).toMatch(/\[NO\]\s+→ work/);
    expect(text).toMatch(/\[default\] → work/);
    expect(text).toContain("→ a   (parallel)");
    expect(text).toContain("waits for a + b");
    // A route that fans out lists each of its targets, as parallel.
    const { fanout: _unused, ...nodes } = TASK_QUEUE.nodes;
    const fanout = { ...TASK_QUEUE, nodes: { ...nodes, check: { action: "tasks.check", routes: { YES: ["a", "b"], NO: "work" }, default: "work" } } };
    const routed = renderGraph(loadWorkflowText(JSON.stringify(fanout), actions).definition);
    expect(routed).toMatch(/\[YES\]\s+→ a   \(parallel\)\n\s+\[YES\]\s+→ b   \(parallel\)\n\s+\[NO\]\s+→ work\n/);
  });
});
