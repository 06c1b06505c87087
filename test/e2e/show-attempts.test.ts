import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import type { CallView, TaskRecord } from "../../engine/index.js";
import { cliHarness, section } from "../support/cli.js";

describe("pitwall show: how many times a node ran and a call was made", () => {
  const cli = cliHarness();

  it("counts a sub-workflow's park and resume as one try, and says a call its node made again succeeded each time", async () => {
    const actions = join(cli.dir, "attempts-actions.mjs");
    // "pay" makes its calls (the lookup failing once), then fails its first attempt: its retry makes them again (afterFailure "again").
    writeFileSync(
      actions,
      `let tries = 0;
let lookups = 0;
export default {
  note: () => ({ notes: ["noted"] }),
  pay: async (state, ctx) => {
    const lookup = () => { if (++lookups === 1) throw new Error("lookup timed out"); return { found: true }; };
    await ctx.call("lookup", lookup, { retry: { maxAttempts: 2, backoffMs: 1 }, input: { kind: "tool", tool: "lookup", arguments: {} }, afterFailure: "again" });
    await ctx.call("charge", () => ({ charged: 5 }), { input: { kind: "tool", tool: "chargeCard", arguments: { amount: 5 } }, afterFailure: "again" });
    if (++tries === 1) throw new Error("flaky after the charge");
    return { notes: ["paid"] };
  },
};
`,
    );
    const state = { notes: { type: "array", items: { type: "string" }, reducer: "append", default: [] } };
    const child = { name: "attempts-child", state, start: "note", nodes: { note: { action: "note" } } };
    const file = join(cli.dir, "attempts.json");
    writeFileSync(
      file,
      JSON.stringify({
        name: "attempts",
        state,
        start: "sub",
        nodes: { sub: { kind: "subgraph", workflow: child, next: "pay" }, pay: { action: "pay", retry: { maxAttempts: 2, backoffMs: 1 }, next: "END" } },
      }),
    );
    const worker = cli.spawn(["worker", "--actions", actions]);
    const started = await cli.run(["start", file, "--wait", "--json"]);
    worker.child.kill("SIGINT");
    await worker.exited;
    const { runId, status } = JSON.parse(started.stdout) as { runId: string; status: string };
    expect(status).toBe("succeeded");

    const shown = (await cli.run(["show", runId])).stdout;
    const tasks = section(shown, "tasks").map((l) => l.split(/ {2,}/));
    expect(tasks[0]!.slice(0, 4)).toEqual(["STEP", "NODE", "STATUS", "ATTEMPTS"]);
    const row = (node: string) => tasks.find((cells) => cells[1] === node)?.slice(1, 4);
    expect(row("sub")).toEqual(["sub", "succeeded", "1 (+1 resume)"]);
    expect(row("pay")).toEqual(["pay", "succeeded", "2"]);
    expect(row("pay · charge")).toEqual(["pay · charge", "succeeded", "made 2 times"]);
    const calls = section(shown, "model and tool calls").map((l) => l.split(/ {2,}/));
    expect(calls.find((cells) => cells[2] === "charge")?.[4]).toBe("succeeded (made 2 times)");
    // Its own retry failed once, and the node's retry made it again.
    expect(calls.find((cells) => cells[2] === "lookup")?.[4]).toBe("succeeded (3 tries, 1 failed)");

    // --json keeps each record whole: every attempt, the park included.
    const json = await cli.json<{ tasks: TaskRecord[]; calls: CallView[] }>(["show", runId]);
    expect(json.tasks.find((t) => t.node === "sub")!.attempts.map((a) => a.outcome)).toEqual(["interrupted", "succeeded"]);
    expect(json.calls.find((c) => c.call === "charge")).toMatchObject({ status: "succeeded", attempts: 2 });
  });
});
