import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { cliHarness } from "../support/cli.js";
import { until } from "../support/engine.js";

/** A workflow whose node `f` always fails, retried after `backoffMs` (no jitter). */
function flaky(cli: ReturnType<typeof cliHarness>, name: string, backoffMs: number): { file: string; actions: string } {
  const actions = join(cli.dir, "declined.mjs");
  const file = join(cli.dir, `${name}.json`);
  writeFileSync(actions, 'export default { charge: () => { throw new Error("card declined"); } };\n');
  const retry = { maxAttempts: 3, backoffMs, maxBackoffMs: 3_600_000, jitter: 0 };
  writeFileSync(file, JSON.stringify({ name, state: {}, start: "f", nodes: { f: { action: "charge", retry, next: "END" } } }));
  return { file, actions };
}

describe("a run waiting out a retry's backoff says so", () => {
  const cli = cliHarness();

  it("runs and show: queued for a retry of the node (not a timer), with the attempt and the error it retries after", async () => {
    const { file, actions } = flaky(cli, "slow-retry", 600_000);
    const { runId } = await cli.json<{ runId: string }>(["start", file]);
    expect((await cli.run(["worker", "--once", "--actions", actions])).code).toBe(0);
    const status = "queued \\(retry of f in (9|10)m, attempt 2 of 3\\)";
    expect((await cli.run(["runs", "--workflow", "slow-retry"])).stdout).toMatch(new RegExp(`^${runId} +slow-retry +[0-9a-f]{8} +${status} `, "m"));
    const shown = (await cli.run(["show", runId])).stdout;
    expect(shown).toMatch(new RegExp(`^status +${status}$`, "m"));
    expect(shown).toMatch(/^1 +f +pending +1 +\S+ +retry in (9|10)m: card declined$/m);
  });

  it("show, while a worker holds the run through a short backoff: running a retry, not running the node", async () => {
    const { file, actions } = flaky(cli, "quick-retry", 4_000);
    const { runId } = await cli.json<{ runId: string }>(["start", file]);
    cli.spawn(["worker", "--actions", actions]);
    const shown = await until(async () => {
      const out = (await cli.run(["show", runId])).stdout;
      return /^status +running \(retry/m.test(out) ? out : undefined;
    }, 15_000, "show to say the run waits to retry f");
    expect(shown).toMatch(/^status +running \(retry of f in [0-4]s, attempt 2 of 3\)$/m);
    expect(shown).toMatch(/^step +1 · checkpoint 0 · \d+ events · waiting to retry f$/m);
    expect(shown).toMatch(/^1 +f +pending +1 +\S+ +retry (in [0-4]s|due): card declined$/m);
  });
});
