import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import type { InterruptRecord, RunRecord } from "../../engine/index.js";
import { cliHarness } from "../support/cli.js";
import { SPAN } from "../support/span.js";
import { sleep } from "../support/engine.js";

const deadlined = (seconds: number) => ({
  name: "refund-review",
  state: { log: { type: "array", items: { type: "string" }, default: [], reducer: "append" } },
  start: "review",
  nodes: {
    review: { kind: "approval", question: "Refund the order?", deadline: { seconds, decision: "reject" }, routes: { approve: "refund", reject: "END", timeout: "escalate" } },
    refund: { action: "log", next: "END" },
    escalate: { action: "log", next: "END" },
  },
});

// A deadline far enough off that the commands before it end first on a slow, loaded machine.
const SECONDS = 8;

const ACTIONS = `export default { log: (_s, ctx) => ({ log: [ctx.node] }) };\n`;

describe("deadlines from the command line", () => {
  const cli = cliHarness();

  it("lists what the deadline will do, and a draining worker gives it once it passed", async () => {
    const file = join(cli.dir, "refund.json");
    const actions = join(cli.dir, "log.mjs");
    writeFileSync(file, JSON.stringify(deadlined(SECONDS)));
    writeFileSync(actions, ACTIONS);
    const started = await cli.run(["start", file, "--actions", actions]);
    expect(started.code).toBe(0);
    const runId = started.stdout.trim();
    expect((await cli.run(["worker", "--once", "--actions", actions])).code).toBe(0);
    const listed = await cli.run(["interrupts"]);
    expect(listed.stdout).toMatch(/DEADLINE/);
    expect(listed.stdout).toMatch(new RegExp(`reject in ${SPAN}`));
    expect((await cli.run(["show", runId])).stdout).toMatch(new RegExp(`DEADLINE[\\s\\S]*reject in ${SPAN}`));
    const [pending] = await cli.json<InterruptRecord[]>(["interrupts"]);
    expect(pending!.deadline).toMatchObject({ decision: "reject", at: expect.any(Number) });
    await sleep(Math.max(0, pending!.deadline!.at - Date.now()) + 100);
    expect((await cli.run(["interrupts"])).stdout).toMatch(new RegExp(String.raw`reject \(due ${SPAN} ago\)`));
    expect((await cli.run(["worker", "--once", "--actions", actions])).code).toBe(0);
    expect((await cli.json<RunRecord>(["show", runId])).status).toBe("succeeded");
    expect((await cli.json<{ log: string[] }>(["state", runId])).log).toEqual(["escalate"]);
    const resolved = await cli.run(["interrupts", "--status", "resolved"]);
    expect(resolved.stdout).toMatch(new RegExp(String.raw`reject\s+timeout\s+\d+s\s+nobody answered within ${SECONDS} s`));
    const events = await cli.run(["events", runId]);
    expect(events.stdout).toMatch(/Refund the order\? \(deadline \d{4}-/);
  });

  it("start --deadline: show says when the run is canceled, and a worker cancels it then", async () => {
    const file = join(cli.dir, "slow.json");
    writeFileSync(file, JSON.stringify({ name: "slow", state: {}, start: "ask", nodes: { ask: { kind: "approval", question: "Go?", routes: { approve: "END", reject: "END" } } } }));
    expect((await cli.run(["start", file, "--deadline", "0"])).stderr).toContain("--deadline takes a length of time above 0");
    const started = await cli.run(["start", file, "--deadline", String(SECONDS)]);
    expect(started.code).toBe(0);
    const runId = started.stdout.trim();
    expect((await cli.run(["show", runId])).stdout).toMatch(new RegExp(String.raw`deadline\s+canceled if not ended by \d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC \(in ${SPAN}\)`));
    expect((await cli.run(["worker", "--once"])).code).toBe(0);
    const run = await cli.json<RunRecord>(["show", runId]);
    await sleep(Math.max(0, run.deadlineAt! - Date.now()) + 100);
    expect((await cli.run(["worker", "--once"])).code).toBe(0);
    expect((await cli.json<RunRecord>(["show", runId])).status).toBe("canceled");
    expect((await cli.run(["events", runId])).stdout).toMatch(new RegExp(String.raw`run\.canceled\s+timeout\s+.*it had not ended ${SECONDS} s after it started`));
  });

  it("the log of the worker running a run its deadline cancels says the deadline canceled it", async () => {
    const file = join(cli.dir, "busy.json");
    const actions = join(cli.dir, "busy.mjs");
    writeFileSync(file, JSON.stringify({ name: "busy", state: {}, start: "work", nodes: { work: { action: "busy", next: "END" } } }));
    // Busy until aborted: the worker holds the run when its deadline comes.
    writeFileSync(actions, `export default { busy: (_s, ctx) => new Promise((_, reject) => ctx.signal.addEventListener("abort", () => reject(ctx.signal.reason))) };\n`);
    const worker = cli.spawn(["worker", "--actions", actions]);
    const runId = (await cli.run(["start", file, "--deadline", "2"])).stdout.trim();
    const line = await worker.waitForLine((l) => l.includes(`run ${runId} canceled`), 20_000);
    expect(line).toMatch(new RegExp(`INFO  run ${runId} canceled: by a deadline: it had not ended 2 s after it started \\(deadline \\d{4}-`));
    worker.child.kill("SIGINT");
    await worker.exited;
  });
});
