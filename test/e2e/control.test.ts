import { readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { openStore, type EventRecord, type InterruptRecord, type RunRecord, type TaskRecord } from "../../engine/index.js";
import { actionsOf, cliHarness, workflowOf } from "../support/cli.js";
import { until } from "../support/engine.js";

type Shown = RunRecord & { tasks: TaskRecord[]; interrupts: InterruptRecord[] };

describe("operator commands on live runs, across processes", () => {
  const cli = cliHarness();

  it("kill aborts a running task in a worker process; retry with a patch runs it again; an ended run cannot be canceled", async () => {
    const { runId } = await cli.json<{ runId: string }>(["start", workflowOf("long-compute"), "--input", '{"limit": 50000000000}']);
    const worker = cli.spawn(["worker", "--actions", actionsOf("long-compute")]);
    const follow = cli.spawn(["events", runId, "--follow", "--json"]);
    await follow.waitForLine((l) => l.includes('"node.progress"'));

    const killed = await cli.run(["kill", runId, "sieve", "--reason", "too slow", "--as", "bob"]);
    expect(killed.code).toBe(0);
    expect(killed.stdout).toContain("killing sieve");
    await follow.waitForLine((l) => l.includes('"run.paused"'));
    const paused = await cli.json<Shown>(["show", runId]);
    expect([paused.status, paused.reason]).toEqual(["paused", "killed"]);
    expect(paused.tasks.find((t) => t.node === "sieve")!.status).toBe("canceled");

    const retried = await cli.json<{ willRun: string[]; checkpointId: string }>(["retry", runId, "sieve", "--set", "limit=2000000"]);
    expect(retried).toMatchObject({ willRun: ["sieve"], checkpointId: `${runId}:1` });
    expect((await follow.exited).code).toBe(0);
    const events = follow.stdout.trim().split("\n").map((l) => JSON.parse(l) as EventRecord);
    expect(events.at(-1)!.type).toBe("run.succeeded");
    expect(events.find((e) => e.type === "operator.requested" && (e.payload as { command: string }).command === "kill")!.actor).toBe("operator:bob");
    expect(await cli.json(["state", runId])).toMatchObject({ limit: 2_000_000, stats: { primes: 148_933 } });

    const kill = await cli.run(["kill", runId, "--reason", "late"]);
    expect([kill.code, kill.stderr]).toEqual([3, `pitwall kill: run ${runId} has ended (succeeded)\n`]);
    const [noReason, ended] = await Promise.all([cli.run(["cancel", runId]), cli.run(["cancel", runId, "--reason", "late"])]);
    expect([noReason.code, noReason.stderr]).toEqual([2, "pitwall cancel: cancel needs --reason TEXT\n"]);
    expect([ended.code, ended.stderr]).toEqual([3, `pitwall cancel: run ${runId} has already ended (succeeded)\n`]);

    worker.child.kill("SIGINT");
    const stopped = await worker.exited;
    expect(stopped.code).toBe(0);
    expect(stopped.stderr).toContain("stopping");
  });

  it("show and start --wait say when a run waits on a child run that paused for an operator", async () => {
    const actions = join(cli.dir, "nested-actions.mjs");
    const file = join(cli.dir, "nested.json");
    writeFileSync(actions, "export default { note: () => ({ notes: ['done'] }) };\n");
    const child = { name: "nested-child", state: { notes: { type: "array", items: { type: "string" }, reducer: "append", default: [] } }, start: "note", interruptBefore: ["note"], nodes: { note: { action: "note" } } };
    writeFileSync(file, JSON.stringify({ name: "nested-parent", state: child.state, start: "sub", nodes: { sub: { kind: "subgraph", workflow: child } } }));
    // start --wait settles on it too, and says what the run waits for.
    const worker = cli.spawn(["worker", "--actions", actions]);
    const [waited, waitedText] = await Promise.all([cli.run(["start", file, "--wait", "--json"]), cli.run(["start", file, "--wait"])]);
    worker.child.kill("SIGINT");
    await worker.exited;
    const settled = JSON.parse(waited.stdout) as { runId: string; status: string; waitingFor: { runId: string; status: string; reason: string } };
    expect([waited.code, settled.status, settled.waitingFor]).toEqual([0, "queued", { runId: expect.stringMatching(/^run-/), status: "paused", reason: "interrupt" }]);
    expect(waitedText.stderr).toMatch(/^run run-\S+ queued, waiting for its sub-workflow run run-\S+, paused \(interrupt\): answer its pending interrupts \(pitwall interrupts --run run-\S+\)\n$/);
    const shown = await cli.run(["show", settled.runId]);
    expect(shown.stdout).toMatch(/^waiting +for child run (run-\S+), paused \(interrupt\): answer its pending interrupts \(pitwall interrupts --run \1\)$/m);
  });

  it("show and start --wait say to retry or cancel a child run that paused on a failure (it has nothing to answer)", async () => {
    const actions = join(cli.dir, "failing-child-actions.mjs");
    const file = join(cli.dir, "failing-parent.json");
    writeFileSync(actions, "export default { charge: () => { throw new Error('the card was declined'); } };\n");
    const child = { name: "failing-child", state: { n: { type: "number", default: 0 } }, start: "charge", nodes: { charge: { action: "charge", retry: { maxAttempts: 1 } } } };
    writeFileSync(file, JSON.stringify({ name: "failing-parent", state: child.state, start: "sub", nodes: { sub: { kind: "subgraph", workflow: child } } }));
    const worker = cli.spawn(["worker", "--actions", actions]);
    const waited = await cli.run(["start", file, "--wait"]);
    worker.child.kill("SIGINT");
    await worker.exited;
    // Held up by a failure: a script must not go on as if the run were at work.
    expect(waited.code).toBe(1);
    const parentId = waited.stdout.trim();
    const shown = await cli.run(["show", parentId]);
    const childId = /^waiting +for child run (run-\S+),/m.exec(shown.stdout)![1]!;
    const what = `paused (retries-exhausted): node "charge" failed after 1 attempt: the card was declined; once the cause is fixed, retry it (pitwall retry ${childId} charge) or cancel it (pitwall cancel ${childId} --reason TEXT)`;
    expect(waited.stderr).toBe(`run ${parentId} queued, waiting for its sub-workflow run ${childId}, ${what}\n`);
    expect(shown.stdout).toContain(`waiting   for child run ${childId}, ${what}\n`);
    expect((await cli.run(["interrupts", "--run", childId])).stderr).toBe("no pending interrupts\n");
  });

  it("fork of a sub-workflow's run, onto a fixed version, says that its parent still waits on the run forked, not on the fork", async () => {
    const actions = join(cli.dir, "declined-actions.mjs");
    const file = join(cli.dir, "declined-parent.json");
    const fixed = join(cli.dir, "declined-child-v2.json");
    writeFileSync(actions, "export default { charge: () => { throw new Error('the card was declined'); } };\n");
    const child = { name: "declined-child", state: { n: { type: "number", default: 0 } }, start: "charge", nodes: { charge: { action: "charge", retry: { maxAttempts: 1 } } } };
    writeFileSync(file, JSON.stringify({ name: "declined-parent", state: child.state, start: "sub", nodes: { sub: { kind: "subgraph", workflow: child } } }));
    writeFileSync(fixed, JSON.stringify({ ...child, nodes: { charge: { action: "charge", retry: { maxAttempts: 3 } } } }));
    const worker = cli.spawn(["worker", "--actions", actions]);
    const parentId = (await cli.run(["start", file, "--wait"])).stdout.trim();
    worker.child.kill("SIGINT");
    await worker.exited;
    const childId = /^waiting +for child run (run-\S+),/m.exec((await cli.run(["show", parentId])).stdout)![1]!;

    const forked = await cli.run(["fork", childId, "0", "--workflow", fixed]);
    expect(forked.code, forked.stderr).toBe(0);
    const forkId = forked.stdout.trim();
    const note = `note: run ${childId} is a sub-workflow run of run ${parentId} (node sub): the fork is a run of its own; run ${parentId} still waits on run ${childId}, not on the fork: to have it go on, retry or cancel run ${childId}, or fork run ${parentId}`;
    expect(forked.stderr).toMatch(new RegExp(`^forked from checkpoint ${childId}:0 as run ${forkId} on version [0-9a-f]{12}; ${escape(note)}\n$`));
    const json = await cli.json<{ effect: string; runId: string }>(["fork", childId, "0", "--json"]);
    expect(json.effect).toBe(`forked from checkpoint ${childId}:0 as run ${json.runId}; ${note}`);
    expect(await cli.json<Shown>(["show", forkId])).toMatchObject({ parentRunId: null, forkOf: { runId: childId } });

    // Once the parent has ended, it waits on nothing: the note says the fork is not its.
    expect((await cli.run(["cancel", parentId, "--reason", "declined"])).code).toBe(0);
    const after = await cli.json<{ effect: string; runId: string }>(["fork", childId, "0", "--json"]);
    expect(after.effect).toBe(`forked from checkpoint ${childId}:0 as run ${after.runId}; note: run ${childId} is a sub-workflow run of run ${parentId} (node sub): the fork is a run of its own, which run ${parentId} does not wait on`);
  });

  it("break pauses before a node; fork starts a new run from a checkpoint; unbreak and cancel", async () => {
    const { runId } = await cli.json<{ runId: string }>(["start", workflowOf("task-queue")]);
    const [bad, absent] = await Promise.all([cli.run(["break", runId, "nowhere"]), cli.run(["unbreak", runId, "join"])]);
    const set = await cli.run(["break", runId, "join", "--reason", "inspect before the join"]);
    expect([bad.code, bad.stderr]).toEqual([2, 'pitwall break: workflow task-queue has no node "nowhere"\n']);
    // Removing a breakpoint that is not there, or setting one twice, is done already: exit 0, said so.
    expect([absent.code, absent.stdout]).toEqual([0, `run ${runId} has no breakpoint on "join"; nothing to remove\n`]);
    expect(set.code).toBe(0);
    const again = await cli.run(["break", runId, "join"]);
    expect([again.code, again.stdout]).toEqual([0, 'breakpoint before "join" was set already\n']);

    await cli.run(["worker", "--once", "--actions", actionsOf("task-queue")]);
    const paused = await cli.json<Shown>(["show", runId]);
    expect([paused.status, paused.reason, paused.breakpoints]).toEqual(["paused", "breakpoint", ["join"]]);
    expect(paused.interrupts).toEqual([expect.objectContaining({ kind: "breakpoint", node: "join" })]);
    const checkpointsBefore = await cli.json<unknown[]>(["checkpoints", runId]);

    const fork = await cli.json<{ runId: string }>(["fork", runId, "2", "--set", "objective=Cargo bikes in Lisbon", "--reason", "what if"]);
    expect(fork.runId).not.toBe(runId);
    // Its own log says where it came from, why, and what the patch changed, old and new.
    const forkLog = (await cli.run(["events", fork.runId])).stdout;
    expect(forkLog).toMatch(new RegExp(`run\\.created .* forked from ${runId} at ${runId}:2 \\(what if\\)`));
    expect(forkLog).toMatch(/state\.edited .*~ \$\.objective: "Write a short market brief.* → "Cargo bikes in Lisbon/);
    const forkCheckpoints = await cli.run(["checkpoints", fork.runId]);
    expect(forkCheckpoints.stdout).toMatch(/^N +CHECKPOINT +STEP +SOURCE +ACTOR +NODES +NEXT +SIZE +AGE$/m);
    expect(forkCheckpoints.stderr).toBe(`run ${fork.runId} was forked from checkpoint ${runId}:2 of run ${runId} (pitwall checkpoints ${runId})\n`);
    // Its first checkpoint compared with where it came from: the source run's checkpoint, named as such.
    const forkDiff = (await cli.run(["diff", fork.runId, "0"])).stdout.split("\n");
    expect(forkDiff[0]).toMatch(new RegExp(`^run ${fork.runId}: checkpoint ${runId}:2 \\(loop, step \\d+, worker:\\S+\\) → 0 \\(fork, step \\d+, operator:\\S+\\)$`));
    expect(forkDiff[1]).toMatch(/^~ \$\.objective: "Write a short market brief.* → "Cargo bikes in Lisbon"$/);
    // Or with any checkpoint of another run, named by its whole id; a number is the run's own.
    expect((await cli.run(["diff", fork.runId, `${runId}:2`, "0"])).stdout.split("\n")).toEqual(forkDiff);
    expect((await cli.run(["diff", fork.runId, "0", `${runId}:2`])).stdout).toMatch(/^run \S+: checkpoint 0 \(fork, .*\) → run-\S+:2 \(loop, /);
    await cli.run(["worker", "--once", "--actions", actionsOf("task-queue")]);
    const forked = await cli.json<Shown>(["show", fork.runId]);
    expect(forked).toMatchObject({ status: "succeeded", forkOf: { runId, checkpointId: `${runId}:2` } });
    expect(await cli.json(["state", fork.runId])).toMatchObject({ objective: "Cargo bikes in Lisbon", done: true });
    expect(await cli.json(["checkpoints", runId])).toEqual(checkpointsBefore);
    // A fork may stop elsewhere than its source: lists on the command line replace the source's.
    const reviewed = await cli.json<{ runId: string }>(["fork", runId, "2", "--interrupt-before", "join"]);
    await cli.run(["worker", "--once", "--actions", actionsOf("task-queue")]);
    expect((await cli.json<Shown>(["show", reviewed.runId])).interrupts).toEqual([expect.objectContaining({ kind: "before", node: "join" })]);
    // A fork given no lists stops where its source would; --no-interrupts alone stops nowhere.
    const [kept, free] = await Promise.all([cli.json<{ runId: string }>(["fork", reviewed.runId, "2"]), cli.json<{ runId: string }>(["fork", reviewed.runId, "2", "--no-interrupts"])]);
    await cli.run(["worker", "--once", "--actions", actionsOf("task-queue")]);
    expect((await cli.json<Shown>(["show", kept.runId])).interrupts).toEqual([expect.objectContaining({ kind: "before", node: "join" })]);
    expect((await cli.json<Shown>(["show", free.runId])).status).toBe("succeeded");
    const both = await cli.run(["fork", runId, "2", "--no-interrupts", "--interrupt-after", "join"]);
    expect([both.code, both.stderr]).toEqual([2, "pitwall fork: --no-interrupts takes neither --interrupt-before nor --interrupt-after\n"]);
    const unknown = await cli.run(["fork", runId, "2", "--interrupt-after", "nowhere"]);
    expect([unknown.code, unknown.stderr]).toEqual([2, 'pitwall fork: workflow task-queue has no node "nowhere" to interrupt at\n']);

    expect((await cli.run(["unbreak", runId, "join"])).code).toBe(0);
    expect((await cli.json<Shown>(["show", runId])).breakpoints).toEqual([]);
    const canceled = await cli.run(["cancel", runId, "--reason", "enough"]);
    expect([canceled.code, canceled.stdout]).toEqual([0, `run ${runId} canceled\n`]);
    expect((await cli.json<Shown>(["show", runId])).status).toBe("canceled");
    // About 25 CLI processes one after another: longer than the usual guard on a loaded machine.
  }, 90_000);

  it("start --wait waits for a worker in another process to end or pause the run, or gives up after --timeout", async () => {
    const worker = cli.spawn(["worker", "--actions", actionsOf("task-queue"), "--actions", actionsOf("sensitive-operation"), "--id", "w-wait"]);
    const [done, paused, stuck] = await Promise.all([
      cli.json<{ runId: string; status: string }>(["start", workflowOf("task-queue"), "--wait"]),
      cli.json<{ runId: string; status: string; reason: string }>(["start", workflowOf("sensitive-operation"), "--wait"]),
      cli.run(["start", workflowOf("task-queue"), "--input", '{"failures":3}', "--wait", "--json"]),
    ]);
    expect(done).toMatchObject({ status: "succeeded", error: null });
    expect(paused).toMatchObject({ status: "paused", reason: "interrupt" });
    // Paused on a failure is a failure for a script (`start --wait && deploy` must stop there).
    expect(stuck.code).toBe(1);
    expect(JSON.parse(stuck.stdout.trim().split("\n").at(-1)!)).toMatchObject({ status: "paused", reason: "retries-exhausted", error: { code: "TASK_FAILED" } });
    // `ps` names the process by its command and worker id (`pkill -f "pitwall worker w-wait$"` finds this one).
    expect(readFileSync(`/proc/${worker.child.pid}/cmdline`, "utf8").replace(/\0/g, " ").trim()).toBe("pitwall worker w-wait");
    worker.child.kill("SIGINT");
    await worker.exited;

    const waited = await cli.run(["start", workflowOf("task-queue"), "--wait", "--timeout", "0.5"]);
    expect(waited.code).toBe(4);
    expect(waited.stderr).toMatch(/^pitwall start: run \S+ did not settle within 0.5 s \(it is queued; it goes on without this wait\)\n$/);
  });

  it("start --wait --until end waits through a pause for a person, says so once, and exits as the run ends", async () => {
    const worker = cli.spawn(["worker", "--actions", actionsOf("sensitive-operation")]);
    const waiting = cli.spawn(["start", workflowOf("sensitive-operation"), "--wait", "--until", "end"]);
    const runId = (await waiting.waitForLine((l) => l.startsWith("run-"))).trim();
    const [ask] = await until(async () => {
      const pending = (await cli.json<InterruptRecord[]>(["interrupts", "--run", runId])).filter((i) => i.status === "pending");
      return pending.length > 0 ? pending : undefined;
    }, 20_000, "the run's interrupt");
    await until(() => waiting.stderr.includes("waiting for it to end"), 10_000, "the note that start waits on");
    expect(waiting.stderr).toMatch(new RegExp(`^run ${runId} paused \\(interrupt\\)[^\\n]*; waiting for it to end\\n$`));
    expect((await cli.run(["resolve", ask!.id, "--reject", "--reason", "not today"])).code).toBe(0);
    const ended = await waiting.exited;
    worker.child.kill("SIGINT");
    await worker.exited;
    const shown = await cli.json<{ status: string }>(["show", runId]);
    expect([ended.code, ended.stderr.trim().split("\n").at(-1)]).toEqual([shown.status === "succeeded" ? 0 : 1, expect.stringMatching(new RegExp(`^run ${runId} ${shown.status}`))]);

    const refused = await cli.run(["start", workflowOf("task-queue"), "--until", "end"]);
    expect([refused.code, refused.stderr]).toEqual([2, "pitwall start: --until goes with --wait\n"]);
    const unknown = await cli.run(["start", workflowOf("task-queue"), "--wait", "--until", "done"]);
    expect([unknown.code, unknown.stderr]).toEqual([2, "pitwall start: --until done: give settled (the default: until it ends or pauses) or end\n"]);
  });

  it("events --follow prints, live, events that other processes commit", async () => {
    const backlog = await cli.run(["events", "--json"]);
    const lastSeq = backlog.stdout.trim() ? (JSON.parse(backlog.stdout.trim().split("\n").at(-1)!) as EventRecord).seq : 0;
    const follow = cli.spawn(["events", "--follow", "--after", String(lastSeq)]);

    const runId = (await cli.run(["start", workflowOf("task-queue")])).stdout.trim();
    await follow.waitForLine((l) => l.includes(runId) && l.includes("run.created"));
    await cli.run(["worker", "--once", "--actions", actionsOf("task-queue")]);
    await follow.waitForLine((l) => l.includes(runId) && l.includes("run.succeeded"));
    expect(follow.stdout).toMatch(new RegExp(`#\\d+ +\\S+ +${runId} +run\\.claimed +worker:`));

    follow.child.kill("SIGINT");
    expect((await follow.exited).code).toBe(0);
    const seqs = follow.stdout.trim().split("\n").map((l) => Number(/^#(\d+)/.exec(l)![1]));
    expect(seqs[0]).toBe(lastSeq + 1);
    expect(seqs).toEqual(seqs.map((_, i) => lastSeq + 1 + i));
  });

  it("a worker whose store file is deleted under it exits non-zero saying so, instead of polling a store nobody sees", async () => {
    const file = join(cli.dir, "deleted-under-worker.db");
    const worker = cli.spawn(["worker"], { PITWALL_STORE: `sqlite:${file}` });
    await until(() => worker.stderr.includes("Ctrl-C to stop"), 15_000, "the worker started");
    for (const suffix of ["", "-wal", "-shm"]) rmSync(file + suffix, { force: true });
    const exited = await worker.exited;
    expect(exited.code).toBe(1);
    expect(exited.stderr.trim().split("\n").at(-1)).toBe(
      `pitwall worker: store ${file} was deleted while this process had it open: what it reads and writes is no longer that store; restart this process`,
    );
  });

  it("worker --once says which running runs other workers hold, and which orphaned runs it cannot run, instead of ending quietly", async () => {
    const file = join(cli.dir, "held.db");
    const env = { PITWALL_STORE: `sqlite:${file}` };
    const { runId } = await cli.json<{ runId: string }>(["start", workflowOf("long-compute")], env);
    const store = await openStore(`sqlite:${file}`);
    const claimedAt = Date.now();
    try {
      await store.claimRun({ owner: "gone-worker", leaseMs: 60_000, runId });
    } finally {
      await store.close();
    }
    const once = await cli.run(["worker", "--once", "--actions", actionsOf("long-compute")], env);
    const saidBy = Date.now();
    expect(once.code).toBe(0);
    const held = new RegExp(`^\\S+Z INFO  1 running run held by other workers \\(${runId} by gone-worker\\): if those are gone, their leases run out within (\\d+) s and a worker then takes them over$`, "m").exec(once.stderr);
    expect(held, once.stderr).not.toBeNull();
    // The countdown is what is left of the 60 s lease when the worker looked: however slow this machine is.
    expect(Number(held![1])).toBeLessThanOrEqual(60);
    expect(Number(held![1])).toBeGreaterThanOrEqual(Math.ceil((claimedAt + 60_000 - saidBy) / 1000));
    // runs --orphaned lists those whose lease ran out: none yet, then this one.
    expect((await cli.json<RunRecord[]>(["runs", "--orphaned"], env)).map((r) => r.id)).toEqual([]);
    const store2 = await openStore(`sqlite:${file}`);
    try {
      await store2.commit({ id: "c-expire", runId, fence: (await store2.getRun(runId))!.fence, run: { leaseUntil: Date.now() - 1 } });
    } finally {
      await store2.close();
    }
    expect((await cli.json<RunRecord[]>(["runs", "--orphaned"], env)).map((r) => r.id)).toEqual([runId]);
    // A worker that cannot run it (not its actions) names it rather than ending quietly.
    writeFileSync(join(cli.dir, "other.mjs"), "export default { other: () => ({}) };\n");
    const unable = await cli.run(["worker", "--once", "--actions", join(cli.dir, "other.mjs")], env);
    expect([unable.code, unable.stderr]).toEqual([0, expect.stringMatching(/^\S+Z WARN  1 running run whose worker is gone \(lease ran out\) of long-compute \(version \w+\) left for a worker that can run it: .+$/m)]);
    const mixed = await cli.run(["runs", "--orphaned", "--status", "queued"], env);
    expect([mixed.code, mixed.stderr]).toEqual([2, "pitwall runs: --orphaned lists running runs only: leave out --status, or give --status running\n"]);
  });

  it("a worker stopped with Ctrl-C exits once its runs are released, also when a node ignores its abort signal", async () => {
    const actions = join(cli.dir, "stubborn-actions.mjs");
    const file = join(cli.dir, "stubborn.json");
    writeFileSync(actions, "export default { stubborn: () => new Promise((resolve) => setTimeout(() => resolve({}), 30_000)) };\n");
    writeFileSync(file, JSON.stringify({ name: "stubborn", state: {}, start: "s", nodes: { s: { action: "stubborn" } } }));
    const env = { PITWALL_STORE: `sqlite:${join(cli.dir, "stubborn.db")}` };
    const { runId } = await cli.json<{ runId: string }>(["start", file], env);
    const worker = cli.spawn(["worker", "--actions", actions, "--drain-timeout", "1"], env);
    await until(async () => (await cli.json<RunRecord>(["show", runId], env)).status === "running", 15_000, "the node running");
    const stoppedAt = Date.now();
    worker.child.kill("SIGINT");
    const exited = await worker.exited;
    // The drain (1 s) and the grace period (5 s), not the node's 30 s.
    expect(Date.now() - stoppedAt).toBeLessThan(15_000);
    expect(exited.code).toBe(0);
    expect((await cli.json<RunRecord>(["show", runId], env)).status).toBe("queued");
  }, 30_000);
});

function escape(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
}
