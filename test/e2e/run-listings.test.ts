import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import type { TaskRecord } from "../../engine/index.js";
import { cliHarness } from "../support/cli.js";
import { until } from "../support/engine.js";

describe("pitwall show on a run part-way through a parallel step", () => {
  const cli = cliHarness();

  it("says which of the step's nodes are still running and which are done, and what the done ones wrote, which the state has once the step ends", async () => {
    const flag = join(cli.dir, "release-slow");
    const file = join(cli.dir, "parallel.json");
    const actions = join(cli.dir, "parallel.mjs");
    writeFileSync(
      file,
      JSON.stringify({
        name: "parallel",
        state: { found: { type: "string", default: "" }, apiToken: { type: "string", default: "" } },
        start: "split",
        nodes: {
          split: { action: "quick", next: ["fast", "slow"] },
          fast: { action: "find", next: "join" },
          slow: { action: "slow", next: "join" },
          join: { action: "quick", waitFor: ["fast", "slow"], next: "END" },
        },
      }),
    );
    writeFileSync(
      actions,
      `import { existsSync } from "node:fs";
export default {
  quick: () => ({}),
  find: () => ({ found: "a room at the Ritz", apiToken: "sk-live-123" }),
  slow: async () => { while (!existsSync(${JSON.stringify(flag)})) await new Promise((r) => setTimeout(r, 20)); return {}; },
};\n`,
    );
    const { runId } = await cli.json<{ runId: string }>(["start", file]);
    const worker = cli.spawn(["worker", "--actions", actions]);
    await until(async () => {
      const { tasks } = await cli.json<{ tasks: TaskRecord[] }>(["show", runId]);
      return tasks.some((t) => t.node === "fast" && t.status === "succeeded");
    }, 20_000, "fast to finish");
    const shown = await cli.run(["show", runId]);
    expect(shown.stdout).toMatch(/^step +2 · checkpoint \d+ · \d+ events · running slow \(done: fast\)$/m);
    const held = shown.stdout.slice(shown.stdout.indexOf("written by finished nodes of step 2, into the state when the step ends\n"));
    expect(held).toMatch(/^NODE +KEY +VALUE\nfast +found +"a room at the Ritz"\nfast +apiToken +"\[redacted\]"\n/m);
    expect(await cli.json(["state", runId])).toEqual({ found: "", apiToken: "" });
    writeFileSync(flag, "");
    await until(async () => (await cli.json<{ status: string }>(["show", runId])).status === "succeeded", 20_000, "the run to end");
    expect((await cli.run(["show", runId])).stdout).not.toContain("written by finished nodes");
    expect(await cli.json(["state", runId])).toEqual({ found: "a room at the Ritz", apiToken: "sk-live-123" });
    worker.child.kill("SIGINT");
    await worker.exited;
  });
});

describe("a workflow file edited while runs of it are unfinished", () => {
  const cli = cliHarness();

  it("start says those runs keep their version, and runs lists each run's version", async () => {
    const file = join(cli.dir, "evolving.json");
    const write = (next: string) =>
      writeFileSync(file, JSON.stringify({ name: "evolving", start: "a", nodes: { a: { action: "quick", next }, ...(next === "b" ? { b: { action: "quick", next: "END" } } : {}) } }));
    write("END");
    const first = await cli.run(["start", file]);
    expect(first.stderr).toBe("");
    write("b");
    const second = await cli.run(["start", file]);
    expect(second.stderr).toMatch(/^1 unfinished run of evolving is on another version \(\w{8}\) and keeps it; this run is on \w{8} \(pitwall upgrade RUN --workflow FILE moves a run onto it in place, pitwall batch upgrade FILE many\)\n$/);
    const listed = await cli.run(["runs"]);
    const versions = listed.stdout
      .trim()
      .split("\n")
      .slice(1)
      .map((line) => line.split(/\s+/)[2]);
    expect(new Set(versions).size).toBe(2);
    expect(listed.stdout.split("\n")[0]).toMatch(/^RUN +WORKFLOW +VERSION +STATUS/);
  });
});
