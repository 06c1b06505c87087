import { mkdirSync, mkdtempSync, readFileSync, realpathSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { checkWorkflowText, formatProblem, formatProblemIn, loadWorkflowText } from "../../engine/index.js";
import { checkActions as actions, problemsOf } from "../support/workflow-checks.js";

describe("sub-workflow validation", () => {
  it("loads sub-workflows by relative path and refuses a broken one with its problem", () => {
    const dir = mkdtempSync(join(tmpdir(), "pitwall-sub-"));
    writeFileSync(join(dir, "child.json"), JSON.stringify({ name: "child", start: "x", nodes: { x: { action: "tasks.noop", next: "END" } } }));
    const parent = { name: "parent", start: "sub", nodes: { sub: { kind: "subgraph", workflow: "./child.json", next: "END" } } };
    const wf = loadWorkflowText(JSON.stringify(parent), actions, { baseDir: dir });
    expect(wf.children.size).toBe(1);
    expect([...wf.children.values()][0]!.name).toBe("child");
    writeFileSync(join(dir, "child.json"), JSON.stringify({ name: "child", start: "x", nodes: { x: { action: "tasks.gone" } } }));
    const problems = checkWorkflowText(JSON.stringify(parent), { actions, baseDir: dir }).problems;
    expect(problems).toContainEqual(expect.objectContaining({ code: "BAD_SUBGRAPH", path: "$.nodes.sub.workflow", message: expect.stringContaining("UNKNOWN_ACTION") }));
  });

  it("names a cycle of sub-workflow files once, with the files it goes through", () => {
    const dir = mkdtempSync(join(tmpdir(), "pitwall-cycle-"));
    const doc = (name: string, child: string) => JSON.stringify({ name, start: "x", nodes: { x: { kind: "subgraph", workflow: child, next: "END" } } });
    writeFileSync(join(dir, "a.json"), doc("a", "./b.json"));
    writeFileSync(join(dir, "b.json"), doc("b", "./a.json"));
    writeFileSync(join(dir, "self.json"), doc("self", "./self.json"));
    // A file outside the current folder is named by its whole path.
    const at = (f: string) => join(dir, f);
    const check = (f: string) => checkWorkflowText(readFileSync(join(dir, f), "utf8"), { actions, baseDir: dir, file: join(dir, f) }).problems.map(formatProblem);
    expect(check("a.json")).toEqual([`$.nodes.x.workflow: BAD_SUBGRAPH: sub-workflows include each other: ${at("a.json")} → ${at("b.json")} → ${at("a.json")}`]);
    expect(check("self.json")).toEqual([`$.nodes.x.workflow: BAD_SUBGRAPH: sub-workflows include each other: ${at("self.json")} → ${at("self.json")}`]);
  });

  it("names a cycle through a symbolic link to a file as a cycle", () => {
    const dir = realpathSync(mkdtempSync(join(tmpdir(), "pitwall-link-")));
    mkdirSync(join(dir, "sub"));
    writeFileSync(join(dir, "self.json"), JSON.stringify({ name: "self", start: "x", nodes: { x: { kind: "subgraph", workflow: "./sub/link.json", next: "END" } } }));
    symlinkSync("../self.json", join(dir, "sub", "link.json"));
    const problems = checkWorkflowText(readFileSync(join(dir, "self.json"), "utf8"), { actions, baseDir: dir, file: join(dir, "self.json") }).problems;
    expect(problems.map(formatProblem)).toEqual([`$.nodes.x.workflow: BAD_SUBGRAPH: sub-workflows include each other: ${join(dir, "self.json")} → ${join(dir, "self.json")}`]);
  });

  it("checks a sub-workflow's input and output mappings against both states", () => {
    const child = {
      name: "child",
      state: { q: { type: "string" }, out: { type: "integer", default: 0 } },
      start: "x",
      nodes: { x: { action: "tasks.noop", next: "END" } },
    };
    const parent = (sub: Record<string, unknown>) => ({
      name: "parent",
      state: { n: { type: "integer", default: 0 }, text: { type: "string", default: "" } },
      start: "sub",
      nodes: { sub: { kind: "subgraph", workflow: child, next: "END", ...sub } },
    });
    expect(problemsOf(parent({ input: { q: "text" }, output: { n: "out" } }))).toEqual([]);
    const problems = problemsOf(parent({ input: { q: "text", m: "zz" }, output: { nn: "out", n: "qq" } })).map(formatProblem);
    expect(problems).toEqual(
      expect.arrayContaining([
        '$.nodes.sub.input.m: UNKNOWN_STATE_KEY: the sub-workflow child has no state key "m"',
        '$.nodes.sub.input.m: UNKNOWN_STATE_KEY: state has no key "zz" to give the sub-workflow',
        '$.nodes.sub.output.nn: UNKNOWN_STATE_KEY: state has no key "nn" to receive the sub-workflow\'s "out"',
        '$.nodes.sub.output.n: UNKNOWN_STATE_KEY: the sub-workflow child has no state key "qq"',
      ]),
    );
    expect(problemsOf(parent({})).map(formatProblem)).toEqual([
      '$.nodes.sub.workflow: BAD_SUBGRAPH: the sub-workflow child needs state key "q" (it has no default), and the parent has no key of that name',
    ]);
  });

  it("checks that a mapped sub-workflow's child has the key each item goes into (map.as, default item)", () => {
    const child = (state: Record<string, unknown>) => ({ name: "child", state, start: "x", nodes: { x: { action: "tasks.noop", next: "END" } } });
    const parent = (childState: Record<string, unknown>, map: Record<string, unknown>, input?: Record<string, string>) => ({
      name: "parent",
      state: { items: { type: "array", items: { type: "string" } } },
      start: "sub",
      nodes: { sub: { kind: "subgraph", workflow: child(childState), map: { over: "items", ...map }, next: "END", ...(input ? { input } : {}) } },
    });
    // The item gives the key: it needs no default.
    expect(problemsOf(parent({ item: { type: "string" } }, {}))).toEqual([]);
    expect(problemsOf(parent({ topic: { type: "string" } }, { as: "topic" }))).toEqual([]);
    expect(problemsOf(parent({ topic: { type: "string" } }, {})).map(formatProblem)).toEqual([
      '$.nodes.sub.map: BAD_SUBGRAPH: each item of "items" goes into the sub-workflow\'s state key "item", which child does not have: declare "item" in its state, or name the key that receives the item with map.as',
      '$.nodes.sub.workflow: BAD_SUBGRAPH: the sub-workflow child needs state key "topic" (it has no default), and the parent has no key of that name',
    ]);
    expect(problemsOf(parent({ item: { type: "string" } }, { as: "topic" })).map(formatProblem)).toEqual([
      '$.nodes.sub.map.as: BAD_SUBGRAPH: each item of "items" goes into the sub-workflow\'s state key "topic", which child does not have: declare "topic" in its state, or name the key that receives the item with map.as',
      '$.nodes.sub.workflow: BAD_SUBGRAPH: the sub-workflow child needs state key "item" (it has no default), and the parent has no key of that name',
    ]);
    expect(problemsOf(parent({ item: { type: "string" } }, {}, { item: "items" })).map(formatProblem)).toEqual([
      '$.nodes.sub.input.item: BAD_SUBGRAPH: "item" receives each item of "items" (map.as), so `input` cannot also map it',
    ]);
    expect(problemsOf(parent({ item: { type: "integer" } }, {})).map(formatProblem)).toEqual([
      '$.nodes.sub.map: BAD_SUBGRAPH: each item of "items" is string, and the sub-workflow child\'s "item", which receives it, takes integer: the child run\'s input would be refused at run time',
    ]);
    // Other nodes read the item as ctx.item: `as` would name nothing.
    const action = { name: "a", state: { items: { type: "array" } }, start: "x", nodes: { x: { action: "tasks.noop", map: { over: "items", as: "it" }, next: "END" } } };
    expect(problemsOf(action).map(formatProblem)).toEqual([
      "$.nodes.x.map.as: INVALID_FIELD: `map.as` names the sub-workflow's state key that receives each item: only a subgraph node has it (other nodes read the item as ctx.item)",
    ]);
  });

  it("checks that the types of keys a sub-workflow maps can match", () => {
    const child = { name: "child", state: { n: { type: "integer", default: 0 }, x: { type: "number", default: 0 } }, start: "x", nodes: { x: { action: "tasks.noop", next: "END" } } };
    const parent = (state: Record<string, unknown>, sub: Record<string, unknown> = {}) => ({
      name: "parent",
      state,
      start: "sub",
      nodes: { sub: { kind: "subgraph", workflow: child, next: "END", ...sub } },
    });
    const check = (doc: unknown) => problemsOf(doc).map(formatProblem);
    // Shared by name: said once, for the way in.
    expect(check(parent({ n: { type: "string", default: "" } }))).toEqual([
      '$.nodes.sub.workflow: BAD_SUBGRAPH: state key "n" holds string, and the sub-workflow child\'s "n" (by name, as `input` is not given) takes integer: the child run\'s input would be refused at run time',
    ]);
    expect(check(parent({ s: { type: "string", default: "" }, m: { type: "integer", default: 0 } }, { input: { n: "s" }, output: { s: "n" } }))).toEqual([
      '$.nodes.sub.input.n: BAD_SUBGRAPH: state key "s" holds string, and the sub-workflow child\'s "n" takes integer: the child run\'s input would be refused at run time',
      '$.nodes.sub.output.s: BAD_SUBGRAPH: the sub-workflow child\'s "n" holds integer, and state key "s" takes string: the node\'s update of the parent would be refused at run time',
    ]);
    // An integer is a number; a number is an integer only when whole (a warning); no type takes anything.
    expect(check(parent({ m: { type: "integer", default: 0 }, f: { type: "number", default: 0 }, any: { default: 0 } }, { input: { x: "m", n: "any" }, output: { m: "x", f: "n" } }))).toEqual([
      '$.nodes.sub.output.m: BAD_SUBGRAPH (warning): the sub-workflow child\'s "x" holds number, and state key "m" takes integer: a number that is not whole would be refused by the node\'s update of the parent at run time',
    ]);
    expect(check(parent({ n: { type: "number", default: 0 } }))).toEqual([
      '$.nodes.sub.workflow: BAD_SUBGRAPH (warning): state key "n" holds number, and the sub-workflow child\'s "n" (by name, as `input` is not given) takes integer: a number that is not whole would be refused by the child run\'s input at run time',
    ]);
    expect(check(parent({ n: { type: ["integer", "null"], default: null } }, { output: {} }))).toEqual([
      '$.nodes.sub.workflow: BAD_SUBGRAPH (warning): state key "n" holds integer|null, and the sub-workflow child\'s "n" (by name, as `input` is not given) takes integer: a null would be refused by the child run\'s input at run time',
    ]);
  });

  it("refuses two different workflows of one name in a file tree, naming both: a sub-workflow named as its parent, inline or nested, and two sub-workflow files", () => {
    const dir = mkdtempSync(join(tmpdir(), "pitwall-names-"));
    const doc = (name: string, nodes: Record<string, unknown>) => JSON.stringify({ name, start: Object.keys(nodes)[0], nodes }, null, 2);
    const check = (file: string) => checkWorkflowText(readFileSync(join(dir, file), "utf8"), { actions, baseDir: dir, file: join(dir, file) }).problems.map((p) => formatProblemIn(file, p));
    const clash = (one: string, other: string, name: string) =>
      `${one} is named "${name}", as is ${other}, but the two differ: pitwall workflows would list them as versions of one workflow, and pitwall graph ${name} draw only the newest; rename one of them`;
    const leaf = (name: string, action = "tasks.noop") => ({ name, start: "x", nodes: { x: { action, next: "END" } } });

    writeFileSync(join(dir, "same.json"), doc("same", { outer: { kind: "subgraph", next: "END", workflow: leaf("same") } }));
    expect(check("same.json")).toEqual([
      `same.json:8:7: $.nodes.outer.workflow: BAD_SUBGRAPH: ${clash(`the inline sub-workflow at $.nodes.outer.workflow in ${join(dir, "same.json")}`, `the workflow of ${join(dir, "same.json")}`, "same")}`,
    ]);

    // Two files of one name; the same file twice is the same workflow.
    mkdirSync(join(dir, "a"));
    mkdirSync(join(dir, "b"));
    writeFileSync(join(dir, "a", "child.json"), JSON.stringify(leaf("child")));
    writeFileSync(join(dir, "b", "child.json"), JSON.stringify(leaf("child", "tasks.work")));
    const sub = (workflow: string, next = "END") => ({ kind: "subgraph", workflow, next });
    writeFileSync(join(dir, "two.json"), doc("two", { first: sub("./a/child.json", "again"), again: sub("./a/child.json", "second"), second: sub("./b/child.json") }));
    expect(check("two.json")).toEqual([
      `two.json:17:7: $.nodes.second.workflow: BAD_SUBGRAPH: ${clash(`the workflow of ${join(dir, "b", "child.json")}`, `the workflow of ${join(dir, "a", "child.json")}`, "child")}`,
    ]);

    // Two levels down, in a file of its own.
    writeFileSync(join(dir, "middle.json"), doc("middle", { deeper: sub("./a/child.json", "down"), down: sub("./top-again.json") }));
    writeFileSync(join(dir, "top-again.json"), JSON.stringify(leaf("top")));
    writeFileSync(join(dir, "top.json"), doc("top", { call: sub("./middle.json") }));
    expect(check("top.json")).toEqual([`top.json:7:7: $.nodes.call.workflow: BAD_SUBGRAPH: ${clash(`the workflow of ${join(dir, "top-again.json")}`, `the workflow of ${join(dir, "top.json")}`, "top")}`]);
  });

  it("says an inline sub-workflow's problems where they are in the file, with their paths from its root", () => {
    const text = JSON.stringify(
      { name: "outer", start: "sub", nodes: { sub: { kind: "subgraph", next: "END", workflow: { name: "inner", start: "x", nodes: { x: { action: "tasks.gone", next: "nowhere" } } } } } },
      null,
      2,
    );
    expect(checkWorkflowText(text, { actions }).problems.map((p) => formatProblemIn("outer.json", p))).toEqual([
      'outer.json:13:13: $.nodes.sub.workflow.nodes.x.action: UNKNOWN_ACTION: action "tasks.gone" is not exported by the actions module (did you mean "tasks.join"?)',
      'outer.json:14:13: $.nodes.sub.workflow.nodes.x.next: UNKNOWN_TARGET: "nowhere" is not a node (nor END) (nodes: x)',
    ]);
  });

  it("reports a node written twice in an inline sub-workflow as at the top level, and checks both definitions", () => {
    const text = [
      "{",
      '  "name": "outer",',
      '  "start": "sub",',
      '  "nodes": {',
      '    "sub": { "kind": "subgraph", "next": "END", "workflow": {',
      '      "name": "inner", "start": "x", "nodes": {',
      '        "x": { "action": "tasks.noop", "next": "END", "retry": { "backoffMs": 100, "maxBackoffMs": 10 } },',
      '        "x": { "action": "tasks.noop", "next": "END" }',
      "      } } }",
      "  }",
      "}",
    ].join("\n");
    expect(checkWorkflowText(text, { actions }).problems.map((p) => formatProblemIn("outer.json", p))).toEqual([
      'outer.json:8:9: $.nodes.sub.workflow.nodes.x: DUPLICATE_NODE: node "x" is defined twice (again at line 8, column 9)',
      "outer.json:7:84: $.nodes.sub.workflow.nodes.x.retry.maxBackoffMs: INVALID_FIELD: maxBackoffMs 10 is below backoffMs 100: every wait would be 10 ms, not 100; raise maxBackoffMs or lower backoffMs",
    ]);
  });

  it("checks the inline sub-workflow of a node's dropped definition with its own nodes written twice, each problem once, at its line", () => {
    const text = [
      "{",
      '  "name": "outer", "start": "s",',
      '  "nodes": {',
      '    "s": { "kind": "subgraph", "next": "END", "workflow": { "name": "first", "start": "x", "nodes": {',
      '      "x": { "action": "tasks.noop", "next": "nowhere1" },',
      '      "x": { "action": "tasks.noop", "next": "END" } } } },',
      '    "s": { "kind": "subgraph", "next": "END", "workflow": { "name": "second", "start": "x", "nodes": {',
      '      "x": { "action": "tasks.noop", "next": "nowhere2" },',
      '      "x": { "action": "tasks.noop", "next": "END" } } } }',
      "  }",
      "}",
    ].join("\n");
    expect(checkWorkflowText(text, { actions }).problems.map((p) => formatProblemIn("outer.json", p))).toEqual([
      'outer.json:6:7: $.nodes.s.workflow.nodes.x: DUPLICATE_NODE: node "x" is defined twice (again at line 6, column 7)',
      'outer.json:7:5: $.nodes.s: DUPLICATE_NODE: node "s" is defined twice (again at line 7, column 5)',
      'outer.json:9:7: $.nodes.s.workflow.nodes.x: DUPLICATE_NODE: node "x" is defined twice (again at line 9, column 7)',
      'outer.json:8:38: $.nodes.s.workflow.nodes.x.next: UNKNOWN_TARGET: "nowhere2" is not a node (nor END) (nodes: x)',
      'outer.json:5:38: $.nodes.s.workflow.nodes.x.next: UNKNOWN_TARGET: "nowhere1" is not a node (nor END) (nodes: x)',
    ]);
  });
});
