import { describe, expect, it } from "vitest";
import type { RunRecord } from "../../engine/index.js";
import { actionsOf, cliHarness, workflowOf } from "../support/cli.js";

describe("tags: finding a run by what it is about", () => {
  const cli = cliHarness();

  it("start --tag tags a run, runs --tag finds it (and the runs that went on from it), show says them; a bad tag is bad input", async () => {
    const { runId: first } = await cli.json<{ runId: string }>(["start", workflowOf("task-queue"), "--input", "{}", "--tag", "ticket=T-123", "--tag", "team=ops"]);
    await cli.json(["start", workflowOf("task-queue"), "--input", "{}", "--tag", "ticket=T-9"]);
    expect((await cli.run(["worker", "--once", "--actions", actionsOf("task-queue")])).code).toBe(0);
    const { runId: next } = await cli.json<{ runId: string }>(["start", workflowOf("task-queue"), "--from", first, "--input", "{}", "--tag", "turn=2"]);

    const tagged = await cli.json<RunRecord[]>(["runs", "--tag", "ticket=T-123"]);
    expect(tagged.map((r) => [r.id, r.tags])).toEqual([
      [next, { ticket: "T-123", team: "ops", turn: "2" }],
      [first, { ticket: "T-123", team: "ops" }],
    ]);
    expect((await cli.json<RunRecord[]>(["runs", "--tag", "ticket=T-123", "--tag", "turn=2"])).map((r) => r.id)).toEqual([next]);
    expect(await cli.json<RunRecord[]>(["runs", "--tag", "ticket=nope"])).toEqual([]);
    expect((await cli.run(["show", first])).stdout).toMatch(/^tags +ticket=T-123 · team=ops$/m);

    expect(await cli.run(["start", workflowOf("task-queue"), "--tag", "ticket"])).toMatchObject({ code: 2, stderr: 'pitwall start: --tag "ticket": give NAME=VALUE (ticket=123)\n' });
    expect(await cli.run(["runs", "--tag", "a b=c"])).toMatchObject({ code: 2, stderr: `pitwall runs: --tag: tag name "a b" may only use letters, digits, '.', '_' and '-' (at most 64)\n` });
    expect((await cli.json<RunRecord[]>(["runs"])).length).toBe(3);
  });
});
