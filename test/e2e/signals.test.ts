import { existsSync, writeFileSync } from "node:fs";
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
      // Which node took which signal, in show's task table.
      expect((await cli.run(["show", runId])).stdout).toMatch(/^\s*1\s+paid\s+succeeded\s.*took signal payment\.confirmed#1$/m);
      const late = await cli.run(["signal", runId, "payment.confirmed"]);
      expect([late.code, late.stderr.trim()]).toEqual([3, `pitwall signal: run ${runId} has ended (succeeded): a signal reaches only a run that has not`]);
    } finally {
      worker.child.kill("SIGINT");
      await worker.exited;
    }
  });

  it("signal --start: the first signal of an order starts its run (a store too) and is delivered; the next finds the run; another workflow's run is a conflict", async () => {
    const order = join(cli.dir, "order.json");
    writeFileSync(
      order,
      JSON.stringify({
        name: "order",
        state: { sku: { type: "string", default: "" }, payment: { type: "object", default: {} } },
        start: "paid",
        nodes: { paid: { kind: "wait", signal: "paid", output: "payment", next: "END" } },
      }),
    );
    const refund = join(cli.dir, "refund.json");
    writeFileSync(refund, JSON.stringify({ name: "refund", state: {}, start: "w", nodes: { w: { kind: "wait", signal: "paid", next: "END" } } }));
    const store = ["--store", `sqlite:${join(cli.dir, "webhooks.db")}`];
    const send = (...args: string[]) => cli.run(["signal", "order-41", "paid", ...args, ...store]);
    const first = await send("--data", '{"eur":5}', "--start", order, "--input", '{"sku":"x"}', "--json");
    expect(first.code).toBe(0);
    expect(JSON.parse(first.stdout)).toMatchObject({ started: true, effect: "signal paid kept for run order-41, started for it: the first of its nodes to ask for it takes it" });
    const again = await send("--data", '{"eur":6}', "--start", order);
    expect([again.code, again.stdout.trim(), again.stderr]).toEqual([0, "signal paid kept until a node takes it: no node waits for it now", ""]);
    expect(JSON.parse((await send("--start", order, "--json")).stdout)).toMatchObject({ started: false });
    const wrong = await send("--start", refund);
    expect([wrong.code, wrong.stderr.trim()]).toEqual([3, "pitwall signal: run order-41 is a run of workflow order, not refund: no signal sent"]);
    expect((await send("--input", "{}")).stderr).toContain("--input goes with --start");
    // A start refused for its input makes no store: nothing is written.
    const fresh = join(cli.dir, "fresh.db");
    const refused = await cli.run(["signal", "order-42", "paid", "--start", order, "--input", '{"nope":1}', "--store", `sqlite:${fresh}`]);
    expect([refused.code, existsSync(fresh)]).toEqual([2, false]);
    const worker = await cli.run(["worker", "--once", ...store]);
    expect(worker.code).toBe(0);
    expect(await cli.json(["state", "order-41", ...store])).toEqual({ sku: "x", payment: { eur: 5 } });
    expect((await cli.run(["events", "order-41", "--type", "run.created", ...store])).stdout).toMatch(/order \(version \w+\), started to take signal paid \(cmd-\w+\)$/m);
  });

  it("fork carries the signals the run's history has not taken and says how many; --no-signals starts it with an empty inbox", async () => {
    const file = join(cli.dir, "order.json");
    writeFileSync(
      file,
      JSON.stringify({
        name: "order-ship",
        state: { payment: { type: "object", default: {} }, shipping: { type: "string", default: "" } },
        start: "paid",
        nodes: { paid: { kind: "wait", signal: "paid", output: "payment", next: "ship" }, ship: { kind: "wait", signal: "shipped", output: "shipping", next: "END" } },
      }),
    );
    const runId = (await cli.run(["start", file])).stdout.trim();
    await cli.run(["worker", "--once"]);
    expect((await cli.run(["signal", runId, "paid", "--data", '{"eur":5}'])).code).toBe(0);
    await cli.run(["worker", "--once"]);
    expect((await cli.run(["signal", runId, "note", "--data", '"gift"'])).stdout.trim()).toBe("signal note kept until a node takes it: no node waits for it now");
    expect(await cli.json<RunRecord>(["show", runId])).toMatchObject({ status: "paused", reason: "signal", current: ["ship"] });

    const forked = await cli.run(["fork", runId, "0"]);
    const forkId = forked.stdout.trim();
    expect([forked.code, forked.stderr]).toEqual([0, `forked from checkpoint ${runId}:0 as run ${forkId}; carried 2 signals (paid, note) from run ${runId}\n`]);
    expect((await cli.run(["show", forkId])).stdout).toMatch(new RegExp(`^inbox +2 signals no node has taken: paid, note \\(2 carried from run ${runId}\\)$`, "m"));
    // Its worker takes the payment the original took, without it being sent again.
    await cli.run(["worker", "--once"]);
    expect(await cli.json(["state", forkId])).toEqual({ payment: { eur: 5 }, shipping: "" });
    expect(await cli.json<RunRecord>(["show", forkId])).toMatchObject({ status: "paused", reason: "signal", current: ["ship"] });
    expect((await cli.run(["events", forkId, "--type", "run.created"])).stdout).toMatch(new RegExp(`forked from ${runId} at ${runId}:0, carrying 2 signals its source had not taken$`, "m"));

    const json = await cli.json<{ effect: string; runId: string; carriedSignals: number }>(["fork", runId, "1", "--json"]);
    expect(json).toMatchObject({ carriedSignals: 1, effect: `forked from checkpoint ${runId}:1 as run ${json.runId}; carried 1 signal (note) from run ${runId}` });
    const bare = await cli.json<{ effect: string; runId: string; carriedSignals: number }>(["fork", runId, "0", "--no-signals", "--json"]);
    expect(bare).toMatchObject({ carriedSignals: 0, effect: `forked from checkpoint ${runId}:0 as run ${bare.runId}` });
    expect((await cli.json<RunRecord>(["show", bare.runId])).inbox ?? []).toEqual([]);
    const wrong = await cli.run(["fork", runId, "0", "--signals"]);
    expect([wrong.code, wrong.stderr]).toEqual([2, "pitwall fork: --signals: carrying the signals its history has not taken is the default; give --no-signals to start the fork with an empty inbox\n"]);
  });
});
