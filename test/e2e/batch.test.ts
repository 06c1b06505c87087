import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import type { RunRecord } from "../../engine/index.js";
import { cliHarness } from "../support/cli.js";

describe("pitwall batch", () => {
  const cli = cliHarness();

  it("lists what it would do without --yes; with it, signals and cancels each selected run and says how each went", async () => {
    const file = join(cli.dir, "payment.json");
    writeFileSync(
      file,
      JSON.stringify({ name: "payment", state: { paid: { type: "number", default: 0 } }, start: "pay", nodes: { pay: { kind: "wait", signal: "paid", output: "paid", next: "END" } } }),
    );
    const ids: string[] = [];
    for (const tag of ["wave=1", "wave=1", "wave=2"]) ids.push((await cli.run(["start", file, "--tag", tag])).stdout.trim());
    expect((await cli.run(["worker", "--once"])).code).toBe(0);

    const plan = await cli.run(["batch", "signal", "paid", "--tag", "wave=1", "--data", "7"]);
    expect(plan.code).toBe(0);
    expect(plan.stdout).toContain("would signal 2 runs:");
    expect(plan.stdout).toContain(ids[0]!);
    expect(plan.stdout).not.toContain(ids[2]!);
    expect(plan.stderr).toContain("nothing sent: add --yes to signal them");
    expect((await cli.json<RunRecord>(["show", ids[0]!])).status).toBe("paused");

    const sent = await cli.json<{ dryRun: boolean; runs: { runId: string; status: string; effects?: string[] }[] }>(["batch", "signal", "paid", "--tag", "wave=1", "--data", "7", "--yes"]);
    expect(sent.dryRun).toBe(false);
    expect(sent.runs.map((r) => [r.status, r.effects])).toEqual([
      ["done", ["signal paid sent: pay goes on"]],
      ["done", ["signal paid sent: pay goes on"]],
    ]);
    expect((await cli.run(["worker", "--once"])).code).toBe(0);
    expect(await cli.json(["state", ids[0]!])).toEqual({ paid: 7 });

    const canceled = await cli.run(["batch", "cancel", "--workflow", "payment", "--reason", "end of campaign", "--yes"]);
    expect(canceled.code).toBe(0);
    expect(canceled.stdout).toMatch(new RegExp(`${ids[2]!}\\s+run ${ids[2]!} canceled`));
    expect(canceled.stdout).toMatch(new RegExp(`${ids[0]!}\\s+skipped: it has ended \\(succeeded\\)`));
    expect(canceled.stderr.trim()).toBe("canceled 1 run; 2 left as they are");
    expect((await cli.json<RunRecord>(["show", ids[2]!])).status).toBe("canceled");
  });

  it("says in a dry run what each run would take, and what --yes would leave: a node its workflow lacks, nothing failed", async () => {
    const file = join(cli.dir, "review.json");
    writeFileSync(
      file,
      JSON.stringify({ name: "review", state: {}, start: "ask", nodes: { ask: { kind: "approval", question: "Ship?", decisions: ["approve", "reject"], routes: { approve: "END", reject: "END" } } } }),
    );
    const id = (await cli.run(["start", file])).stdout.trim();
    expect((await cli.run(["worker", "--once"])).code).toBe(0);
    const wrongNode = await cli.json<{ runs: { runId: string; status: string; why?: string }[] }>(["batch", "approve", "--node", "nope", "--workflow", "review"]);
    expect(wrongNode.runs).toEqual([{ runId: id, status: "skipped", why: "its workflow (review) has no node nope" }]);
    const retry = await cli.run(["batch", "retry", "--workflow", "review"]);
    expect(retry.stdout).toContain("left: no task of its current step failed or was canceled");
    expect(retry.stderr.trim()).toBe("nothing sent, and nothing would be");
    const approve = await cli.json<{ runs: { status: string }[] }>(["batch", "approve", "--workflow", "review", "--node", "ask"]);
    expect(approve.runs).toEqual([{ runId: id, status: "would" }]);
    const none = await cli.run(["batch", "cancel", "--workflow", "nothing-of-that-name", "--reason", "x", "--yes"]);
    expect([none.code, none.stdout, none.stderr.trim()]).toEqual([0, "", "no runs match the selection: nothing to do"]);
  });

  it("refuses a batch without a selection, an action it does not know, and a cancel without a reason, sending nothing", async () => {
    const expectUsage = async (args: string[], message: string) => {
      const r = await cli.run(args);
      expect([r.code, r.stderr.trim()]).toEqual([2, `pitwall batch: ${message}`]);
    };
    await cli.createStore();
    await expectUsage(["batch", "cancel", "--reason", "x", "--yes"], "batch needs a selection: --status, --workflow, --version, --tag, --orphaned or --descendants-of (it never acts on every run by default)");
    await expectUsage(["batch", "delete", "--workflow", "w"], "batch delete: not an action (cancel, retry, signal, approve, reject, upgrade)");
    await expectUsage(["batch", "cancel", "--workflow", "w", "--yes"], "batch cancel needs --reason TEXT");
    await expectUsage(["batch", "signal", "--workflow", "w"], "batch signal needs the signal's name: batch signal <name> ...");
    await expectUsage(["batch", "retry", "--workflow", "w", "--data", "1"], "--data is a signal's: only batch signal takes it");
    await expectUsage(["batch", "reject", "--workflow", "w"], "batch reject needs --reason TEXT (each run's node is told why)");
    await expectUsage(["batch", "cancel", "--workflow", "w", "--node", "n", "--reason", "x"], "--node says which interrupts to answer: only batch approve and reject take it");
    await expectUsage(["batch", "retry", "--status", "stuck"], "--status stuck: not a run status (queued, running, paused, succeeded, failed, canceled)");
    for (const prefix of ["1a2", "1a2b-", "xyzw", "1a2b3c4d5e6f7a8b9"]) {
      await expectUsage(["batch", "retry", "--version", prefix], `--version ${prefix}: give the start of a version, 4 to 16 hex characters (as runs prints it: 1a2b3c4d)`);
    }
  });
});
