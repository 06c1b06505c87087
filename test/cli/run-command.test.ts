import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { cliHarness } from "../support/cli.js";

const ACTIONS = `export default {
  add: (s) => ({ n: s.n + 1 }),
  boom: () => { throw new Error("no luck"); },
};
`;
const COUNT = { name: "count", state: { n: { type: "integer", default: 0 } }, start: "a", nodes: { a: { action: "add", next: "b" }, b: { action: "add", next: "END" } } };
const ASK = {
  name: "ask",
  state: { n: { type: "integer", default: 0 } },
  start: "a",
  nodes: { a: { action: "add", next: "ok" }, ok: { kind: "approval", question: "Go on?", decisions: ["approve", "reject"], routes: { approve: "b", reject: "END" } }, b: { action: "add", next: "END" } },
};
const FAILS = { name: "fails", state: { n: { type: "integer", default: 0 } }, start: "a", nodes: { a: { action: "boom", retry: { maxAttempts: 1, onExhausted: "fail" }, next: "END" } } };

describe("pitwall run: a workflow run in one process, and memory: stores", () => {
  const cli = cliHarness();
  const files = () => {
    writeFileSync(join(cli.dir, "actions.mjs"), ACTIONS);
    for (const [name, doc] of Object.entries({ count: COUNT, ask: ASK, fails: FAILS })) writeFileSync(join(cli.dir, `${name}.json`), JSON.stringify(doc));
  };

  it("runs a workflow to its end on a memory: store and prints the state it reached", async () => {
    files();
    const r = await cli.run(["run", "count.json", "--actions", "actions.mjs", "--input", '{"n": 40}', "--store", "memory:"]);
    expect([r.code, JSON.parse(r.stdout)]).toEqual([0, { n: 42 }]);
    expect(r.stderr).toMatch(/^run (run-\w+)\nrun \1 succeeded\n$/);
    const json = await cli.json<{ status: string; state: unknown }>(["run", "count.json", "--actions", "actions.mjs", "--store", "memory:"]);
    expect(json).toMatchObject({ status: "succeeded", state: { n: 2 } });
  });

  it("stops at the first pause on a file store, where the run waits to be answered; a failed run exits 1", async () => {
    files();
    const paused = await cli.json<{ runId: string; status: string; reason: string; state: unknown }>(["run", "ask.json", "--actions", "actions.mjs"]);
    expect(paused).toMatchObject({ status: "paused", reason: "interrupt", state: { n: 1 } });
    const [interrupt] = await cli.json<{ id: string }[]>(["interrupts", "--run", paused.runId]);
    await cli.json(["resolve", interrupt!.id, "--approve"]);
    const worker = await cli.run(["worker", "--once", "--actions", "actions.mjs"]);
    expect(worker.stdout).toContain(`run ${paused.runId} succeeded`);
    expect(await cli.json(["state", paused.runId])).toEqual({ n: 2 });

    const failed = await cli.run(["run", "fails.json", "--actions", "actions.mjs"]);
    expect([failed.code, failed.stderr]).toEqual([1, expect.stringMatching(/run run-\w+ failed: .*no luck/)]);
  });

  it("executes only its own workflow's runs, leaving others in the store to their workers", async () => {
    files();
    const own = ["--store", `sqlite:${join(cli.dir, "shared.db")}`];
    const { runId: other } = await cli.json<{ runId: string }>(["start", "ask.json", ...own]);
    expect((await cli.run(["run", "count.json", "--actions", "actions.mjs", ...own])).code).toBe(0);
    expect(await cli.json(["show", other, ...own])).toMatchObject({ status: "queued" });

    // --workflow, like --status, is repeated or comma-separated: the runs of any workflow named.
    await cli.json(["start", "fails.json", ...own]);
    const names = async (args: string[]) => (await cli.json<{ workflow: string }[]>(["runs", ...args, ...own])).map((r) => r.workflow).sort();
    expect(await names(["--workflow", "ask", "--workflow", "count"])).toEqual(["ask", "count"]);
    expect(await names(["--workflow", "ask,count"])).toEqual(["ask", "count"]);
    expect(await names(["--workflow", "fails"])).toEqual(["fails"]);
  });

  it("refuses memory: for the commands it cannot work for, saying why", async () => {
    files();
    const [start, runs, worker] = await Promise.all([
      cli.run(["start", "count.json", "--store", "memory:"]),
      cli.run(["runs", "--store", "memory:"]),
      cli.run(["worker", "--once", "--store", "memory:"]),
    ]);
    expect([start.code, start.stdout, start.stderr]).toEqual([
      2,
      "",
      "pitwall start: --store memory: lives only as long as the process that opens it, so what pitwall start writes there would be gone when it exits, unseen by any other pitwall process; use a SQLite file (sqlite:./pitwall.db, the default) or Redis (redis://host:6379/0), or pitwall run FILE to run a workflow to its end in one process\n",
    ]);
    expect([runs.code, runs.stderr]).toEqual([2, expect.stringContaining("pitwall runs: --store memory: lives only as long as the process that opens it, so pitwall runs would find it empty")]);
    expect(worker.code).toBe(2);
  });
});
