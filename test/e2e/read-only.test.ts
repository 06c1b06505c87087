import { createHash } from "node:crypto";
import { chmodSync, existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import type { RunRecord } from "../../engine/index.js";
import { actionsOf, cliHarness, unwritableCopy, workflowOf } from "../support/cli.js";

describe("commands that only read open the store read-only", () => {
  const cli = cliHarness();

  it("do not create a store that is not there", async () => {
    const missing = join(cli.dir, "typo.db");
    for (const command of ["runs", "interrupts", "events"]) {
      const result = await cli.run([command], { PITWALL_STORE: `sqlite:${missing}` });
      expect(result.stderr).toBe(`pitwall ${command}: store ${missing} does not exist (opened read-only, so none was created)\n`);
      expect(result.code).toBe(1);
    }
    expect(existsSync(missing)).toBe(false);
  });

  it("read a store file their user may not write, which commands that write refuse in one line", async () => {
    const runId = (await cli.run(["start", workflowOf("travel-planner"), "--input", '{"destination":"Porto"}'])).stdout.trim();
    expect((await cli.run(["worker", "--once", "--actions", actionsOf("travel-planner")])).code).toBe(0);
    const copy = await unwritableCopy(cli);
    const sha256 = () => createHash("sha256").update(readFileSync(copy.file)).digest("hex");
    const before = sha256();
    const as = (args: string[]) => cli.run(args, { PITWALL_STORE: `sqlite:${copy.file}` }, { cwd: copy.folder, user: copy.user });
    try {
      const runs = await as(["runs", "--json"]);
      expect(runs.stderr).toBe("");
      expect((JSON.parse(runs.stdout) as RunRecord[]).map((r) => [r.id, r.status])).toEqual([[runId, "paused"]]);
      const show = await as(["show", runId]);
      expect(show.stdout).toMatch(/^status +paused \(interrupt\)$/m);
      expect(JSON.parse((await as(["state", runId, "--json"])).stdout)).toMatchObject({ destination: "Porto" });
      expect((await as(["interrupts"])).stdout).toContain("Book this trip?");

      const cancel = await as(["cancel", runId, "--reason", "no"]);
      expect(cancel.stderr).toBe(`pitwall cancel: store ${copy.file} is read-only: pitwall needs to write to its store (and to create the -wal and -shm files beside it)\n`);
      expect(cancel.code).toBe(1);
      expect(sha256()).toBe(before);

      // A file its user may not even read is said to be so, by writers too (not "read-only").
      chmodSync(copy.file, 0);
      const [runs0, cancel0] = await Promise.all([as(["runs"]), as(["cancel", runId, "--reason", "no"])]);
      expect(runs0.stderr).toMatch(new RegExp(`^pitwall runs: store ${copy.file} cannot be read`));
      expect(cancel0.stderr).toBe(`pitwall cancel: store ${copy.file} cannot be read: permission denied\n`);
      expect([runs0.code, cancel0.code]).toEqual([1, 1]);
    } finally {
      copy.cleanup();
    }
  });
});
