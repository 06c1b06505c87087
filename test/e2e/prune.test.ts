import { describe, expect, it } from "vitest";
import type { RunRecord } from "../../engine/index.js";
import { actionsOf, cliHarness, workflowOf } from "../support/cli.js";

describe("pitwall prune and delete", () => {
  const cli = cliHarness();

  it("deletes the runs that ended before a time (a dry run deletes nothing) and keeps the others", async () => {
    const ended = [];
    for (let i = 0; i < 2; i++) ended.push((await cli.json<{ runId: string }>(["start", workflowOf("task-queue"), "--input", "{}"])).runId);
    const { runId: paused } = await cli.json<{ runId: string }>(["start", workflowOf("travel-planner"), "--input", '{"destination":"Porto"}']);
    const worker = await cli.run(["worker", "--once", "--actions", actionsOf("task-queue"), "--actions", actionsOf("travel-planner")]);
    expect(worker.code).toBe(0);

    const none = await cli.run(["prune", "--ended-before", "1h"]);
    expect(none.stdout).toMatch(/^deleted 0 runs that ended before \S+Z\n$/);
    const dry = await cli.run(["prune", "--ended-before", "0s", "--dry-run"]);
    expect(dry.code).toBe(0);
    expect(dry.stdout).toMatch(/^RUN +WORKFLOW +STATUS +ENDED$/m);
    for (const id of ended) expect(dry.stdout).toMatch(new RegExp(`^${id} +task-queue +succeeded +\\d+s$`, "m"));
    expect(dry.stdout).toMatch(/^would delete 2 runs that ended before \S+Z, with their child runs \(--dry-run: nothing was deleted\)$/m);
    // Finding none, it names the filters it was given.
    const noFailed = await cli.run(["prune", "--ended-before", "0s", "--status", "failed", "--workflow", "task-queue", "--dry-run"]);
    expect(noFailed.stderr).toMatch(/^no failed run of task-queue ended before \S+Z\n$/);
    expect((await cli.json<RunRecord[]>(["runs"])).length).toBe(3);

    const pruned = await cli.json<{ before: number; dryRun: boolean; runs: string[]; childRuns: number; kept: unknown[] }>(["prune", "--ended-before", "0s", "--workflow", "task-queue"]);
    expect(pruned).toEqual({ before: expect.any(Number), dryRun: false, runs: expect.any(Array), childRuns: 0, kept: [] });
    expect([...pruned.runs].sort()).toEqual([...ended].sort());
    expect((await cli.json<RunRecord[]>(["runs"])).map((r) => r.id)).toEqual([paused]);
    const gone = await cli.run(["events", ended[0]!]);
    expect(gone).toMatchObject({ code: 2, stderr: `pitwall events: run ${ended[0]} not found\n` });
  });

  it("delete removes one run that ended; a run still going is a conflict (exit 3), an unknown one bad input (exit 2)", async () => {
    const { runId: done } = await cli.json<{ runId: string }>(["start", workflowOf("task-queue"), "--input", "{}"]);
    const { runId: paused } = await cli.json<{ runId: string }>(["start", workflowOf("travel-planner"), "--input", '{"destination":"Porto"}']);
    expect((await cli.run(["worker", "--once", "--actions", actionsOf("task-queue"), "--actions", actionsOf("travel-planner")])).code).toBe(0);

    expect(await cli.run(["delete", done])).toMatchObject({ code: 0, stdout: `deleted run ${done}\n`, stderr: "" });
    expect(await cli.run(["delete", paused])).toMatchObject({ code: 3, stdout: "", stderr: `pitwall delete: run ${paused} is paused: only runs that have ended can be deleted\n` });
    expect(await cli.run(["delete", done, "--json"])).toMatchObject({ code: 2, stderr: `{"error":{"command":"delete","code":"NOT_FOUND","message":"run ${done} not found","exitCode":2}}\n` });
    expect((await cli.json<RunRecord[]>(["runs"])).map((r) => r.id)).toContain(paused);
  });

  it("needs --ended-before, an age or a time, and only statuses of runs that ended (exit 2)", async () => {
    const cases: [string[], string][] = [
      [["prune"], "pitwall prune: prune needs --ended-before AGE|TIME (the runs that ended before it are deleted)"],
      [["prune", "--ended-before", "yesterday"], 'pitwall prune: --ended-before takes an age (30d, 12h, 90m) or a date and time (2026-11-01T00:00:00Z), not "yesterday"'],
      [["prune", "--ended-before", "1d", "--status", "paused"], "pitwall prune: --status paused: only runs that ended are pruned (succeeded, failed, canceled)"],
    ];
    for (const [args, message] of cases) expect(await cli.run(args)).toMatchObject({ code: 2, stdout: "", stderr: `${message}\n` });
  });
});
