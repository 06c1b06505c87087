import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { cliHarness } from "../support/cli.js";
import { kill, spawnScript } from "../support/processes.js";


describe("a kill queued for a worker as the run ends, its process killed", () => {
  const cli = cliHarness();

  it("is refused by a worker, saying the run ended first, instead of staying pending", async () => {
    const actions = join(cli.dir, "slow-actions.mjs");
    const file = join(cli.dir, "slow.json");
    const done = join(cli.dir, "done");
    // The node runs until the test lets it end.
    writeFileSync(actions, `import { existsSync } from "node:fs";\nexport default { slow: () => new Promise((resolve) => { const t = setInterval(() => existsSync(${JSON.stringify(done)}) && (clearInterval(t), resolve({})), 20); }) };\n`);
    writeFileSync(file, JSON.stringify({ name: "slow", state: {}, start: "s", nodes: { s: { action: "slow" } } }));
    const { runId } = await cli.json<{ runId: string }>(["start", file]);

    // The worker runs the run to its end and exits; the kill, sent while it held the run, is
    // recorded for it as the run ends, and its process is killed there: nobody answers it.
    const worker = cli.spawn(["worker", "--once", "--actions", actions]);
    const killer = spawnScript("stalled-kill", [`sqlite:${join(cli.dir, "pitwall.db")}`, runId]);
    await killer.line((l) => l.read === "held");
    writeFileSync(done, "");
    const { commandId } = (await killer.line((l) => "commandId" in l)) as { commandId: string };
    // Killed once the worker has exited: its look for commands left unanswered found the kill's
    // process alive, if it found the kill at all.
    expect((await worker.exited).code).toBe(0);
    await kill(killer);
    const before = (await cli.run(["events", runId])).stdout.trim().split("\n");
    expect(before.at(-1)).toMatch(/operator\.requested +operator:carol +kill \{\} \(too slow\)$/);
    expect(before.some((l) => / run\.succeeded /.test(l))).toBe(true);

    const reason = `run ${runId} ended (succeeded) before the kill was applied`;
    const once = await cli.run(["worker", "--once"]);
    expect(once.code).toBe(0);
    expect(once.stderr).toContain(`WARN  kill ${commandId} of run ${runId} (by operator:carol), left unanswered, refused: ${reason}\n`);
    const after = (await cli.run(["events", runId])).stdout.trim().split("\n");
    expect(after.at(-1)).toMatch(/operator\.refused +worker:\S+ +kill: /);
    expect(after.at(-1)).toContain(` kill: ${reason}`);
    expect(await cli.json(["show", runId])).toMatchObject({ status: "succeeded" });
  }, 60_000);
});
