import { join } from "node:path";
import { describe, expect, it } from "vitest";
import type { RunRecord } from "../../engine/index.js";
import { actionsOf, cliHarness, workflowOf } from "../support/cli.js";

describe("pitwall backup", () => {
  const cli = cliHarness();

  it("writes a copy that pitwall reads like the store; refuses an existing file and a store that is not SQLite (exit 2)", async () => {
    const { runId } = await cli.json<{ runId: string }>(["start", workflowOf("travel-planner"), "--input", '{"destination":"Porto","nights":3}']);
    expect((await cli.run(["worker", "--once", "--actions", actionsOf("travel-planner")])).code).toBe(0);

    const done = await cli.run(["backup", "copy.db"]);
    expect(done).toMatchObject({ code: 0, stderr: "" });
    expect(done.stdout).toMatch(/^backed up \S+pitwall\.db to copy\.db: [\d.]+ kB, 1 run\n$/);
    const original = await cli.json<RunRecord[]>(["runs"]);
    const copied = await cli.json<RunRecord[]>(["runs", "--store", `sqlite:${join(cli.dir, "copy.db")}`]);
    expect(copied).toEqual(original);
    expect(copied.map((r) => [r.id, r.status])).toEqual([[runId, "paused"]]);
    const state = (args: string[]) => cli.json(["state", runId, ...args]);
    expect(await state(["--store", `sqlite:${join(cli.dir, "copy.db")}`])).toEqual(await state([]));

    const again = await cli.run(["backup", "copy.db", "--json"]);
    expect(again).toMatchObject({ code: 2, stdout: "" });
    expect(JSON.parse(again.stderr)).toEqual({ error: { command: "backup", code: "VALIDATION", message: "backup copy.db already exists: name a new file (nothing was written)", exitCode: 2 } });
    const memory = await cli.run(["backup", "other.db", "--store", "memory:"]);
    expect(memory).toMatchObject({ code: 2, stderr: "pitwall backup: backup copies SQLite stores, and memory: is not one\n" });
    const json = await cli.json<{ file: string; bytes: number; runs: number }>(["backup", "second.db"]);
    expect(json).toEqual({ file: "second.db", bytes: expect.any(Number), runs: 1 });
  });
});
