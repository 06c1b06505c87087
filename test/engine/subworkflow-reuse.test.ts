import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { checkWorkflowText, formatProblemIn, loadWorkflowFile } from "../../engine/index.js";
import { checkActions as actions } from "../support/workflow-checks.js";

/** A folder of workflow files, checked as `pitwall validate` checks one of them. */
function files(docs: Record<string, unknown>) {
  const dir = mkdtempSync(join(tmpdir(), "pitwall-reuse-"));
  for (const [file, doc] of Object.entries(docs)) writeFileSync(join(dir, file), JSON.stringify(doc, null, 2));
  const at = (file: string) => join(dir, file);
  const check = (file: string) => checkWorkflowText(readFileSync(at(file), "utf8"), { actions, baseDir: dir, file: at(file) }).problems.map((p) => formatProblemIn(file, p));
  return { at, check };
}

/** A workflow whose nodes each run one of the files in turn. */
function uses(name: string, ...workflows: string[]) {
  const nodes = Object.fromEntries(workflows.map((workflow, i) => [`n${i}`, { kind: "subgraph", workflow, next: i + 1 < workflows.length ? `n${i + 1}` : "END" }]));
  return { name, start: "n0", nodes };
}

// Routes without a default: a warning of the file itself.
const warned = { name: "warned", state: { m: { type: "string", default: "x" } }, start: "x", nodes: { x: { action: "tasks.noop", routeOn: "m", routes: { x: "END" } } } };
const broken = { name: "broken", start: "x", nodes: { x: { action: "tasks.noop", next: "nowhere" } } };

describe("a sub-workflow file used more than once in a tree", () => {
  it("says each of its warnings once, at its first use, however often and from however deep it is used", () => {
    const { at, check } = files({ "leaf.json": warned, "mid.json": uses("mid", "./leaf.json", "./leaf.json"), "top.json": uses("top", "./mid.json", "./leaf.json", "./mid.json") });
    const warning = `$.nodes.x.routes: ROUTES_WITHOUT_DEFAULT (warning): routes without a \`default\`: a route key that matches none fails the run`;
    expect(check("top.json")).toEqual([
      `top.json:7:7: $.nodes.n0.workflow: ROUTES_WITHOUT_DEFAULT (warning): in sub-workflow ${at("mid.json")}:7:7: $.nodes.n0.workflow: ROUTES_WITHOUT_DEFAULT (warning): in sub-workflow ${at("leaf.json")}:14:7: ${warning}`,
    ]);
    // The compiled workflow keeps the same, once.
    expect(loadWorkflowFile(at("top.json"), actions).warnings).toHaveLength(1);
  });

  it("says each of its errors once, and the nodes that use it are refused all the same", () => {
    const { at, check } = files({ "broken.json": broken, "twice.json": uses("twice", "./broken.json", "./broken.json") });
    expect(check("twice.json")).toEqual([
      `twice.json:7:7: $.nodes.n0.workflow: BAD_SUBGRAPH: in sub-workflow ${at("broken.json")}:7:7: $.nodes.x.next: UNKNOWN_TARGET: "nowhere" is not a node (nor END) (nodes: x)`,
    ]);
    // One error: no "(and 1 more ...)" after it.
    expect(() => loadWorkflowFile(at("twice.json"), actions)).toThrow(/twice\.json is invalid: .*UNKNOWN_TARGET: "nowhere" is not a node \(nor END\) \(nodes: x\)$/);
  });

  it("keeps each file's own problems apart: two files with the same mistake say it each", () => {
    const { check } = files({ "one.json": { ...broken, name: "one" }, "two.json": { ...broken, name: "two" }, "both.json": uses("both", "./one.json", "./two.json") });
    expect(check("both.json").map((line) => line.split(": ").slice(0, 2).join(": "))).toEqual(["both.json:7:7: $.nodes.n0.workflow", "both.json:12:7: $.nodes.n1.workflow"]);
  });
});
