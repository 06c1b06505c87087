import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import type { RunRecord } from "../../engine/index.js";
import { cliHarness } from "../support/cli.js";
import { until } from "../support/engine.js";

describe("pitwall signal", () => {
  const cli = cliHarness();

  it("start --wait says a run waits for a signal (exit 0); pitwall signal sends one, its data lands in the state; a run that ended is a conflict", async () => {
    const file = join(cli.dir, "payment.json");
    writeFileSync(
      file,
      JSON.stringify({
        name: "payment",
        state: { payment: { type: "object", default: {} } },
        start: "paid",
        nodes: { paid: { kind: "wait", signal: "payment.confirmed", output: "payment", next: "END" } },
      }),
    );
    const worker = cli.spawn(["worker"]);
    try {
      const started = await cli.run(["start", file, "--wait"]);
      const runId = started.stdout.trim();
      expect([started.code, started.stderr.trim()]).toEqual([0, `run ${runId} paused (signal) at paid (pitwall signal ${runId} NAME)`]);
      expect((await cli.run(["signal", runId, "bad name"])).stderr).toContain(`signal name "bad name" may only use letters`);
      const sent = await cli.run(["signal", runId, "payment.confirmed", "--data", '{"amount":42}', "--reason", "webhook 7"]);
      expect([sent.code, sent.stdout.trim()]).toEqual([0, "signal payment.confirmed sent: paid goes on"]);
      await until(async () => (await cli.json<RunRecord>(["show", runId])).status === "succeeded", 20_000, "the run to end");
      expect(await cli.json(["state", runId])).toEqual({ payment: { amount: 42 } });
      const late = await cli.run(["signal", runId, "payment.confirmed"]);
      expect([late.code, late.stderr.trim()]).toEqual([3, `pitwall signal: run ${runId} has ended (succeeded): a signal reaches only a run that has not`]);
    } finally {
      worker.child.kill("SIGINT");
      await worker.exited;
    }
  });
});
