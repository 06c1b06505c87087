import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { actionsOf, cliHarness, workflowOf } from "../support/cli.js";

const FIXTURE_NAMES = ["travel-planner", "task-queue", "sensitive-operation", "research-fanout", "long-compute"];

const base = () => ({
  name: "t",
  start: "a",
  state: { n: { type: "number", default: 0 } } as Record<string, unknown>,
  nodes: { a: { action: "tasks.noop", next: "b" }, b: { action: "tasks.noop" } } as Record<string, Record<string, unknown>>,
});

/** Each bad case: the file's text, and the problem line `pitwall validate` must print. */
const BAD: Record<string, { text: string; line: string }> = {
  BAD_JSON: { text: '{\n  "name": "t",\n}', line: "$: BAD_JSON: line 3, column 1:" },
  DUPLICATE_NODE: {
    text: '{"name":"t","start":"a","nodes":{"a":{"action":"tasks.noop"},"a":{"action":"tasks.noop"}}}',
    line: "$.nodes.a: DUPLICATE_NODE: ",
  },
  UNKNOWN_TARGET: { text: JSON.stringify({ ...base(), nodes: { a: { action: "tasks.noop", next: "nowhere" } } }), line: "$.nodes.a.next: UNKNOWN_TARGET: " },
  MISSING_START: { text: JSON.stringify({ ...base(), start: "nope" }), line: "$.start: MISSING_START: " },
  UNREACHABLE_NODE: { text: JSON.stringify({ ...base(), nodes: { ...base().nodes, c: { action: "tasks.noop" } } }), line: "$.nodes.c: UNREACHABLE_NODE: " },
  UNKNOWN_ACTION: { text: JSON.stringify({ ...base(), nodes: { a: { action: "tasks.nope" } } }), line: "$.nodes.a.action: UNKNOWN_ACTION: " },
  BAD_REDUCER: { text: JSON.stringify({ ...base(), state: { n: { type: "string", reducer: "append" } } }), line: "$.state.n.reducer: BAD_REDUCER: " },
  BAD_STATE_SCHEMA: { text: JSON.stringify({ ...base(), state: { n: { type: "strng" } } }), line: "$.state.n.type: BAD_STATE_SCHEMA: " },
  WAITFOR_NOT_PREDECESSOR: {
    text: JSON.stringify({ ...base(), nodes: { a: { action: "tasks.noop", next: "b" }, b: { action: "tasks.noop", next: "c" }, c: { action: "tasks.noop", waitFor: ["a"] } } }),
    line: "$.nodes.c.waitFor[0]: WAITFOR_NOT_PREDECESSOR: ",
  },
};

