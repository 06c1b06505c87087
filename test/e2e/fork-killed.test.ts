import { writeFileSync } from "node:fs";
import { hostname } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { cliHarness } from "../support/cli.js";
import { kill, spawnScript } from "../support/processes.js";


describe("a fork whose process is killed before it makes the run", () => {
  const cli = cliHarness();

  it("is answered by a worker, refused with why, and no run is made: worker --once or a serving worker", async () => {
    const file = join(cli.dir, "nap.json");
    writeFileSync(file, JSON.stringify({ name: "nap", state: {}, start: "nap", nodes: { nap: { kind: "wait", seconds: 0, next: "END" } } }));
    const { runId } = await cli.json<{ runId: string }>(["start", file]);

    // A `fork` SIGKILLed once its command is recorded, as it makes the run.
    const killedFork = async () => {
      const child = spawnScript("stalled-fork", [`sqlite:${join(cli.dir, "pitwall.db")}`, runId, "0"]);
      const stalled = await child.line((l) => "creating" in l);
      await kill(child);
      return { pid: child.process.pid!, commandId: String(stalled.commandId), forkId: String(stalled.creating) };
    };
    const refusal = (pid: number) => `no run was made from checkpoint ${runId}:0: the process that recorded it (pid ${pid} on ${hostname()}) stopped before it made the run; fork again`;

    const first = await killedFork();
    const before = (await cli.run(["events", runId])).stdout.trim().split("\n");
    // Left pending: the request is the last word on it.
    expect(before.at(-1)).toMatch(/operator\.requested +operator:carol +fork \{"checkpointId":"run-\S+:0"\} \(try the other way\)$/);

    const once = await cli.run(["worker", "--once"]);
    expect(once.code).toBe(0);
    expect(once.stderr).toMatch(new RegExp(`WARN  fork ${first.commandId} of run ${runId} \\(by operator:carol\\) refused: ${escape(refusal(first.pid))}\\n`));

    const second = await killedFork();
    const worker = cli.spawn(["worker", "--json"]);
    const said = JSON.parse(await worker.waitForLine((l) => l.includes(second.commandId), 30_000)) as Record<string, unknown>;
    expect(said).toMatchObject({ level: "warn", kind: "fork-answered", runId, message: `fork ${second.commandId} of run ${runId} (by operator:carol) refused: ${refusal(second.pid)}` });

    const answers = (await cli.run(["events", runId])).stdout.split("\n").filter((l) => l.includes("operator.refused"));
    expect(answers).toEqual([
      expect.stringMatching(new RegExp(`operator\\.refused +worker:\\S+ +fork: ${escape(refusal(first.pid))}$`)),
      expect.stringMatching(new RegExp(`operator\\.refused +worker:\\S+ +fork: ${escape(refusal(second.pid))}$`)),
    ]);
    for (const { forkId } of [first, second]) {
      const shown = await cli.run(["show", forkId]);
      expect([shown.code, shown.stderr]).toEqual([2, `pitwall show: run ${forkId} not found\n`]);
    }
    expect((await cli.run(["runs", "--descendants-of", runId])).stderr).toBe("no runs\n");
  }, 90_000);
});

function escape(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
}
