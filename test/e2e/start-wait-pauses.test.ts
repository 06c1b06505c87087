import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import type { InterruptRecord, TaskRecord } from "../../engine/index.js";
import { cliHarness } from "../support/cli.js";
import { until } from "../support/engine.js";

/** A node that works until its signal aborts it. */
const ACTIONS = `export default {
  work: (_s, ctx) => new Promise((_resolve, reject) => ctx.signal.addEventListener("abort", () => reject(ctx.signal.reason), { once: true })),
};
`;

const workflowWith = (name: string, atMostOnce: boolean) => ({
  name,
  state: { done: { type: "boolean", default: false } },
  start: "h",
  nodes: { h: { action: "work", ...(atMostOnce ? { atMostOnce: true } : {}) } },
});

describe("start --wait: a pause on a failure exits 1, a question for a person 0", () => {
  const cli = cliHarness();

  it("exits 1 when an at-most-once node's worker shut down while it ran (recovery interrupt), and when an operator killed the node", async () => {
    const actions = join(cli.dir, "work.mjs");
    writeFileSync(actions, ACTIONS);
    const files = ["charge", "plain"].map((name) => {
      const file = join(cli.dir, `${name}.json`);
      writeFileSync(file, JSON.stringify(workflowWith(name, name === "charge")));
      return file;
    });
    // No drain: its node would only end when aborted, after the default 20 s of draining.
    const worker = cli.spawn(["worker", "--actions", actions, "--drain-timeout", "0"]);
    const [charge, plain] = files.map((file) => cli.spawn(["start", file, "--wait"]));
    const [chargeRun, plainRun] = await Promise.all([charge!, plain!].map(async (p) => (await p.waitForLine((l) => l.startsWith("run-"))).trim()));
    const running = (runId: string) => async () => (await cli.json<{ tasks: TaskRecord[] }>(["show", runId!])).tasks.some((t) => t.status === "running");
    await until(running(chargeRun!), 20_000, "the at-most-once node to run");
    await until(running(plainRun!), 20_000, "the plain node to run");

    expect((await cli.run(["kill", plainRun!, "h", "--reason", "stuck"])).code).toBe(0);
    const killed = await plain!.exited;
    expect([killed.code, killed.stderr.trim()]).toEqual([1, `run ${plainRun} paused (killed)`]);

    worker.child.kill("SIGINT");
    await worker.exited;
    const cut = await charge!.exited;
    const [ask] = await cli.json<InterruptRecord[]>(["interrupts", "--run", chargeRun!]);
    expect(ask).toMatchObject({ kind: "recovery", node: "h", request: { question: expect.stringContaining("its worker shut down while it ran") } });
    expect([cut.code, cut.stderr.trim()]).toEqual([1, `run ${chargeRun} paused (interrupt): recovery interrupt ${ask!.id} at h (retry or skip)`]);
  });
});