describe("pitwall validate", () => {
  const cli = cliHarness();

  it("accepts every example workflow with its actions module (exit 0, the verdict on stdout)", async () => {
    const results = await Promise.all(FIXTURE_NAMES.map((name) => cli.run(["validate", workflowOf(name), "--actions", actionsOf(name)])));
    for (const [i, r] of results.entries()) {
      // The verdict is the result, on stdout (`validate f.json > report` holds it), one line.
      expect({ name: FIXTURE_NAMES[i], code: r.code, stderr: r.stderr }).toEqual({ name: FIXTURE_NAMES[i], code: 0, stderr: "" });
      expect(r.stdout).toMatch(/^\S+: valid workflow \S+ \(version \w+, \d+ nodes?\)\n$/);
    }
  });

  it("prints each problem as '<json path>: <CODE>: <message>' and exits 2", async () => {
    const cases = Object.entries(BAD);
    const results = await Promise.all(
      cases.map(([code, { text }]) => {
        const file = join(cli.dir, `${code}.json`);
        writeFileSync(file, text);
        return cli.run(["validate", file, "--actions", actionsOf("task-queue")]);
      }),
    );
    for (const [i, r] of results.entries()) {
      const [code, { line }] = cases[i]!;
      expect({ code, exit: r.code }).toEqual({ code, exit: 2 });
      expect(r.stdout.split("\n").some((l) => l.startsWith(line)), `${code}: ${r.stdout}`).toBe(true);
    }
  });

  it("reports all problems at once, one per line", async () => {
    const file = join(cli.dir, "many.json");
    writeFileSync(file, JSON.stringify({ ...base(), start: "nope", nodes: { a: { action: "tasks.nope", next: "nowhere" } } }));
    const r = await cli.run(["validate", file, "--actions", actionsOf("task-queue")]);
    expect(r.code).toBe(2);
    expect(r.stdout.trim().split("\n").map((l) => l.split(": ")[1])).toEqual(expect.arrayContaining(["MISSING_START", "UNKNOWN_ACTION", "UNKNOWN_TARGET"]));
  });

  it("warnings alone do not fail validation; --json lists every problem with its severity", async () => {
    const file = join(cli.dir, "warn.json");
    writeFileSync(file, JSON.stringify({ ...base(), nodes: { a: { action: "tasks.noop", routes: { YES: "b" } }, b: { action: "tasks.noop" } } }));
    const r = await cli.run(["validate", file]);
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/^\$\.nodes\.a\.routes: ROUTES_WITHOUT_DEFAULT \(warning\): /);
    const json = await cli.json<{ valid: boolean; version: string; problems: { path: string; code: string; severity: string }[] }>(["validate", file]);
    expect(json).toMatchObject({ valid: true, version: expect.any(String), problems: [{ path: "$.nodes.a.routes", code: "ROUTES_WITHOUT_DEFAULT", severity: "warning" }] });
  });

  it("a missing file or actions module is one line on stderr and exit 2", async () => {
    const [noFile, noModule] = await Promise.all([
      cli.run(["validate", join(cli.dir, "absent.json")]),
      cli.run(["validate", workflowOf("task-queue"), "--actions", join(cli.dir, "absent.ts")]),
    ]);
    expect(noFile.code).toBe(2);
    expect(noFile.stderr).toMatch(/^pitwall validate: cannot read workflow .*absent\.json: no such file\n$/);
    expect(noModule.code).toBe(2);
    expect(noModule.stderr).toMatch(/^pitwall validate: cannot load actions module .*absent\.ts: file not found\n$/);

    // A module that is there, but imports what is not: said as such (a package not installed, a file of its own).
    writeFileSync(join(cli.dir, "needs-package.mjs"), 'import x from "not-installed-pkg";\nexport default { a: () => x };\n');
    writeFileSync(join(cli.dir, "needs-file.mjs"), 'import { y } from "./helpers-gone.mjs";\nexport default { a: () => y };\n');
    const [noPackage, noHelper] = await Promise.all(
      ["needs-package.mjs", "needs-file.mjs"].map((m) => cli.run(["validate", workflowOf("task-queue"), "--actions", join(cli.dir, m)])),
    );
    expect([noPackage!.code, noPackage!.stderr]).toEqual([2, expect.stringMatching(/needs-package\.mjs: it imports package "not-installed-pkg", which is not installed where the module can find it/)]);
    expect([noHelper!.code, noHelper!.stderr]).toEqual([2, expect.stringMatching(/needs-file\.mjs: it imports \S*helpers-gone\.mjs, which does not exist\n$/)]);
  });

  it("a workflow nested thousands of levels deep is one problem, not a stack overflow", async () => {
    let schema = '{"type":"object"}';
    for (let i = 0; i < 5000; i++) schema = `{"type":"object","properties":{"x":${schema}}}`;
    const file = join(cli.dir, "deep.json");
    writeFileSync(file, `{"name":"deep","start":"a","state":{"k":${schema}},"nodes":{"a":{"action":"x"}}}`);
    const result = await cli.run(["validate", file]);
    expect([result.code, result.stdout]).toEqual([2, "$: BAD_JSON: the workflow nests too deeply to read (values inside values thousands of levels down)\n"]);
  });

  it("an actions module with a syntax error says so in one line, and where when it can", async () => {
    const ts = join(cli.dir, "broken.ts");
    const js = join(cli.dir, "broken.mjs");
    writeFileSync(ts, "export default {\n  a: () => ({ x: 1 }),\n  b: ( => 2,\n};\n");
    writeFileSync(js, "export default {\n  a: () => 1,\n  }\n};\n");
    const [fromTs, fromJs] = await Promise.all([
      cli.run(["validate", workflowOf("task-queue"), "--actions", ts]),
      cli.run(["validate", workflowOf("task-queue"), "--actions", js]),
    ]);
    expect([fromTs.code, fromTs.stderr]).toEqual([2, `pitwall validate: cannot load actions module ${ts}: syntax error at ${ts}:3:7: Unexpected "=>"\n`]);
    expect([fromJs.code, fromJs.stderr]).toEqual([2, `pitwall validate: cannot load actions module ${js}: syntax error: Unexpected token '}' (node --check ${js} shows where)\n`]);
  });
});
