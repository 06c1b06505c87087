import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { cliHarness } from "../support/cli.js";

const CHILD = { name: "child", state: { n: { type: "integer", default: 0 }, level: { enum: [1, 2], default: 1 } }, start: "x", nodes: { x: { kind: "wait", seconds: 0, next: "END" } } };
const PARENT = {
  name: "parent",
  state: { n: { type: "integer", default: 0 }, ok: { type: "boolean", default: true } },
  start: "check",
  nodes: {
    check: { kind: "wait", seconds: 0, routeOn: "ok", routes: { true: "sub", false: "END" } },
    sub: { kind: "subgraph", workflow: "./child.json", next: "END" },
  },
};

describe("pitwall graph in other formats, and the stored versions of a workflow", () => {
  const cli = cliHarness();
  const files = () => {
    writeFileSync(join(cli.dir, "child.json"), JSON.stringify(CHILD));
    writeFileSync(join(cli.dir, "parent.json"), JSON.stringify(PARENT));
  };

  it("draws a workflow as Mermaid and as DOT, text staying the default", async () => {
    files();
    const [mermaid, dot, text, bad] = await Promise.all([
      cli.run(["graph", "parent.json", "--format", "mermaid"]),
      cli.run(["graph", "parent.json", "--format", "dot"]),
      cli.run(["graph", "parent.json"]),
      cli.run(["graph", "parent.json", "--format", "svg"]),
    ]);
    expect(mermaid.stdout.split("\n")).toEqual(
      expect.arrayContaining(["flowchart TD", "  __start([start]) --> n_check", '  n_check -->|"true"| n_sub', '  n_check -->|"false"| __end', '  n_sub[["sub<br/>sub-workflow child"]]', "  n_sub --> __end"]),
    );
    expect(dot.stdout).toMatch(/^digraph "parent" \{\n/);
    expect(dot.stdout).toContain('  "check" -> "sub" [label="true"];\n');
    expect(dot.stdout).toContain('  "sub" [label="sub\\nsub-workflow child", shape=box3d];\n');
    expect(text.stdout).toMatch(/^parent \(version \w+\)\n {2}start → check\n/);
    expect([bad.code, bad.stderr]).toEqual([2, "pitwall graph: --format svg: give text, mermaid or dot\n"]);
  });

  it("prints a run's workflow as JSON with its sub-workflows inline, which validates again with the same version", async () => {
    files();
    const { runId } = await cli.json<{ runId: string }>(["start", "parent.json"]);
    const drawn = await cli.json<{ version: string; definition: { nodes: { sub: { workflow: unknown } } } }>(["graph", runId]);
    expect(drawn.definition.nodes.sub.workflow).toMatchObject({ name: "child", start: "x" });
    writeFileSync(join(cli.dir, "again.json"), JSON.stringify(drawn.definition));
    const again = await cli.json<{ valid: boolean; version: string }>(["validate", "again.json"]);
    expect(again).toMatchObject({ valid: true, version: drawn.version });
  });

  it("lists the stored versions of workflows with their runs, and draws one by name or version", async () => {
    files();
    const own = ["--store", `sqlite:${join(cli.dir, "versions.db")}`];
    const { runId } = await cli.json<{ runId: string }>(["start", "parent.json", ...own]);
    writeFileSync(join(cli.dir, "parent.json"), JSON.stringify({ ...PARENT, description: "edited" }));
    await cli.json(["start", "parent.json", ...own]);
    await cli.json(["start", "parent.json", ...own]);
    const first = (await cli.json<{ version: string }>(["show", runId, ...own])).version;
    const listed = await cli.json<{ name: string; version: string; runs: number; unfinished: number }[]>(["workflows", "parent", ...own]);
    expect(listed).toEqual([
      { name: "parent", version: expect.not.stringMatching(first), createdAt: expect.any(Number), runs: 2, unfinished: 2 },
      { name: "parent", version: first, createdAt: expect.any(Number), runs: 1, unfinished: 1 },
    ]);
    const table = await cli.run(["workflows", ...own]);
    expect(table.stdout.split("\n")[0]).toMatch(/^WORKFLOW\s+VERSION\s+CREATED\s+RUNS\s+UNFINISHED$/);
    expect(table.stdout).toMatch(/\nchild\s+\w{16}\s+\S+ ago\s+0\s+0\n/);

    expect((await cli.run(["graph", "parent", ...own])).stdout).toMatch(/^parent \(version \w+\)\n {2}edited\n/);
    expect((await cli.run(["graph", first.slice(0, 8), ...own])).stdout).toMatch(new RegExp(`^parent \\(version ${first}\\)\\n {2}start`));
    // A stored name mistyped: the nearest one.
    const typo = await cli.run(["graph", "parnet", ...own]);
    expect([typo.code, typo.stderr]).toEqual([2, 'pitwall graph: no file, run or stored workflow is named parnet (did you mean "parent"?)\n']);
  });

  it("says of a name that is no file, run or stored workflow what it is not, and the file it may mean", async () => {
    files();
    const fresh = join(cli.dir, "no-store");
    const [noStore, unknown] = await Promise.all([
      cli.run(["graph", "parent", "--store", `sqlite:${join(fresh, "pitwall.db")}`]),
      cli.run(["graph", "nothing-here"]),
    ]);
    expect([noStore.code, noStore.stderr]).toEqual([
      2,
      expect.stringMatching(/^pitwall graph: parent is not a file here \(parent\.json is: give the name with \.json\), and there is no store to look it up in as a run or stored workflow: store \S+ does not exist/),
    ]);
    expect([unknown.code, unknown.stderr]).toEqual([2, "pitwall graph: no file, run or stored workflow is named nothing-here (to draw a workflow file, give its path)\n"]);
  });
});
