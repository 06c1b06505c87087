import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import type { TaskRecord } from "../../engine/index.js";
import { cliHarness } from "../support/cli.js";
import { until } from "../support/engine.js";

describe("cancel of a run whose live worker is stopping a node that ignores its signal", () => {
  const cli = cliHarness();

  it("says it waits for the worker (or that it is stopping the node), not that the worker may be gone", async () => {
    const actions = join(cli.dir, "stubborn.mjs");
    const file = join(cli.dir, "stubborn.json");
    writeFileSync(actions, "export default { hang: () => new Promise((resolve) => setTimeout(resolve, 60_000)) };\n");
    writeFileSync(file, JSON.stringify({ name: "stubborn", state: {}, start: "h", nodes: { h: { action: "hang" } } }));
    cli.spawn(["worker", "--actions", actions, "--id", "wA"]);
    const { runId } = await cli.json<{ runId: string }>(["start", file]);
    await until(async () => (await cli.json<{ tasks: TaskRecord[] }>(["show", runId])).tasks.some((t) => t.status === "running"), 20_000, "the node to run");

    const canceled = await cli.run(["cancel", runId, "--reason", "enough"]);
    expect([canceled.code, canceled.stdout]).toEqual([0, `run ${runId} canceled\n`]);
    const notes = canceled.stderr.trim().split("\n");
    expect(notes.length).toBeGreaterThan(0);
    for (const note of notes) {
      expect(note).toMatch(new RegExp(`^run ${runId}( is held by wA: waiting for it to take the command|: wA is stopping h \\(a node that ignores its signal is abandoned after the grace period\\))$`));
    }
  });
});
