import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { openStore, type CheckpointRecord, type EventRecord, type InterruptRecord, type RunRecord, type TaskRecord } from "../../engine/index.js";
import { actionsOf, cliHarness, workflowOf } from "../support/cli.js";

type Shown = RunRecord & { tasks: TaskRecord[]; interrupts: InterruptRecord[]; storage: { total: number } };

describe("starting, running and inspecting runs from the command line", () => {
  const cli = cliHarness();

  /** Starts a fixture run and lets a worker process take it as far as it goes. */
  async function startAndWork(name: string, input: unknown = {}) {
    const { runId } = await cli.json<{ runId: string }>(["start", workflowOf(name), "--input", JSON.stringify(input)]);
    const worker = await cli.run(["worker", "--once", "--actions", actionsOf(name)]);
    expect(worker.code).toBe(0);
    return runId;
  }

  it("start + worker --once + show/state/checkpoints/diff/runs/events/graph", async () => {
    const start = await cli.run(["start", workflowOf("travel-planner"), "--input", '{"destination":"Porto","nights":3}']);
    expect(start.code).toBe(0);
    const runId = start.stdout.trim();
    expect(runId).toMatch(/^run-\w+$/);

    const worker = await cli.run(["worker", "--once", "--actions", actionsOf("travel-planner")]);
    expect(worker.code).toBe(0);
    expect(worker.stdout).toContain(`run ${runId} paused`);

    const shown = await cli.json<Shown>(["show", runId]);
    expect(shown).toMatchObject({ id: runId, workflow: "travel-planner", status: "paused", reason: "interrupt" });
    expect(shown.tasks.find((t) => t.node === "flights")!.attempts).toHaveLength(2);
    expect(shown.interrupts).toEqual([expect.objectContaining({ node: "approve", kind: "approval", runId })]);
    expect(shown.storage.total).toBeGreaterThan(0);
    const human = await cli.run(["show", runId]);
    expect(human.stdout).toMatch(/^status +paused \(interrupt\)$/m);
    // Beside the question, what the approval shows (its values, on one line).
    expect(human.stdout).toMatch(/^int-\S+ +approve +approval +approve\/reject\/edit +Book this trip\? +summary: "(TAP|easyJet|Lufthansa) return to Porto .*…$/m);

    const state = await cli.json<Record<string, unknown>>(["state", runId]);
    expect(state).toMatchObject({ destination: "Porto", nights: 3, booking: null, summary: expect.stringContaining("Porto") });
    expect(await cli.json(["state", runId, "--checkpoint", "0"])).toMatchObject({ destination: "Porto", summary: "" });

    const checkpoints = await cli.json<CheckpointRecord[]>(["checkpoints", runId]);
    expect(checkpoints.map((c) => [c.n, c.source])).toEqual([[0, "input"], [1, "loop"], [2, "loop"], [3, "loop"]]);
    expect(checkpoints[2]!.nodes).toEqual(["flights", "hotels", "weather"]);
    expect(checkpoints.map((c) => c.snapshot)).toEqual([true, false, false, false]);
    expect(JSON.stringify(checkpoints[0])).not.toContain("Porto");

    const diff = await cli.json<{ from: string; to: string; diff: { op: string; path: string }[] }>(["diff", runId, "2"]);
    expect(diff.from).toBe(checkpoints[1]!.id);
    expect(diff.diff.map((d) => d.path).sort()).toEqual(["$.options.flights", "$.options.hotels", "$.options.weather"]);
    const between = await cli.run(["diff", runId, "0", "3"]);
    expect(between.stdout).toMatch(/^~ \$\.total: 0 → \d+$/m);

    const runs = await cli.json<RunRecord[]>(["runs", "--status", "paused"]);
    expect(runs.map((r) => r.id)).toContain(runId);
    expect(await cli.json(["runs", "--status", "succeeded"])).toEqual([]);

    const events = await cli.run(["events", runId, "--json"]);
    const lines = events.stdout.trim().split("\n").map((l) => JSON.parse(l) as EventRecord);
    expect(lines[0]).toMatchObject({ type: "run.created", runId, actor: expect.stringMatching(/^operator:/) });
    expect(lines.map((e) => e.seq)).toEqual([...lines.map((e) => e.seq)].sort((a, b) => a - b));
    expect(lines.filter((e) => e.type === "task.failed")).toEqual([expect.objectContaining({ payload: expect.objectContaining({ node: "flights", willRetry: true }) })]);
    const failures = await cli.run(["events", runId, "--type", "task.failed"]);
    const failed = lines.find((e) => e.type === "task.failed")!;
    expect(failures.stdout.trim().split("\n")).toEqual([expect.stringMatching(new RegExp(`^ *${failed.runSeq}  #${failed.seq}  .*task\\.failed .*flights attempt 1: flight search API timed out`))]);

    const graph = await cli.run(["graph", runId]);
    expect(graph.stdout).toContain("[approve] → book");
    expect((await cli.run(["graph", workflowOf("travel-planner")])).stdout).toBe(graph.stdout);
  });

  it("worker --snapshot-every N stores the whole state every N checkpoints; the state reads the same", async () => {
    const refused = await cli.run(["worker", "--once", "--snapshot-every", "0", "--actions", actionsOf("travel-planner")]);
    expect(refused.code).toBe(2);
    expect(refused.stderr.trim()).toBe("pitwall worker: --snapshot-every must be a whole number of at least 1");

    const input = '{"destination":"Lyon","nights":2}';
    const { runId } = await cli.json<{ runId: string }>(["start", workflowOf("travel-planner"), "--input", input]);
    expect((await cli.run(["worker", "--once", "--snapshot-every", "2", "--actions", actionsOf("travel-planner")])).code).toBe(0);
    const checkpoints = await cli.json<{ n: number; snapshot: boolean }[]>(["checkpoints", runId]);
    expect(checkpoints.map((c) => [c.n, c.snapshot])).toEqual([[0, true], [1, false], [2, true], [3, false]]);
    expect((await cli.run(["checkpoints", runId])).stdout).toMatch(/^2 .* snapshot +\S+$/m);

    // Checkpoint 3 is read from the snapshot at 2 and one delta; the property test covers the folds.
    const atSnapshot = await cli.json<{ options: Record<string, unknown> }>(["state", runId, "--checkpoint", "2"]);
    expect(Object.keys(atSnapshot.options).sort()).toEqual(["flights", "hotels", "weather"]);
    expect(await cli.json(["state", runId, "--checkpoint", "3"])).toEqual(await cli.json(["state", runId]));
    // As LangGraph users and `diff` have it: the checkpoint as the second argument.
    expect(await cli.json(["state", runId, "2"])).toEqual(atSnapshot);
    expect(await cli.json(["state", runId, "--checkpoint", "3"])).toMatchObject({ options: atSnapshot.options, summary: expect.stringContaining("Lyon") });
  });

  it("interrupts lists the pending queue oldest first, with the documented --json shape", async () => {
    const first = await startAndWork("sensitive-operation");
    const second = await startAndWork("research-fanout");
    const list = await cli.json<InterruptRecord[]>(["interrupts"]);
    const ours = list.filter((i) => i.runId === first || i.runId === second);
    expect(ours.map((i) => i.runId)).toEqual([first, second]);
    expect(ours[0]).toMatchObject({ id: expect.any(String), runId: first, node: "execute", kind: "node", request: { decisions: ["approve", "reject", "edit"] } });
    expect(await cli.json(["interrupts", "--run", second])).toEqual([expect.objectContaining({ node: "pricing" })]);
  });

  it("resolve: an invalid patch is refused (exit 2, nothing written); a valid one resumes; a second resolve is a conflict (exit 3)", async () => {
    const runId = await startAndWork("travel-planner");
    const [ask] = await cli.json<InterruptRecord[]>(["interrupts", "--run", runId]);
    const before = await cli.json<CheckpointRecord[]>(["checkpoints", runId]);

    const invalid = await cli.run(["resolve", ask!.id, "--approve", "--set", "nights=0"]);
    expect(invalid.code).toBe(2);
    expect(invalid.stderr).toMatch(/^pitwall resolve: edited state is invalid at \$\.nights: .*\n$/);
    const badJson = await cli.run(["resolve", ask!.id, "--approve", "--patch", "{nights: 2}"]);
    expect(badJson.code).toBe(2);
    expect(badJson.stderr).toMatch(/^pitwall resolve: --patch is not valid JSON/);
    expect(await cli.json(["checkpoints", runId])).toEqual(before);
    expect((await cli.json<Shown>(["show", runId])).interrupts).toHaveLength(1);

    const patchFile = join(cli.dir, "patch.json");
    writeFileSync(patchFile, JSON.stringify({ nights: 5, budget: 3000 }));
    const ok = await cli.json<{ interruptId: string; decision: string; checkpointId: string }>(["resolve", ask!.id, "--approve", "--patch", `@${patchFile}`, "--reason", "longer stay", "--as", "alice"]);
    expect(ok).toMatchObject({ interruptId: ask!.id, runId, decision: "approve", checkpointId: `${runId}:4` });
    const edited = (await cli.json<CheckpointRecord[]>(["checkpoints", runId]))[4]!;
    expect(edited).toMatchObject({ source: "update", actor: "operator:alice" });

    const again = await cli.run(["resolve", ask!.id, "--reject"]);
    expect(again.code).toBe(3);
    expect(again.stderr).toMatch(/^pitwall resolve: interrupt \S+ was already resolved by operator:alice.*\n$/);

    await cli.run(["worker", "--once", "--actions", actionsOf("travel-planner")]);
    const done = await cli.json<Shown>(["show", runId]);
    expect(done.status).toBe("succeeded");
    expect(await cli.json(["state", runId])).toMatchObject({ nights: 5, budget: 3000, booking: expect.stringMatching(/^confirmed /) });
  });

  it("resolve --reject and --set on nested paths; a decision the interrupt does not offer is bad input", async () => {
    const rejected = await startAndWork("sensitive-operation");
    const [ask] = await cli.json<InterruptRecord[]>(["interrupts", "--run", rejected]);
    const respond = await cli.run(["resolve", ask!.id, "--respond", "sure"]);
    expect(respond.code).toBe(2);
    expect(respond.stderr).toContain('decision "respond" is not allowed');
    expect((await cli.run(["resolve", ask!.id, "--reject"])).code).toBe(0);

    const edited = await startAndWork("sensitive-operation");
    const [ask2] = await cli.json<InterruptRecord[]>(["interrupts", "--run", edited]);
    const r = await cli.run(["resolve", ask2!.id, "--decision", "edit", "--set", "$.operation.limit=25", "--set", "operation.kind=archive"]);
    expect(r.code).toBe(0);
    await cli.run(["worker", "--once", "--actions", actionsOf("sensitive-operation")]);
    expect(await cli.json(["state", rejected])).toMatchObject({ result: "nothing done" });
    expect(await cli.json(["state", edited])).toMatchObject({ result: "archived 25 objects under s3://acme-backups/nightly/" });
  });

  it("show and runs say when a running run's lease has run out: its worker is gone or stalled", async () => {
    const { runId } = await cli.json<{ runId: string }>(["start", workflowOf("task-queue")]);
    const store = await openStore(`sqlite:${join(cli.dir, "pitwall.db")}`);
    try {
      await store.claimRun({ owner: "vanished", leaseMs: 1, runId });
    } finally {
      await store.close();
    }
    await new Promise((resolve) => setTimeout(resolve, 20));
    const shown = await cli.run(["show", runId]);
    expect(shown.stdout).toMatch(/^status +running \(lease ran out\)$/m);
    expect(shown.stdout).toMatch(/^owner +worker:vanished \(lease expired \d+s ago: the worker is gone or stalled; the next worker to claim the run takes it over\)$/m);
    expect((await cli.run(["runs"])).stdout).toMatch(new RegExp(`^${runId} +task-queue +[0-9a-f]{8} +running \\(lease ran out\\) `, "m"));
    // A worker takes it over and runs it to the end.
    expect((await cli.run(["worker", "--once", "--actions", actionsOf("task-queue")])).code).toBe(0);
    const recovered = await cli.run(["show", runId]);
    expect(recovered.stdout).toMatch(/^status +succeeded$/m);
    expect(recovered.stdout).toMatch(/^recovered +1 time after a worker was lost$/m);
  });

  it("unknown runs, interrupts and checkpoints are bad input (exit 2) named on one line", async () => {
    const runId = await startAndWork("task-queue");
    const results = await Promise.all([
      cli.run(["show", "run-nope"]),
      cli.run(["resolve", "int-nope", "--approve"]),
      cli.run(["state", runId, "--checkpoint", "99"]),
      cli.run(["diff", runId, "1", "nope"]),
      cli.run(["resolve", "int-nope"]),
    ]);
    expect(results.map((r) => r.code)).toEqual([2, 2, 2, 2, 2]);
    expect(results.map((r) => r.stderr.trim())).toEqual([
      "pitwall show: run run-nope not found",
      "pitwall resolve: interrupt int-nope not found",
      `pitwall state: checkpoint 99 of run ${runId} not found`,
      `pitwall diff: checkpoint nope of run ${runId} not found`,
      "pitwall resolve: give exactly one of --approve, --reject, --respond, --edit, --decision",
    ]);
    // Scripts read the same code for an unknown run from every command.
    const graphed = await cli.run(["graph", "run-nope", "--json"]);
    expect([graphed.code, (JSON.parse(graphed.stderr) as { error: { code: string } }).error.code]).toEqual([2, "NOT_FOUND"]);
  });

  it("events --after says when the events right after that number are gone (deleted with their runs)", async () => {
    const env = { PITWALL_STORE: `sqlite:${join(cli.dir, "gone-events.db")}` };
    const { runId: first } = await cli.json<{ runId: string }>(["start", workflowOf("task-queue")], env);
    expect((await cli.run(["cancel", first, "--reason", "not needed"], env)).code).toBe(0);
    const { runId: second } = await cli.json<{ runId: string }>(["start", workflowOf("task-queue")], env);
    const secondSeq = (JSON.parse((await cli.run(["events", second, "--json"], env)).stdout.split("\n")[0]!) as { seq: number }).seq;
    expect(secondSeq).toBeGreaterThan(2);
    expect((await cli.run(["delete", first], env)).code).toBe(0);
    expect((await cli.run(["events", "--after", "0"], env)).stderr).toBe("");
    const resumed = await cli.run(["events", "--after", "1", "--json"], env);
    expect(resumed.stderr).toBe(`events #2 to #${secondSeq - 1} are no longer in the store (trimmed by its retention, or deleted with their runs): going on from #${secondSeq}\n`);
  });

  it("runs says when --limit left runs out", async () => {
    const env = { PITWALL_STORE: `sqlite:${join(cli.dir, "many.db")}` };
    for (let i = 0; i < 3; i++) await cli.json(["start", workflowOf("task-queue")], env);
    const cut = await cli.run(["runs", "--limit", "2", "--json"], env);
    expect((JSON.parse(cut.stdout) as unknown[]).length).toBe(2);
    expect(cut.stderr).toBe("showing the 2 most recently updated; there are more (--limit N shows more)\n");
    expect((await cli.run(["runs", "--limit", "3", "--json"], env)).stderr).toBe("");
  });

  it("runs and show say a queued run sleeps on a timer, and when it wakes", async () => {
    const file = join(cli.dir, "nap.json");
    writeFileSync(file, JSON.stringify({ name: "nap", state: {}, start: "nap", nodes: { nap: { kind: "wait", seconds: 3600, next: "END" } } }));
    const { runId } = await cli.json<{ runId: string }>(["start", file]);
    expect((await cli.run(["worker", "--once"])).code).toBe(0);
    const listed = await cli.run(["runs", "--workflow", "nap"]);
    expect(listed.stdout).toMatch(new RegExp(`^${runId} +nap +[0-9a-f]{8} +queued \\(timer, wakes in (59m|1h)\\) `, "m"));
    expect((await cli.run(["show", runId])).stdout).toMatch(/^status +queued \(timer, wakes in (59m|1h)\)$/m);
    const kill = await cli.run(["kill", runId]);
    expect([kill.code, kill.stderr]).toEqual([3, expect.stringMatching(new RegExp(`^pitwall kill: run ${runId} has no running task \\(nap sleeps on a timer until \\S+Z; cancel the run to stop it\\)\n$`))]);
  });
});
