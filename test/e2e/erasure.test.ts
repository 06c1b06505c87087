import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import type { RunRecord } from "../../engine/index.js";
import { actionsOf, cliHarness, workflowOf } from "../support/cli.js";

const EMAIL = "dana.private@example.com";

describe("pitwall delete --with-descendants: a run, its forks and continuations, gone from the file", () => {
  const cli = cliHarness();

  it("runs --descendants-of lists them; delete --with-descendants deletes them all, leaving no copy in the store's file or WAL", async () => {
    const file = join(cli.dir, "pitwall.db");
    const copies = () => [file, `${file}-wal`].reduce((n, f) => n + (existsSync(f) ? readFileSync(f).toString("latin1").split(EMAIL).length - 1 : 0), 0);
    const { runId } = await cli.json<{ runId: string }>(["start", workflowOf("task-queue"), "--input", JSON.stringify({ objective: `mail ${EMAIL} the brief` })]);
    expect((await cli.run(["worker", "--once", "--actions", actionsOf("task-queue")])).code).toBe(0);
    const fork = await cli.json<{ runId: string }>(["fork", runId, "3", "--set", `summary=for ${EMAIL}`]);
    const next = await cli.json<{ runId: string }>(["start", workflowOf("task-queue"), "--from", runId, "--input", JSON.stringify({ summary: `again ${EMAIL}` })]);
    const forkOfFork = await cli.json<{ runId: string }>(["fork", fork.runId, "0"]);
    const kept = await cli.json<{ runId: string }>(["start", workflowOf("task-queue")]);
    expect((await cli.run(["worker", "--once", "--actions", actionsOf("task-queue")])).code).toBe(0);
    expect(copies()).toBeGreaterThan(0);

    const listed = await cli.json<RunRecord[]>(["runs", "--descendants-of", runId]);
    expect(listed.map((r) => r.id).sort()).toEqual([fork.runId, next.runId, forkOfFork.runId].sort());
    expect(listed.every((r) => r.status === "succeeded")).toBe(true);

    const deleted = await cli.json<{ deleted: string[] }>(["delete", runId, "--with-descendants"]);
    expect(deleted.deleted[0]).toBe(runId);
    expect(deleted.deleted.slice(1).sort()).toEqual([fork.runId, next.runId, forkOfFork.runId].sort());
    expect(copies()).toBe(0);
    expect((await cli.json<RunRecord[]>(["runs"])).map((r) => r.id)).toEqual([kept.runId]);
  });
});
