import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import type { TaskRecord } from "../../engine/index.js";
import { cliHarness } from "../support/cli.js";
import { until } from "../support/engine.js";

/**
 * A node that takes `ms` and notes each start and how it ended in `<dir>/<name>.log`; with
 * `ignoreSignal` it goes on when aborted (a node that does not look at its signal).
 */
function slowActions(dir: string, name: string, ms: number, ignoreSignal = false): string {
  const file = join(dir, `${name}.mjs`);
  const log = JSON.stringify(join(dir, `${name}.log`));
  writeFileSync(
    file,
    `import { appendFileSync } from "node:fs";
export default {
  slow: async (_state, ctx) => {
    appendFileSync(${log}, "start\\n");
    await new Promise((resolve, reject) => {
      const timer = setTimeout(resolve, ${ms});
      if (!${ignoreSignal}) ctx.signal.addEventListener("abort", () => (clearTimeout(timer), reject(ctx.signal.reason)));
    });
    appendFileSync(${log}, ctx.signal.aborted ? "aborted\\n" : "finished\\n");
    return { done: true };
  },
  after: () => ({ after: true }),
};
`,
  );
  return file;
}

function workflow(dir: string, name: string): string {
  const file = join(dir, `${name}.json`);
  const state = { done: { type: "boolean", default: false }, after: { type: "boolean", default: false } };
  writeFileSync(file, JSON.stringify({ name, state, start: "slow", nodes: { slow: { action: "slow", next: "after" }, after: { action: "after" } } }));
  return file;
}

const lines = (file: string) => (existsSync(file) ? readFileSync(file, "utf8").trim().split("\n") : []);

describe("a worker told to stop drains its running nodes", () => {
  const cli = cliHarness();

  it("on SIGTERM it claims nothing more, lets the running node finish and commit, releases the run, and another worker goes on from there", async () => {
    const actions = slowActions(cli.dir, "drain", 1_500);
    const { runId } = await cli.json<{ runId: string }>(["start", workflow(cli.dir, "drain")]);
    const worker = cli.spawn(["worker", "--actions", actions, "--id", "drainer"]);
    await until(() => lines(join(cli.dir, "drain.log")).length > 0, 20_000, "the node to start");
    worker.child.kill("SIGTERM");
    await until(() => worker.stderr.includes("draining:"), 10_000, "the drain to start");
    const queued = await cli.json<{ runId: string }>(["start", workflow(cli.dir, "drain")]);
    const stopped = await worker.exited;
    expect(stopped.code).toBe(0);
    expect(stopped.stderr).toMatch(/^\S+Z INFO  draining: 1 node running \(in 1 run\), up to 20 s; signal again to stop now$/m);
    expect(stopped.stderr).toMatch(/drained: the running nodes finished; 1 run released$/m);
    expect(lines(join(cli.dir, "drain.log"))).toEqual(["start", "finished"]);
    const shown = await cli.json<{ status: string; tasks: TaskRecord[] }>(["show", runId]);
    expect(shown.status).toBe("queued");
    expect(shown.tasks.map((t) => [t.node, t.status])).toEqual([["slow", "succeeded"]]);
    // The run started during the drain was not claimed.
    expect((await cli.json<{ status: string }>(["show", queued.runId])).status).toBe("queued");

    const next = await cli.run(["worker", "--once", "--actions", actions]);
    expect(next.code).toBe(0);
    expect((await cli.json<{ status: string; after: boolean }>(["state", runId])).after).toBe(true);
    // The node that finished during the drain did not run again; the other run's did, once.
    expect(lines(join(cli.dir, "drain.log"))).toEqual(["start", "finished", "start", "finished"]);
  });

  it("aborts what is still running when the drain time is up, and says which node ignored its signal and was abandoned", async () => {
    const actions = slowActions(cli.dir, "stubborn", 60_000, true);
    const { runId } = await cli.json<{ runId: string }>(["start", workflow(cli.dir, "stubborn")]);
    const worker = cli.spawn(["worker", "--actions", actions, "--drain-timeout", "0.5", "--kill-grace", "0.5", "--json"]);
    await until(() => lines(join(cli.dir, "stubborn.log")).length > 0, 20_000, "the node to start");
    const signaled = Date.now();
    worker.child.kill("SIGTERM");
    const stopped = await worker.exited;
    expect(stopped.code).toBe(0);
    expect(Date.now() - signaled).toBeLessThan(10_000);
    const logged = stopped.stdout.trim().split("\n").map((l) => JSON.parse(l) as Record<string, unknown>);
    for (const line of logged) expect(line).toMatchObject({ time: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/), level: expect.any(String), worker: expect.any(String), kind: expect.any(String) });
    expect(logged.map((l) => l.kind)).toEqual(expect.arrayContaining(["started", "stopping", "draining", "drained", "abandoned", "stopped"]));
    expect(logged.find((l) => l.kind === "drained")).toMatchObject({ level: "warn", message: `drain time is up: aborting 1 node still running (slow of run ${runId}); a result that comes back within the 0.5 s grace is kept` });
    expect(logged.find((l) => l.kind === "abandoned")).toMatchObject({
      level: "warn",
      runId,
      node: "slow",
      message: expect.stringMatching(new RegExp(`^run ${runId}: node slow \\(task \\S+\\) ignored its abort signal \\(the worker stopping\\) and was abandoned after the 0.5 s grace`)),
    });
    // Released, its node to run again on another worker.
    const shown = await cli.json<{ status: string; tasks: TaskRecord[] }>(["show", runId]);
    expect([shown.status, shown.tasks[0]?.status]).toEqual(["queued", "pending"]);
  });

  it("a second signal during the drain exits at once (130)", async () => {
    const actions = slowActions(cli.dir, "impatient", 60_000, true);
    await cli.json<{ runId: string }>(["start", workflow(cli.dir, "impatient")]);
    const worker = cli.spawn(["worker", "--actions", actions]);
    await until(() => lines(join(cli.dir, "impatient.log")).length > 0, 20_000, "the node to start");
    worker.child.kill("SIGTERM");
    await until(() => worker.stderr.includes("draining:"), 10_000, "the drain to start");
    worker.child.kill("SIGTERM");
    const stopped = await worker.exited;
    expect(stopped.code).toBe(130);
    expect(stopped.stderr).toContain("pitwall worker: stopping at once; the runs it held wait for their leases to run out before another worker takes them");
  });
});
