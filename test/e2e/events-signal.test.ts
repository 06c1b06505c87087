import { spawn } from "node:child_process";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { createEngine, openStore, workflow } from "../../engine/index.js";
import { BIN, cliHarness } from "../support/cli.js";
import { until } from "../support/engine.js";

const STEPS = 1_500;

const loop = workflow("long-loop", { state: z.object({ n: z.number().default(0) }), limits: { maxSteps: STEPS + 1 } })
  .node("work", (s) => ({ n: s.n + 1 }), { route: (s) => (s.n >= STEPS ? "done" : "again"), routes: { again: "work", done: "END" } })
  .compile();

describe("pitwall events without --follow", () => {
  const cli = cliHarness();

  it("ends at Ctrl-C part-way through a listing too long for its reader's pipe", async () => {
    const store = await openStore(`sqlite:${join(cli.dir, "pitwall.db")}`, { create: true });
    const engine = createEngine({ store, workflows: [loop] });
    try {
      await (await engine.start(loop)).wait();
    } finally {
      await engine.close();
      await store.close();
    }
    const listing = (await cli.run(["events"])).stdout;
    // Several times what a pipe holds: the listing cannot be written before the reader reads.
    expect(listing.length).toBeGreaterThan(4 * 64 * 1024);
    const total = listing.trim().split("\n").length;

    const child = spawn(process.execPath, [BIN, "events"], { cwd: cli.dir, env: { ...process.env, PITWALL_STORE: `sqlite:${join(cli.dir, "pitwall.db")}`, NO_COLOR: "1" } });
    const ended = new Promise<NodeJS.Signals | number | null>((resolve) => child.on("exit", (code, signal) => resolve(signal ?? code)));
    let exited = false;
    void ended.then(() => (exited = true));
    // The first lines have come, then the reader stops reading: the listing fills the pipe and
    // waits in a write, where only the signal's own action can end it.
    let received = "";
    child.stdout.setEncoding("utf8").once("data", () => child.stdout.pause());
    child.stdout.on("data", (d: string) => (received += d));
    const drained = new Promise((resolve) => child.stdout.on("end", resolve));
    await until(() => received.length > 0, 15_000, "the first lines");
    child.kill("SIGINT");
    await until(() => exited, 15_000, "the listing to end at Ctrl-C while its reader is not reading");
    expect(await ended).toBe("SIGINT");
    child.stdout.resume();
    await drained;
    expect(received.trim().split("\n").length).toBeLessThan(total);
  }, 60_000);
});
