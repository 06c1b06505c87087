import { spawnSync } from "node:child_process";
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { BIN, actionsOf, cliHarness, workflowOf } from "../support/cli.js";

const FIXTURE_NAMES = ["travel-planner", "task-queue", "sensitive-operation", "research-fanout", "long-compute"];

const base = () => ({
  name: "t",
  start: "a",
  state: { n: { type: "number", default: 0 } } as Record<string, unknown>,
  nodes: { a: { action: "tasks.noop", next: "b" }, b: { action: "tasks.noop" } } as Record<string, Record<string, unknown>>,
});

/** Each bad case: the file's text, and the problem line `pitwall validate` must print. */
const BAD: Record<string, { text: string; line: string }> = {
  BAD_JSON: { text: '{\n  "name": "t",\n}', line: "3:1: $: BAD_JSON: line 3, column 1:" },
  DUPLICATE_NODE: {
    text: '{"name":"t","start":"a","nodes":{"a":{"action":"tasks.noop"},"a":{"action":"tasks.noop"}}}',
    line: "1:*: $.nodes.a: DUPLICATE_NODE: ",
  },
  UNKNOWN_TARGET: { text: JSON.stringify({ ...base(), nodes: { a: { action: "tasks.noop", next: "nowhere" } } }), line: "1:*: $.nodes.a.next: UNKNOWN_TARGET: " },
  MISSING_START: { text: JSON.stringify({ ...base(), start: "nope" }), line: "1:*: $.start: MISSING_START: " },
  UNREACHABLE_NODE: { text: JSON.stringify({ ...base(), nodes: { ...base().nodes, c: { action: "tasks.noop" } } }), line: "1:*: $.nodes.c: UNREACHABLE_NODE: " },
  UNKNOWN_ACTION: { text: JSON.stringify({ ...base(), nodes: { a: { action: "tasks.nope" } } }), line: "1:*: $.nodes.a.action: UNKNOWN_ACTION: " },
  BAD_REDUCER: { text: JSON.stringify({ ...base(), state: { n: { type: "string", reducer: "append" } } }), line: "1:*: $.state.n.reducer: BAD_REDUCER: " },
  BAD_STATE_SCHEMA: { text: JSON.stringify({ ...base(), state: { n: { type: "strng" } } }), line: "1:*: $.state.n.type: BAD_STATE_SCHEMA: " },
  WAITFOR_NOT_PREDECESSOR: {
    text: JSON.stringify({ ...base(), nodes: { a: { action: "tasks.noop", next: "b" }, b: { action: "tasks.noop", next: "c" }, c: { action: "tasks.noop", waitFor: ["a"] } } }),
    line: "1:*: $.nodes.c.waitFor[0]: WAITFOR_NOT_PREDECESSOR: ",
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

  it("prints each problem as '<file>:<line>:<column>: <json path>: <CODE>: <message>', a count, and exits 2", async () => {
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
      // Where the line is the file's first (a one-line document), the column is anywhere on it.
      const [at, rest] = [line.slice(0, line.indexOf(" ")), line.slice(line.indexOf(" ") + 1)];
      const lead = `${join(cli.dir, `${code}.json`)}:${at.replace("*:", "")}`;
      expect(r.stdout.split("\n").some((l) => l.startsWith(lead) && l.includes(`: ${rest}`)), `${code}: ${r.stdout}`).toBe(true);
      expect(r.stdout).toMatch(new RegExp(`\\n\\S+${code}\\.json: \\d+ errors?, \\d+ warnings?\\n$`));
    }
  });

  it("reports all problems at once, one per line", async () => {
    const file = join(cli.dir, "many.json");
    writeFileSync(file, JSON.stringify({ ...base(), start: "nope", nodes: { a: { action: "tasks.nope", next: "nowhere" } } }));
    const r = await cli.run(["validate", file, "--actions", actionsOf("task-queue")]);
    expect(r.code).toBe(2);
    expect(r.stdout.trim().split("\n").map((l) => l.split(": ")[2])).toEqual(expect.arrayContaining(["MISSING_START", "UNKNOWN_ACTION", "UNKNOWN_TARGET"]));
    expect(r.stdout).toMatch(/many\.json: 3 errors, 0 warnings\n$/);
  });

  it("warnings alone do not fail validation; --json lists every problem with its severity", async () => {
    const file = join(cli.dir, "warn.json");
    writeFileSync(file, JSON.stringify({ ...base(), nodes: { a: { action: "tasks.noop", routes: { YES: "b" } }, b: { action: "tasks.noop" } } }));
    const r = await cli.run(["validate", file]);
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/^\S+warn\.json:1:\d+: \$\.nodes\.a\.routes: ROUTES_WITHOUT_DEFAULT \(warning\): /);
    expect(r.stdout).toMatch(/warn\.json: valid workflow t \(version \w+, 2 nodes; 1 warning\)\n$/);
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
    expect([result.code, result.stdout]).toEqual([2, `${file}: $: BAD_JSON: the workflow nests too deeply to read (values inside values thousands of levels down)\n${file}: 1 error, 0 warnings\n`]);
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

  it("leads each line with file:line:column, counts, takes several files and standard input, and --strict fails on warnings", async () => {
    const bad = join(cli.dir, "located.json");
    writeFileSync(bad, '{\n  "name": "t",\n  "start": "a",\n  "nodes": {\n    "a": { "action": "tasks.noop", "next": "b" },\n    "b": {\n      "action": "tasks.noop",\n      "routes": { "x": "nowhere" },\n      "default": "END"\n    }\n  }\n}\n');
    const warned = join(cli.dir, "warned.json");
    writeFileSync(warned, JSON.stringify({ ...base(), nodes: { a: { action: "tasks.noop", routes: { YES: "b" } }, b: { action: "tasks.noop" } } }, null, 2));

    const both = await cli.run(["validate", bad, warned]);
    expect(both.code).toBe(2);
    expect(both.stdout.split("\n")).toEqual([
      `${bad}:8:19: $.nodes.b.routes.x: UNKNOWN_TARGET: route x goes to "nowhere", which is not a node (nor END) (nodes: a, b)`,
      `${bad}: 1 error, 0 warnings`,
      `${warned}:13:7: $.nodes.a.routes: ROUTES_WITHOUT_DEFAULT (warning): routes without a \`default\`: a route key that matches none fails the run`,
      expect.stringMatching(/warned\.json: valid workflow t \(version \w+, 2 nodes; 1 warning\)$/),
      "",
    ]);
    const json = (await cli.run(["validate", bad, warned, "--json"])).stdout.trim().split("\n").map((l) => JSON.parse(l) as { file: string; valid: boolean; problems: unknown[] });
    expect(json.map((f) => [f.file, f.valid])).toEqual([[bad, false], [warned, true]]);
    expect(json[0]!.problems).toEqual([expect.objectContaining({ path: "$.nodes.b.routes.x", code: "UNKNOWN_TARGET", line: 8, column: 19 })]);

    const strict = await cli.run(["validate", warned, "--strict"]);
    expect([strict.code, strict.stdout.split("\n").at(-2)]).toEqual([2, `${warned}: 0 errors, 1 warning (--strict fails on warnings)`]);

    const piped = spawnSync(process.execPath, [BIN, "validate", "-"], { input: readFileSync(bad, "utf8"), encoding: "utf8", cwd: cli.dir });
    expect([piped.status, piped.stdout.split("\n")[0]]).toEqual([2, '<stdin>:8:19: $.nodes.b.routes.x: UNKNOWN_TARGET: route x goes to "nowhere", which is not a node (nor END) (nodes: a, b)']);

    // One file of several that cannot be read is said, and the others are still checked.
    const some = await cli.run(["validate", join(cli.dir, "gone.json"), warned]);
    expect([some.code, some.stderr]).toEqual([2, expect.stringMatching(/cannot read workflow \S+gone\.json: no such file\n/)]);
    expect(some.stdout).toMatch(/warned\.json: valid workflow/);
  });

  it("start and graph say a workflow's warnings on stderr, and its first error with file:line:column", async () => {
    const warned = join(cli.dir, "start-warned.json");
    writeFileSync(warned, JSON.stringify({ ...base(), nodes: { a: { action: "tasks.noop", routes: { YES: "b" } }, b: { action: "tasks.noop" } } }, null, 2));
    const warning = `${warned}:13:7: $.nodes.a.routes: ROUTES_WITHOUT_DEFAULT (warning): routes without a \`default\`: a route key that matches none fails the run\n`;
    const [started, drawn] = await Promise.all([cli.run(["start", warned]), cli.run(["graph", warned])]);
    expect([started.code, started.stderr]).toEqual([0, warning]);
    expect([drawn.code, drawn.stderr]).toEqual([0, warning]);

    const broken = join(cli.dir, "start-broken.json");
    writeFileSync(broken, JSON.stringify({ ...base(), nodes: { a: { action: "tasks.noop", next: "nowhere" } } }, null, 2));
    const refused = await cli.run(["start", broken, "--actions", actionsOf("task-queue")]);
    expect([refused.code, refused.stderr]).toEqual([2, `pitwall start: ${broken} is invalid: ${broken}:13:7: $.nodes.a.next: UNKNOWN_TARGET: "nowhere" is not a node (nor END) (nodes: a)\n`]);
  });

  it("names a sub-workflow file as resolved, from the current folder, in the problems of the files it is nested in", async () => {
    mkdirSync(join(cli.dir, "deep"), { recursive: true });
    const sub = (name: string, node: string, workflow: string) => JSON.stringify({ name, start: node, nodes: { [node]: { kind: "subgraph", workflow, next: "END" } } }, null, 2);
    writeFileSync(join(cli.dir, "outer.json"), sub("outer", "k", "./deep/kid.json"));
    writeFileSync(join(cli.dir, "deep", "kid.json"), sub("kid", "g", "./child.json"));
    const r = await cli.run(["validate", "outer.json"]);
    expect([r.code, r.stdout]).toEqual([
      2,
      "outer.json:7:7: $.nodes.k.workflow: BAD_SUBGRAPH: in sub-workflow deep/kid.json:7:7: $.nodes.g.workflow: BAD_SUBGRAPH: cannot read sub-workflow deep/child.json: no such file\nouter.json: 1 error, 0 warnings\n",
    ]);
  });

  it("shows a sub-workflow file's warnings, located in that file, and the parent stays valid", async () => {
    mkdirSync(join(cli.dir, "deep"), { recursive: true });
    writeFileSync(join(cli.dir, "warned-parent.json"), JSON.stringify({ name: "warned-parent", start: "k", nodes: { k: { kind: "subgraph", workflow: "./deep/warned-child.json", next: "END" } } }, null, 2));
    writeFileSync(join(cli.dir, "deep", "warned-child.json"), JSON.stringify({ ...base(), name: "warned-child", nodes: { a: { action: "tasks.noop", routes: { YES: "b" } }, b: { action: "tasks.noop" } } }, null, 2));
    const r = await cli.run(["validate", "warned-parent.json"]);
    expect([r.code, r.stdout.split("\n")[0]]).toEqual([
      0,
      "warned-parent.json:7:7: $.nodes.k.workflow: ROUTES_WITHOUT_DEFAULT (warning): in sub-workflow deep/warned-child.json:13:7: $.nodes.a.routes: ROUTES_WITHOUT_DEFAULT (warning): routes without a `default`: a route key that matches none fails the run",
    ]);
    expect(r.stdout).toMatch(/warned-parent\.json: valid workflow warned-parent \(version \w+, 1 node; 1 warning\)\n$/);
  });

  it("warns of a wait whose `until` is already past", async () => {
    writeFileSync(join(cli.dir, "past.json"), JSON.stringify({ ...base(), nodes: { a: { kind: "wait", until: "2020-01-01T09:00:00Z", next: "END" } } }, null, 2));
    const r = await cli.run(["validate", "past.json", "--strict"]);
    expect([r.code, r.stdout.split("\n")[0]]).toEqual([2, "past.json:13:7: $.nodes.a.until: WAIT_IN_PAST (warning): `until` 2020-01-01T09:00:00Z is in the past: the wait ends at once"]);
  });

  it("run and start with actions name a workflow's first error, and the validate command that lists the rest", async () => {
    const file = join(cli.dir, "three-errors.json");
    writeFileSync(file, JSON.stringify({ ...base(), start: "nope", nodes: { a: { action: "tasks.nope", next: "nowhere" } } }, null, 2));
    const [ran, started] = await Promise.all(["run", "start"].map((command) => cli.run([command, file, "--actions", actionsOf("task-queue")])));
    const first = `${file}:12:7: $.nodes.a.action: UNKNOWN_ACTION: action "tasks.nope" is not exported by the actions module (did you mean "tasks.noop"?)`;
    expect([ran!.code, ran!.stderr]).toEqual([2, `pitwall run: ${file} is invalid: ${first} (and 2 more; pitwall validate ${file} lists them)\n`]);
    expect([started!.code, started!.stderr]).toEqual([2, `pitwall start: ${file} is invalid: ${first} (and 2 more; pitwall validate ${file} lists them)\n`]);
  });
});
