import { describe, expect, it } from "vitest";
import { z } from "zod";
import { ConflictError, NotFoundError, Operator, SKIPPED, ValidationError, editPatch, workflow, type CompiledWorkflow, type Engine } from "../../engine/index.js";
import { newId } from "../../engine/ids.js";
import { newTaskRecord } from "../../engine/runtime/transitions.js";
import { requested } from "../../engine/operator/command-records.js";
import { pendingCommand } from "../support/records.js";
import { engineHarness, sleep, until } from "../support/engine.js";
import { storeFactories } from "../support/stores.js";

const state = z.object({ log: z.array(z.string()).default([]), n: z.number().default(0), note: z.string().default("") });

/**
 * A worker that claims a run, marks nodes of the step running (the first step's by default) and
 * their durable `calls`, and dies (its lease runs out).
 */
async function dieWhileRunning(engine: Engine, runId: string, nodes: string | readonly string[], leaseMs: number, step = 1, calls: string[] = []): Promise<void> {
  const claim = (await engine.store.claimRun({ owner: "dead", leaseMs, runId }))!;
  const startedAt = Date.now();
  const tasks = [nodes].flat().flatMap((node) => {
    const id = `${runId}:${step}:${node}`;
    return [
      newTaskRecord({ id, runId, step, node, index: null, createdAt: startedAt }),
      ...calls.map((call) => newTaskRecord({ id: `${id}/${call}`, runId, step, node, index: null, parent: id, call, createdAt: startedAt + 1 })),
    ];
  }).map((task) => ({ ...task, status: "running" as const, worker: "dead", startedAt, attempts: [{ n: 1, worker: "dead", startedAt, endedAt: null, outcome: null }] }));
  await engine.store.commit({ id: newId("c"), runId, fence: claim.fence, tasks });
}

/** What a worker says when it takes over a run from the worker `dieWhileRunning` made (`again`: its nodes that will run again). */
function tookOverFromDead(runId: string, again = "") {
  return { level: "warn", kind: "took-over", runId, from: "dead", message: `took over run ${runId} from worker dead (lease expired)${again}` };
}

async function pendingOf(engine: Engine, runId: string) {
  return engine.store.listInterrupts({ runId, status: "pending" });
}

describe.each(storeFactories)("operator control ($name store)", (factory) => {
  const harness = engineHarness(factory);

  /**
   * Starts a run of `wf` whose worker claims it, starts `node` and dies without a word; once its
   * lease has run out, a new worker (`survivor`) takes the run over.
   */
  async function lostWhileRunning(wf: CompiledWorkflow, node: string, leaseMs: number) {
    const engine = await harness.engine([wf], { worker: false });
    const run = await engine.start(wf);
    await dieWhileRunning(engine, run.id, node, leaseMs);
    await sleep(leaseMs + 50);
    const survivor = await harness.engine([wf], { store: engine.store });
    return { engine, run, survivor };
  }

  it("a kill left pending for a worker that died (its sender gone too) stops the node when another worker takes the run over: not run again", async () => {
    let ran = 0;
    const wf = workflow("kill-left", { state })
      .node("s1", () => {
        ran++;
        return {};
      }, { next: "END" })
      .compile();
    const engine = await harness.engine([wf], { worker: false });
    const run = await engine.start(wf);
    await dieWhileRunning(engine, run.id, "s1", 300);
    // Recorded for the run's worker while it held the run; the process that sent it stopped at once.
    const command = pendingCommand(run.id, "kill", { actor: "operator:carol", args: { taskId: `${run.id}:1:s1` } });
    await engine.store.submitCommand(command, requested(command, []));
    await sleep(350);
    await harness.engine([wf], { store: engine.store });
    expect(await run.wait({ timeoutMs: 5_000 })).toMatchObject({ status: "paused", reason: "killed" });
    expect(ran).toBe(0);
    expect(await engine.store.getCommand(command.id)).toMatchObject({ status: "accepted", result: { effect: "killed s1 (its worker dead was lost while running it)" } });
  });

  it("kills a node that ignores its signal: abandoned after the grace period, run paused, late result discarded", async () => {
    let lateReturned = false;
    const wf = workflow("kill-me", { state, reducers: { log: "append" } })
      .node("stubborn", async () => {
        await sleep(800);
        lateReturned = true;
        return { log: ["late"] };
      }, { next: "END" })
      .compile();
    const engine = await harness.engine([wf]);
    const run = await engine.start(wf);
    await until(async () => (await engine.store.listTasks(run.id))[0]?.status === "running", 5000, "task running");
    const outcome = await engine.operator("ann").kill(run.id, { task: "stubborn", reason: "hung" });
    expect(outcome.effect).toContain("killing stubborn");
    const end = await run.wait();
    expect(end).toMatchObject({ status: "paused", reason: "killed" });
    const [task] = await engine.store.listTasks(run.id);
    expect(task).toMatchObject({ status: "canceled" });
    expect(task!.attempts[0]!.endedAt! - task!.attempts[0]!.startedAt).toBeLessThan(700);
    await sleep(900);
    expect(lateReturned).toBe(true);
    expect((await run.state()).log).toEqual([]);
    expect(harness.notices.of("abandoned")).toEqual([
      {
        level: "warn",
        kind: "abandoned",
        runId: run.id,
        node: "stubborn",
        message: `run ${run.id}: node stubborn (task ${run.id}:1:stubborn) ignored its abort signal (a kill) and was abandoned after the 0.2 s grace; it may still be running in this process, and what it returns is discarded`,
      },
    ]);
    const audit = await engine.store.readEvents({ runId: run.id, types: ["operator.requested", "operator.accepted", "task.canceled"] });
    expect(audit.map((e) => [e.type, e.actor])).toEqual([
      ["operator.requested", "operator:ann"],
      ["operator.accepted", "operator:ann"],
      ["task.canceled", expect.stringMatching(/^worker:/)],
    ]);
    expect(audit[0]!.payload).toMatchObject({ command: "kill", reason: "hung" });
  });

  it("retries a failed node with a state patch; the retry plan names the nodes that run again", async () => {
    const wf = workflow("fix-and-retry", { state, reducers: { log: "append" } })
      .node("check", (s) => {
        if (!s.note) throw new Error("note is missing");
        return { log: [`checked ${s.note}`] };
      }, { next: "END" })
      .compile();
    const engine = await harness.engine([wf]);
    const run = await engine.start(wf);
    expect(await run.wait()).toMatchObject({ status: "paused", reason: "retries-exhausted" });
    const outcome = await engine.operator("ann").retry(run.id, "check", { patch: { note: "added" } });
    expect(outcome.result.willRun).toEqual(["check"]);
    expect((await run.wait()).status).toBe("succeeded");
    expect((await run.state()).log).toEqual(["checked added"]);
    const [task] = await engine.store.listTasks(run.id);
    expect(task!.attempts.map((a) => a.outcome)).toEqual(["failed", "succeeded"]);
  });

  it("gives an operator's retry a fresh retry budget after retries were exhausted", async () => {
    let calls = 0;
    const wf = workflow("budget", { state })
      .node("flaky", () => {
        calls++;
        if (calls < 4) throw new Error(`fail ${calls}`);
        return { n: calls };
      }, { retry: { maxAttempts: 2, backoffMs: 1 }, next: "END" })
      .compile();
    const engine = await harness.engine([wf]);
    const run = await engine.start(wf);
    expect(await run.wait()).toMatchObject({ status: "paused", reason: "retries-exhausted" });
    expect(calls).toBe(2);
    await engine.operator("ann").retry(run.id, "flaky");
    expect((await run.wait()).status).toBe("succeeded");
    expect(calls).toBe(4);
  });

  it("says when a command waits on the worker that holds the run (a dead one holds it until its lease runs out)", async () => {
    const wf = workflow("held", { state }).node("slow", () => ({}), { next: "END" }).compile();
    const engine = await harness.engine([wf], { worker: false });
    const run = await engine.start(wf);
    await dieWhileRunning(engine, run.id, "slow", 2_000);
    const waits: { owner: string; leaseUntil: number | null; worker: string }[] = [];
    const op = new Operator(engine.store, { actor: "operator:ann", onWaiting: ({ owner, leaseUntil, worker }) => waits.push({ owner, leaseUntil, worker }) });
    const outcome = await op.kill(run.id);
    expect(outcome.effect).toMatch(/cancel|kill/);
    // Told at once that it waits; then, its lease not renewed when a live worker's would have been, that it may be gone.
    expect(waits.at(-1)).toEqual({ owner: "dead", leaseUntil: expect.any(Number), worker: "not-renewing" });
    expect(waits.map((w) => w.worker)).not.toContain("alive");
    // Answered at once, it says nothing.
    const quiet: unknown[] = [];
    await new Operator(engine.store, { onWaiting: (w) => quiet.push(w) }).breakpoint(run.id, "slow");
    expect(quiet).toEqual([]);
  });

  it("checks an edit against the state's formats as a node's write is checked (an email address, a uuid, a pattern)", async () => {
    const formatted = z.object({ mail: z.email().default("a@b.co"), id: z.uuid().optional(), code: z.string().regex(/^[A-Z]{3}$/).default("ABC") });
    const wf = workflow("formats", { state: formatted }).node("a", () => ({}), { next: "END" }).compile();
    const engine = await harness.engine([wf], { worker: false });
    const run = await engine.start(wf, {}, { interruptBefore: ["a"] });
    const op = new Operator(engine.store, { actor: "ann" });
    await expect(op.updateState(run.id, { mail: "not-an-email" })).rejects.toThrow(/\$\.mail: "not-an-email" does not match the pattern \/\^/);
    await expect(op.updateState(run.id, { id: "nope" })).rejects.toThrow(/\$\.id: "nope" does not match the pattern/);
    await expect(op.updateState(run.id, { code: "abc" })).rejects.toThrow('edited state is invalid at $.code: "abc" does not match the pattern /^[A-Z]{3}$/');
    await op.updateState(run.id, { mail: "b@c.org", id: "123e4567-e89b-12d3-a456-426614174000", code: "XYZ" });
    expect(await engine.run(run.id).state()).toEqual({ mail: "b@c.org", id: "123e4567-e89b-12d3-a456-426614174000", code: "XYZ" });
  });

  it("a node its dead worker left running is retried (at-most-once too), killed or its run edited, saying the worker was lost", async () => {
    let runs = 0;
    const wf = workflow("orphan", { state })
      .node("charge", (s) => (runs++, { n: s.n + 1 }), { next: "END", atMostOnce: true })
      .compile();
    const engine = await harness.engine([wf], { worker: false });
    const op = engine.operator("ann");
    const lost = async (calls: string[] = []) => {
      const run = await engine.start(wf);
      await dieWhileRunning(engine, run.id, "charge", 50, 1, calls);
      await sleep(80);
      return run;
    };

    // Named once, however many durable calls of it were running too.
    const edited = await lost(["lookup", "pay"]);
    await expect(op.updateState(edited.id, { n: 5 })).rejects.toThrow(
      new ConflictError(
        `run ${edited.id} is still running on dead, whose lease ran out (the worker is gone or stalled) with charge running: retry it with the edit, kill it to pause the run and edit then, or start a worker to take the run over`,
      ),
    );
    const retried = await op.retry(edited.id, "charge", { patch: { n: 5 } });
    expect(retried.effect).toBe(`task ${edited.id}:1:charge will run again (step 1: charge); its worker dead was lost while running it`);
    const [task] = await engine.store.listTasks(edited.id, { step: 1 });
    expect(task).toMatchObject({ status: "pending", attempts: [{ outcome: "failed", error: "worker lost", code: "WORKER_LOST" }] });

    const killed = await lost();
    expect((await op.kill(killed.id)).effect).toBe("killed charge (its worker dead was lost while running it)");
    expect((await engine.store.listTasks(killed.id, { step: 1 }))[0]!.attempts).toMatchObject([{ outcome: "canceled", error: "worker lost; killed by operator", code: "WORKER_LOST" }]);
    await op.updateState(killed.id, { n: 7 });
    await op.retry(killed.id, "charge");

    const worker = await harness.engine([wf], { store: engine.store });
    expect(await worker.run(edited.id).wait()).toMatchObject({ status: "succeeded" });
    expect(await worker.run(killed.id).wait()).toMatchObject({ status: "succeeded" });
    expect(await worker.run(edited.id).state()).toMatchObject({ n: 6 });
    expect(await worker.run(killed.id).state()).toMatchObject({ n: 8 });
    expect(runs).toBe(2);
    expect(harness.notices.of("took-over")).toEqual([tookOverFromDead(edited.id)]);
  });

  it("retrying one of several failed parallel branches runs that one alone, and says which are still to retry", async () => {
    const attempts = new Map<string, number>();
    const branch = (name: string) => () => {
      attempts.set(name, (attempts.get(name) ?? 0) + 1);
      if (attempts.get(name) === 1) throw new Error(`${name} failed`);
      return { log: [name] };
    };
    const wf = workflow("parallel-failures", { state, reducers: { log: "append" } })
      .node("split", () => ({}), { next: ["a", "b", "c"] })
      .node("a", branch("a"), { retry: { maxAttempts: 1 }, next: "join" })
      .node("b", branch("b"), { retry: { maxAttempts: 1 }, next: "join" })
      .node("c", () => ({ log: ["c"] }), { next: "join" })
      .node("join", () => ({}), { waitFor: ["a", "b", "c"], next: "END" })
      .compile();
    const engine = await harness.engine([wf]);
    const run = await engine.start(wf);
    expect(await run.wait()).toMatchObject({ status: "paused", reason: "retries-exhausted" });
    const op = engine.operator("ann");
    const first = await op.retry(run.id, "a");
    expect(first.result.willRun).toEqual(["a"]);
    expect(first.effect).toMatch(/will run again \(step 2: a\); still to retry in that step: b$/);
    expect(await run.wait()).toMatchObject({ status: "paused", reason: "retries-exhausted" });
    await expect(op.retry(run.id, "nosuch")).rejects.toThrow(new ValidationError(`workflow parallel-failures has no node "nosuch" (nor is it a task of the current step)`));
    await expect(op.retry(run.id, "split")).rejects.toThrow(
      new ConflictError(`node "split" has no task in the current step (step 2) of run ${run.id}, which runs a, b, c; only tasks of that step can be retried`),
    );
    await expect(op.resolve(["int-x", "int-x"], { decision: "approve" })).rejects.toThrow(new ValidationError("interrupt int-x is listed twice"));
    expect((await op.retry(run.id, "b")).result.willRun).toEqual(["b"]);
    expect((await run.wait()).status).toBe("succeeded");
    expect([...attempts]).toEqual([["a", 2], ["b", 2]]);
    expect(((await run.state()).log as string[]).sort()).toEqual(["a", "b", "c"]);
  });

  it("says a task named by id has moved on when someone retried it first and the run went on", async () => {
    let tries = 0;
    const wf = workflow("moved-on", { state, interruptBefore: ["b"] })
      .node("a", () => {
        if (tries++ === 0) throw new Error("first try fails");
        return {};
      }, { retry: { maxAttempts: 1 }, next: "b" })
      .node("b", () => ({}), { next: "END" })
      .compile();
    const engine = await harness.engine([wf]);
    const run = await engine.start(wf);
    expect(await run.wait()).toMatchObject({ status: "paused", reason: "retries-exhausted" });
    const [failed] = await engine.store.listTasks(run.id, { step: 1 });
    await engine.operator("bob").retry(run.id, "a");
    expect(await run.wait()).toMatchObject({ status: "paused", reason: "interrupt" });
    await expect(engine.operator("ann").retry(run.id, failed!.id)).rejects.toThrow(
      new ConflictError(`task ${failed!.id} (a) is succeeded in step 1, and the run is at step 2: it has moved on (another operator acted first?)`),
    );
  });

  it("asks again when a node runs again on a state an operator changed after approving, and its request shows other values", async () => {
    let failures = 0;
    const wf = workflow("delete-objects", { state })
      .node("execute", async (s, ctx) => {
        const answer = await ctx.interrupt({ question: "Delete objects?", show: { limit: s.n } });
        if (answer.decision !== "approve") return { note: "rejected" };
        if (failures++ === 0) throw new Error("storage timed out");
        return { note: `deleted up to ${s.n} objects, approved by ${answer.actor}` };
      }, { retry: { maxAttempts: 1 }, next: "END" })
      .compile();
    const engine = await harness.engine([wf]);
    const op = (who: string) => engine.operator(who);
    const approveOnly = async (runId: string, who: string) => {
      const pending = await pendingOf(engine, runId);
      expect(pending).toHaveLength(1);
      await op(who).resolve(pending[0]!.id, { decision: "approve" });
      return pending[0]!;
    };
    /** The run asks again (a new interrupt, showing the new value); bob's approval runs it. */
    const askedAgain = async (run: Awaited<ReturnType<typeof engine.start>>, stale: { id: string }) => {
      expect(await run.wait()).toMatchObject({ status: "paused" });
      const again = await pendingOf(engine, run.id);
      expect(again.map((i) => [i.request.show, i.id === stale.id])).toEqual([[{ limit: 9999 }, false]]);
      await approveOnly(run.id, "bob");
      expect((await run.wait()).status).toBe("succeeded");
      expect((await run.state()).note).toBe("deleted up to 9999 objects, approved by operator:bob");
    };

    // Retried with a patch that changes what was approved: the operator is asked again.
    const run = await engine.start(wf, { n: 5 });
    await run.wait();
    const first = await approveOnly(run.id, "alice");
    expect(await run.wait()).toMatchObject({ status: "paused", reason: "retries-exhausted" });
    await op("mallory").retry(run.id, "execute", { patch: { n: 9999 } });
    await askedAgain(run, first);

    // Edited while the question was pending, then approved: the approval was of the old values.
    failures = 1;
    const edited = await engine.start(wf, { n: 5 });
    await edited.wait();
    await op("mallory").updateState(edited.id, { n: 9999 });
    await askedAgain(edited, await approveOnly(edited.id, "alice"));

    // Retried as it was: the approval still answers what it approved.
    failures = 0;
    const same = await engine.start(wf, { n: 5 });
    await same.wait();
    await approveOnly(same.id, "alice");
    expect(await same.wait()).toMatchObject({ status: "paused", reason: "retries-exhausted" });
    await op("ann").retry(same.id, "execute", { patch: { note: "retried" } });
    expect((await same.wait()).status).toBe("succeeded");
    expect((await same.state()).note).toBe("deleted up to 5 objects, approved by operator:alice");
  });

  it("sets a breakpoint on a live run: the run pauses before the node the next time it is scheduled", async () => {
    const wf = workflow("loop", { state, limits: { maxSteps: 200 } })
      .node("tick", async (s) => (await sleep(10), { n: s.n + 1 }), { next: "tock" })
      .node("tock", () => ({}), { routes: { more: "tick", done: "END" }, route: (s) => (s.n >= 50 ? "done" : "more") })
      .compile();
    const engine = await harness.engine([wf]);
    const run = await engine.start(wf);
    await until(async () => (await run.get()).step >= 2, 5000, "loop running");
    const op = engine.operator("ann");
    await op.breakpoint(run.id, "tock");
    const paused = await run.wait();
    expect(paused).toMatchObject({ status: "paused", reason: "breakpoint", breakpoints: ["tock"] });
    const [pending] = await pendingOf(engine, run.id);
    expect(pending).toMatchObject({ kind: "breakpoint", node: "tock" });
    const n = (await run.state()).n;
    expect(n).toBeLessThan(50);
    expect((await op.clearBreakpoint(run.id, "tock")).effect).toBe(`breakpoint on "tock" removed; the run is still paused at it until interrupt ${pending!.id} is answered`);
    expect((await run.get()).status).toBe("paused");
    await op.resolve(pending!.id, { decision: "approve" });
    expect((await run.wait()).status).toBe("succeeded");
    expect((await run.state()).n).toBe(50);
    await expect(op.breakpoint(run.id, "nope")).rejects.toBeInstanceOf(ValidationError);
  });

  it("forks a run onto a fixed version of its workflow: new keys get defaults, and nodes it is at must still exist", async () => {
    const buggy = workflow("fixable", { state, reducers: { log: "append" } })
      .node("a", () => ({ log: ["a"] }), { next: "b" })
      .node("b", () => {
        throw new Error("bug in b");
      }, { next: "END" })
      .compile();
    const fixedState = z.object({ ...state.shape, fixed: z.boolean().default(true) });
    const fixed = workflow("fixable", { state: fixedState, reducers: { log: "append" } })
      .node("a", () => ({ log: ["a"] }), { next: "b" })
      .node("b", (s) => ({ log: [`b fixed=${s.fixed}`] }), { next: "END" })
      .compile();
    const renamed = workflow("fixable", { state, reducers: { log: "append" } })
      .node("a", () => ({ log: ["a"] }), { next: "b2" })
      .node("b2", () => ({}), { next: "END" })
      .compile();
    const other = workflow("another", { state }).node("a", () => ({}), { next: "END" }).compile();
    const engine = await harness.engine([buggy, fixed]);
    const run = await engine.start(buggy);
    expect(await run.wait()).toMatchObject({ status: "paused", reason: "retries-exhausted" });
    const op = engine.operator("ann");

    await expect(op.fork(run.id, 1, { workflow: other })).rejects.toThrow(
      new ValidationError(`run ${run.id} is a run of workflow fixable; a fork may move it to another version of that workflow, not to another`),
    );
    await expect(op.fork(run.id, 1, { workflow: renamed })).rejects.toThrow(
      new ValidationError(`version ${renamed.version.slice(0, 12)} of workflow fixable has no node "b", which run ${run.id} runs next from checkpoint 1: fork from another checkpoint, or keep the node in the new version`),
    );
    const outcome = await op.fork(run.id, 1, { workflow: fixed, reason: "b fixed" });
    expect(outcome.effect).toBe(`forked from checkpoint ${run.id}:1 as run ${outcome.result.runId} on version ${fixed.version.slice(0, 12)}`);
    const forked = engine.run(String(outcome.result.runId));
    expect(await forked.wait()).toMatchObject({ status: "succeeded", version: fixed.version });
    expect(await forked.state()).toEqual({ log: ["a", "b fixed=true"], n: 0, note: "", fixed: true });
    // The source run is as it was.
    expect(await run.get()).toMatchObject({ status: "paused", version: buggy.version });
    // From its input (checkpoint 0), the new version starts at its own start node.
    const fromInput = await op.fork(run.id, 0, { workflow: fixed });
    expect(await engine.run(String(fromInput.result.runId)).wait()).toMatchObject({ status: "succeeded", version: fixed.version });
  });

  it("forks a run from a checkpoint, with a patch, leaving the source history unchanged", async () => {
    const wf = workflow("forkable", { state, reducers: { log: "append" } })
      .node("a", () => ({ log: ["a"], note: "from a" }), { next: "b" })
      .node("b", (s) => ({ log: [`b saw ${s.note}`] }), { next: "END" })
      .compile();
    const engine = await harness.engine([wf]);
    const source = await engine.start(wf);
    await source.wait();
    const before = await engine.store.listCheckpoints(source.id);
    const outcome = await engine.operator("ann").fork(source.id, 1, { patch: { note: "patched" }, reason: "try another note" });
    const forkId = outcome.result.runId as string;
    // The fork's own history says what it started from, what was changed and why.
    const [created, edited] = await engine.store.readEvents({ runId: forkId, limit: 2 });
    expect(created).toMatchObject({ type: "run.created", payload: { forkOf: { runId: source.id, checkpointId: `${source.id}:1` }, reason: "try another note" } });
    expect(edited).toMatchObject({ type: "state.edited", payload: { checkpointId: `${forkId}:0`, diff: [{ op: "change", path: "$.note", old: "from a", value: "patched" }] } });
    const fork = engine.run(forkId);
    expect((await fork.wait()).status).toBe("succeeded");
    expect((await fork.state()).log).toEqual(["a", "b saw patched"]);
    expect(await fork.get()).toMatchObject({ parentRunId: null, forkOf: { runId: source.id, checkpointId: `${source.id}:1` } });
    const [first] = await engine.store.listCheckpoints(forkId);
    expect(first).toMatchObject({ source: "fork", parentId: `${source.id}:1`, step: 1, actor: "operator:ann", next: ["b"] });
    expect(await engine.store.listCheckpoints(source.id)).toEqual(before);
    expect((await source.state()).log).toEqual(["a", "b saw from a"]);
    await expect(engine.operator("ann").fork(source.id, 99)).rejects.toBeInstanceOf(NotFoundError);
  });

  it("forks a run that a worker is executing: the fork is answered by the operator that made it, not refused by the worker", async () => {
    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    const wf = workflow("fork-live", { state, reducers: { log: "append" } })
      .node("a", () => ({ log: ["a"] }), { next: "b" })
      .node("b", async () => (await gate, { log: ["b"] }), { next: "END" })
      .compile();
    const engine = await harness.engine([wf]);
    const source = await engine.start(wf);
    await until(async () => (await engine.store.listTasks(source.id)).some((t) => t.node === "b" && t.status === "running"), 5000, "b running");
    const op = engine.operator("ann");
    for (let i = 0; i < 3; i++) {
      const outcome = await op.fork(source.id, 1, { reason: `fork ${i}` });
      expect(outcome.command.status).toBe("accepted");
      expect(await engine.store.getCommand(outcome.command.id)).toMatchObject({ status: "accepted", result: { runId: outcome.result.runId } });
    }
    release();
    expect((await source.wait()).status).toBe("succeeded");
  });

  it("keeps a fork a run of its own: cancelling or deleting its source leaves it whole, and it is deleted on its own", async () => {
    const wf = workflow("fork-apart", { state, reducers: { log: "append" }, interruptBefore: ["b"] })
      .node("a", () => ({ log: ["a"] }), { next: "b" })
      .node("b", () => ({ log: ["b"] }), { next: "END" })
      .compile();
    const engine = await harness.engine([wf]);
    const op = engine.operator("ann");
    const source = await engine.start(wf);
    expect((await source.wait()).status).toBe("paused");
    const fork = engine.run((await op.fork(source.id, 1)).result.runId as string);
    expect((await fork.wait()).status).toBe("paused");
    // A fork may stop elsewhere than its source: its interrupt lists replace the source's.
    const unstopped = engine.run((await op.fork(source.id, 1, { interruptBefore: [] })).result.runId as string);
    expect((await unstopped.wait()).status).toBe("succeeded");
    const reviewed = engine.run((await op.fork(source.id, 1, { interruptBefore: [], interruptAfter: ["b"] })).result.runId as string);
    expect(await reviewed.wait()).toMatchObject({ status: "paused", interruptAfter: ["b"] });
    const commands = (await engine.store.listCommands({ runId: source.id })).length;
    await expect(op.fork(source.id, 1, { interruptBefore: ["c"] })).rejects.toThrow('workflow fork-apart has no node "c" to interrupt at');
    expect(await engine.store.listCommands({ runId: source.id })).toHaveLength(commands);
    await op.cancel(source.id, { reason: "not needed" });
    expect((await source.wait({ until: "end" })).status).toBe("canceled");
    expect((await fork.get()).status).toBe("paused");
    expect(await engine.store.deleteRun(source.id)).toEqual([source.id]);
    expect((await fork.state()).log).toEqual(["a"]);
    await op.cancel(fork.id, { reason: "done with it" });
    await fork.wait({ until: "end" });
    expect(await engine.store.deleteRun(fork.id)).toEqual([fork.id]);
  });

  it("edits the state of a paused run (JSON Patch or partial state) and diffs checkpoints", async () => {
    const wf = workflow("editable", { state, reducers: { log: "append" }, interruptBefore: ["finish"] })
      .node("start", () => ({ log: ["one"] }), { next: "finish" })
      .node("finish", (s) => ({ note: `finished with ${s.log.length}` }), { next: "END" })
      .compile();
    const engine = await harness.engine([wf]);
    const run = await engine.start(wf);
    await run.wait();
    const op = engine.operator("ann");
    await op.updateState(run.id, { log: ["two", "three"] });
    await op.updateState(run.id, [{ op: "replace", path: "/n", value: 7 }]);
    await expect(op.updateState(run.id, { n: "x" })).rejects.toThrow("edited state is invalid at $.n");
    expect(await run.state()).toMatchObject({ log: ["one", "two", "three"], n: 7 });
    // An edit leaves the plan as it was: its checkpoint says what runs next.
    expect((await engine.store.listCheckpointSummaries(run.id)).map((c) => [c.source, c.next])).toEqual([["input", ["start"]], ["loop", ["finish"]], ["update", ["finish"]], ["update", ["finish"]]]);
    const diff = await op.diff(run.id, 2);
    expect(diff.diff).toEqual([{ op: "append", path: "$.log", count: 2, items: ["two", "three"] }]);
    const across = await op.diff(run.id, 0, 3);
    expect(across.diff).toEqual([
      { op: "append", path: "$.log", count: 3, items: ["one", "two", "three"] },
      { op: "change", path: "$.n", old: 0, value: 7 },
    ]);
    const backwards = await op.diff(run.id, 3, 0);
    expect([backwards.from?.n, backwards.to.n]).toEqual([3, 0]);
    expect(backwards.diff).toEqual([
      { op: "remove", path: "$.log[0]", old: "one" },
      { op: "remove", path: "$.log[1]", old: "two" },
      { op: "remove", path: "$.log[2]", old: "three" },
      { op: "change", path: "$.n", old: 7, value: 0 },
    ]);
    const [pending] = await pendingOf(engine, run.id);
    await op.resolve(pending!.id, { decision: "approve" });
    expect((await run.wait()).status).toBe("succeeded");
    expect((await run.state()).note).toBe("finished with 3");
  });

  /** start → finish, paused before finish: a run whose state can be edited. */
  async function pausedBeforeFinish(name: string) {
    const wf = workflow(name, { state, interruptBefore: ["finish"] })
      .node("start", () => ({ log: ["one"] }), { next: "finish" })
      .node("finish", () => ({}), { next: "END" })
      .compile();
    const engine = await harness.engine([wf]);
    const run = await engine.start(wf);
    return { engine, run, paused: await run.wait() };
  }

  it("writes no checkpoint for an edit that changes nothing (an empty patch, a value set to what it is)", async () => {
    const { engine, run, paused } = await pausedBeforeFinish("no-op-edits");
    const op = engine.operator("ann");
    for (const patch of [{}, [{ op: "replace", path: "/n", value: 0 }]]) {
      const outcome = await op.updateState(run.id, patch);
      expect(outcome.effect).toBe("the edit changes nothing in the state; nothing was written");
      expect(outcome.result.checkpointId).toBeUndefined();
    }
    const [pending] = await pendingOf(engine, run.id);
    const resolved = await op.resolve(pending!.id, { decision: "approve", patch: {} });
    expect(resolved.effect).toBe(`resolved ${pending!.id} with approve`);
    expect((await run.wait()).status).toBe("succeeded");
    const sources = (await engine.store.listCheckpointSummaries(run.id)).map((c) => c.source);
    expect(sources).not.toContain("update");
    expect(paused.headN).toBe(1);
  });

  it("refuses an edit made on a state someone has changed since at the same place (editPatch), and merges one made elsewhere", async () => {
    const { engine, run } = await pausedBeforeFinish("two-editors");
    const [ann, bob] = [engine.operator("ann"), engine.operator("bob")];
    const seenByAnn = await ann.state(run.id);
    await bob.updateState(run.id, editPatch(await bob.state(run.id), { ...seenByAnn, n: 7 }));
    await expect(ann.updateState(run.id, editPatch(seenByAnn, { ...seenByAnn, n: 1 }))).rejects.toThrow(
      "cannot be applied: the value at /n is 7, not 0 as the patch expects (the state changed since it was read?)",
    );
    await ann.updateState(run.id, editPatch(seenByAnn, { ...seenByAnn, note: "checked" }));
    expect(await run.state()).toMatchObject({ n: 7, note: "checked", log: ["one"] });
  });

  it("edits the state as if a node had written it (asNode), so that node's routes decide what runs next", async () => {
    const flow = workflow("as-node", { state, reducers: { log: "append" }, interruptAfter: ["draft"] })
      .node("draft", () => ({ note: "draft" }), { next: "publish" })
      .node("publish", () => ({ log: ["published"] }), { next: "END" })
      .compile();
    const engine = await harness.engine([flow]);
    const run = await engine.start(flow);
    await run.wait();
    const op = engine.operator("ann");
    await expect(op.updateState(run.id, { note: "x" }, { asNode: "ghost" })).rejects.toThrow('workflow as-node has no node "ghost"');
    await op.updateState(run.id, { note: "rewritten by hand" }, { asNode: "publish" });
    const head = (await engine.store.listCheckpoints(run.id)).at(-1)!;
    expect(head).toMatchObject({ source: "update", nodes: ["publish"], control: { finished: [{ node: "draft" }, { node: "publish", asNode: true }] } });
    const [pending] = await pendingOf(engine, run.id);
    await op.resolve(pending!.id, { decision: "approve" });
    expect((await run.wait()).status).toBe("succeeded");
    // Planned from "publish" (which goes to END), so publish itself did not run again.
    expect(await run.state()).toMatchObject({ note: "rewritten by hand", log: [] });
  });

  it("an edit made as one node of a parallel step still lets its siblings fill their join; one made as a looping node loops", async () => {
    const ran: string[] = [];
    const flow = workflow("as-node-fan-out", { state, reducers: { log: "append" }, interruptAfter: ["left"] })
      .node("split", () => ({}), { next: ["left", "right"] })
      .node("left", () => (ran.push("left"), { log: ["left"] }), { next: "join" })
      .node("right", () => (ran.push("right"), { log: ["right"] }), { next: "join" })
      .node("join", () => (ran.push("join"), { note: "joined" }), { waitFor: ["left", "right"], next: "END" })
      .compile();
    const engine = await harness.engine([flow]);
    const run = await engine.start(flow);
    expect(await run.wait()).toMatchObject({ status: "paused", reason: "interrupt" });
    const op = engine.operator("ann");
    await op.updateState(run.id, { log: ["right, corrected by hand"] }, { asNode: "right" });
    const [after] = await pendingOf(engine, run.id);
    await op.resolve(after!.id, { decision: "approve" });
    expect(await run.wait()).toMatchObject({ status: "succeeded" });
    expect(ran.sort()).toEqual(["join", "left", "right"]);
    expect(await run.state()).toMatchObject({ note: "joined", log: expect.arrayContaining(["right, corrected by hand"]) });

    let turns = 0;
    const loop = workflow("as-node-loop", { state, reducers: { log: "append" }, interruptAfter: ["work"] })
      .node("work", () => ({ n: ++turns }), { route: (s) => (s.n >= 2 ? "done" : "again"), routes: { again: "work", done: "END" } })
      .compile();
    const loopEngine = await harness.engine([loop]);
    const looping = await loopEngine.start(loop);
    expect(await looping.wait()).toMatchObject({ status: "paused" });
    await loopEngine.operator("ann").updateState(looping.id, { note: "as work" }, { asNode: "work" });
    // Its own edge back to itself is followed: the edit does not stop the loop.
    while ((await looping.wait()).status === "paused") {
      const [pending] = await pendingOf(loopEngine, looping.id);
      await loopEngine.operator("ann").resolve(pending!.id, { decision: "approve" });
    }
    expect([(await looping.wait()).status, turns]).toEqual(["succeeded", 2]);
  });

  it("skips a node the run is paused before: its interrupt's skip, or an edit made as that node (LangGraph's as_node)", async () => {
    const ran: string[] = [];
    const flow = workflow("skip-before", { state, reducers: { log: "append" }, interruptBefore: ["review", "choose"] })
      .node("draft", () => (ran.push("draft"), { note: "draft" }), { next: "review" })
      .node("review", () => (ran.push("review"), { log: ["reviewed"] }), { next: "choose" })
      .node("choose", () => (ran.push("choose"), { route: "publish" }), { routes: { publish: "publish" } })
      .node("publish", () => (ran.push("publish"), { log: ["published"] }), { next: "END" })
      .compile();
    const engine = await harness.engine([flow]);
    const op = engine.operator("ann");

    const edited = await engine.start(flow);
    await edited.wait();
    const [before] = await pendingOf(engine, edited.id);
    expect(before!.request.decisions).toEqual(["approve", "edit", "skip"]);
    const outcome = await op.updateState(edited.id, { note: "reviewed by hand" }, { asNode: "review" });
    expect(outcome.effect).toBe(`resolved ${before!.id} with skip and a state edit (checkpoint ${edited.id}:2) (review will not run)`);
    expect(await edited.wait()).toMatchObject({ status: "paused", reason: "interrupt", current: ["choose"] });
    expect(ran).toEqual(["draft"]);
    expect(await edited.state()).toMatchObject({ note: "reviewed by hand", log: [] });
    const review = (await engine.store.listTasks(edited.id)).find((t) => t.node === "review")!;
    expect([review.status, review.writes ?? [], review.attempts.at(-1)?.code]).toEqual(["succeeded", [], SKIPPED]);

    // A node whose own result chooses the route cannot be skipped: it is not offered, and asNode says why.
    const [atChoose] = await pendingOf(engine, edited.id);
    expect(atChoose!.request.decisions).toEqual(["approve", "edit"]);
    await expect(op.updateState(edited.id, { note: "x" }, { asNode: "choose" })).rejects.toThrow(
      new ConflictError(`node "choose" cannot be skipped (where it goes next depends on its running), so the edit cannot be made as its write; resolve interrupt ${atChoose!.id} with an edit instead`),
    );
    await expect(op.updateState(edited.id, { note: "x" }, { asNode: "publish" })).rejects.toThrow(
      new ConflictError(`the next step of run ${edited.id} is already planned (choose): asNode applies before planning, or names a node the run is paused before, which it skips`),
    );
    await op.resolve(atChoose!.id, { decision: "approve" });
    expect((await edited.wait()).status).toBe("succeeded");
    expect(await edited.state()).toMatchObject({ note: "reviewed by hand", log: ["published"] });

    // The skip decision alone, without an edit.
    ran.length = 0;
    const skipped = await engine.start(flow);
    await skipped.wait();
    const [gate] = await pendingOf(engine, skipped.id);
    await op.resolve(gate!.id, { decision: "skip" });
    expect(await skipped.wait()).toMatchObject({ status: "paused", current: ["choose"] });
    expect(ran).toEqual(["draft"]);
  });

  it("a run paused for several reasons names every node it waits on: the one asking and the one killed", async () => {
    const wf = workflow("two-waits", { state })
      .node("split", () => ({}), { next: ["ask", "slow"] })
      .node("ask", async (_s, ctx) => ((await ctx.interrupt({ question: "ok?" })), {}), { next: "END" })
      .node("slow", (_s, ctx) => new Promise((_resolve, reject) => ctx.signal.addEventListener("abort", () => reject(ctx.signal.reason))), { next: "END" })
      .compile();
    const engine = await harness.engine([wf]);
    const run = await engine.start(wf);
    await until(async () => (await engine.store.listTasks(run.id)).some((t) => t.node === "slow" && t.status === "running") || undefined, 5_000, "slow running");
    await engine.operator("ann").kill(run.id, { task: "slow" });
    expect(await run.wait()).toMatchObject({ status: "paused", reason: "interrupt", current: ["ask", "slow"] });
  });

  it("cancels a run: open tasks canceled, pending interrupts closed, no more work", async () => {
    const wf = workflow("cancel-me", { state })
      .node("ask", async (_s, ctx) => ((await ctx.interrupt({ question: "?" })), {}), { next: "END" })
      .compile();
    const engine = await harness.engine([wf]);
    const run = await engine.start(wf);
    await run.wait();
    const op = engine.operator("ann");
    await expect(op.cancel(run.id, { reason: " " })).rejects.toBeInstanceOf(ValidationError);
    await op.cancel(run.id, { reason: "not needed" });
    expect(await run.get()).toMatchObject({ status: "canceled", pendingInterrupts: 0 });
    expect((await engine.store.listTasks(run.id))[0]!.status).toBe("canceled");
    expect(await pendingOf(engine, run.id)).toEqual([]);
    await expect(op.cancel(run.id, { reason: "again" })).rejects.toBeInstanceOf(ConflictError);
    await expect(op.retry(run.id, "ask")).rejects.toThrow(new ConflictError(`run ${run.id} has ended (canceled)`));
    await expect(op.kill(run.id, { task: "ask" })).rejects.toBeInstanceOf(ConflictError);
    const refused = await engine.store.readEvents({ runId: run.id, types: ["operator.refused"] });
    expect(refused.map((e) => e.payload)).toEqual([expect.objectContaining({ command: "cancel", reason: expect.stringContaining("already ended") })]);
  });

  it("cancels a running run through its worker, aborting the node; the worker says who canceled it", async () => {
    let aborted = false;
    const wf = workflow("cancel-running", { state })
      .node("work", (_s, ctx) => new Promise((_resolve, reject) => ctx.signal.addEventListener("abort", () => ((aborted = true), reject(new Error("aborted"))))), { next: "END" })
      .compile();
    const ends: string[] = [];
    const engine = await harness.engine([wf], { worker: { onRunEnd: (_id, end) => ends.push("why" in end ? `${end.status}: ${end.why}` : end.error) } });
    const run = await engine.start(wf);
    await until(async () => (await engine.store.listTasks(run.id))[0]?.status === "running", 5000, "running");
    await engine.operator("ann").cancel(run.id, { reason: "stop it" });
    expect((await run.wait()).status).toBe("canceled");
    expect(aborted).toBe(true);
    const canceled = await engine.store.readEvents({ runId: run.id, types: ["run.canceled"] });
    expect(canceled.map((e) => [e.payload, e.actor])).toEqual([[{ reason: "stop it" }, "operator:ann"]]);
    expect(await until(() => ends[0], 5000, "the run's end")).toBe("canceled: by operator:ann: stop it");
  });

  it("resolves an interrupt of a run whose worker still runs its other branches", async () => {
    const wf = workflow("busy", { state, reducers: { log: "append" } })
      .node("split", () => ({}), { next: ["ask", "slow"] })
      .node("ask", async (_s, ctx) => ({ log: [`ask:${(await ctx.interrupt({ question: "?" })).decision}`] }), { next: "END" })
      .node("slow", async () => (await sleep(400), { log: ["slow"] }), { next: "END" })
      .compile();
    const engine = await harness.engine([wf]);
    const run = await engine.start(wf);
    const pending = await until(async () => (await pendingOf(engine, run.id))[0], 5000, "interrupt");
    expect((await run.get()).status).toBe("running");
    // The worker that owns the run refuses an invalid edit; the operator gets each failing path.
    const refused = await engine.operator("ann").resolve(pending.id, { decision: "approve", patch: { n: "x" } }).catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(ValidationError);
    expect((refused as ValidationError).issues).toEqual([expect.objectContaining({ path: "$.n" })]);
    await engine.operator("ann").resolve(pending.id, { decision: "approve" });
    expect((await run.wait()).status).toBe("succeeded");
    expect((await run.state()).log).toEqual(["ask:approve", "slow"]);
  });

  it("interrupts an at-most-once node after a crash instead of running it again", async () => {
    let runs = 0;
    const wf = workflow("once", { state, reducers: { log: "append" } })
      .node("charge", () => (runs++, { log: ["charged"] }), { atMostOnce: true, next: "END" })
      .compile();
    const { engine, run, survivor } = await lostWhileRunning(wf, "charge", 100);
    const paused = await run.wait();
    expect(paused).toMatchObject({ status: "paused", reason: "interrupt", recoveries: 1 });
    const [pending] = await pendingOf(engine, run.id);
    expect(pending).toMatchObject({ kind: "recovery", node: "charge", request: { decisions: ["retry", "skip"] } });
    expect(runs).toBe(0);
    await survivor.operator("ann").resolve(pending!.id, { decision: "skip", patch: { log: ["charged by hand"] } });
    expect((await run.wait()).status).toBe("succeeded");
    expect(runs).toBe(0);
    expect((await run.state()).log).toEqual(["charged by hand"]);
    expect(harness.notices.of("took-over")).toEqual([tookOverFromDead(run.id, ": charge (at-most-once) waits for an operator's decision to run it again or skip")]);
    const succeeded = await engine.store.readEvents({ runId: run.id, types: ["task.succeeded"] });
    expect(succeeded.map((e) => e.payload)).toEqual([expect.objectContaining({ node: "charge", skipped: true })]);
  });

  it("says, taking a run over, which nodes its lost worker left running will run again and which wait for an operator (at-most-once)", async () => {
    const wf = workflow("split", { state, reducers: { log: "append" } })
      .node("a", () => ({}), { next: ["charge", "mail"] })
      .node("charge", () => ({ log: ["charged"] }), { atMostOnce: true, next: "END" })
      .node("mail", () => ({ log: ["mailed"] }), { next: "END" })
      .compile();
    const engine = await harness.engine([wf], { worker: false });
    const run = await engine.start(wf, {}, { interruptAfter: ["a"] });
    const first = await harness.engine([wf], { store: engine.store });
    expect(await run.wait()).toMatchObject({ status: "paused", reason: "interrupt" });
    await first.worker!.stop();
    await engine.operator("ann").resolve((await pendingOf(engine, run.id))[0]!.id, { decision: "approve" });
    await dieWhileRunning(engine, run.id, ["charge", "mail"], 50, 2);
    await sleep(80);
    await harness.engine([wf], { store: engine.store });
    expect(await run.wait()).toMatchObject({ status: "paused", reason: "interrupt" });
    const tasks = await engine.store.listTasks(run.id, { step: 2 });
    expect(Object.fromEntries(tasks.map((t) => [t.node, t.status]))).toEqual({ charge: "interrupted", mail: "succeeded" });
    expect(harness.notices.of("took-over")).toEqual([tookOverFromDead(run.id, ": mail will run again; charge (at-most-once) waits for an operator's decision to run it again or skip")]);
  });

  it("says, taking over a run whose workers keep being lost, that it paused as poison and its nodes wait for an operator", async () => {
    const wf = workflow("poison-notice", { state }).node("work", () => ({ n: 1 }), { next: "END" }).compile();
    const engine = await harness.engine([wf], { worker: false });
    const run = await engine.start(wf);
    for (let lost = 0; lost < 2; lost++) {
      await dieWhileRunning(engine, run.id, "work", 50);
      await sleep(80);
    }
    await harness.engine([wf], { store: engine.store, worker: { maxRecoveries: 1 } });
    expect(await run.wait()).toMatchObject({ status: "paused", reason: "poison" });
    expect(harness.notices.of("took-over")).toEqual([tookOverFromDead(run.id, ": the run paused as poison (its workers keep being lost): work waits for an operator's decision")]);
  });

  it("keeps the result of a node that finishes while its worker shuts down, instead of running it again", async () => {
    let runs = 0;
    const wf = workflow("finish-on-stop", { state })
      .node("pay", async () => (runs++, await sleep(150), { n: runs }), { next: "END" })
      .compile();
    const first = await harness.engine([wf]);
    const run = await first.start(wf);
    await until(() => runs === 1, 5_000, "pay running");
    await first.worker!.stop();
    const next = await harness.engine([wf], { store: first.store });
    expect((await next.run(run.id).wait({ timeoutMs: 5_000 })).status).toBe("succeeded");
    expect(runs).toBe(1);
    expect(await next.run(run.id).state()).toMatchObject({ n: 1 });
  });

  it("interrupts an at-most-once node its worker stopped part-way when shutting down, instead of running it again", async () => {
    let runs = 0;
    const wf = workflow("once-on-stop", { state })
      .node("charge", (_s, ctx) => (runs++, new Promise((_resolve, reject) => ctx.signal.addEventListener("abort", () => reject(ctx.signal.reason)))), { atMostOnce: true, next: "END" })
      .compile();
    const first = await harness.engine([wf]);
    const run = await first.start(wf);
    await until(() => runs === 1, 5_000, "charge running");
    await first.worker!.stop();
    // Paused for the operator at once, not handed back as queued for a worker to find out.
    expect(await first.store.getRun(run.id)).toMatchObject({ status: "paused", reason: "interrupt", current: ["charge"] });
    const next = await harness.engine([wf], { store: first.store });
    const paused = await next.run(run.id).wait({ timeoutMs: 5_000 });
    expect(paused).toMatchObject({ status: "paused", reason: "interrupt" });
    const [pending] = await pendingOf(next, run.id);
    expect(pending).toMatchObject({ kind: "recovery", node: "charge", request: { question: expect.stringContaining("its worker shut down while it ran") } });
    expect(runs).toBe(1);
  });

  it("counts toward poison only the workers lost in a row: a committed step starts the count again", async () => {
    let release: () => void = () => undefined;
    let starts = 0;
    const wf = workflow("lossy", { state })
      .node("a", () => ({ n: 1 }), { next: "b" })
      .node("b", (_s, ctx) => new Promise((resolve, reject) => (starts++, (release = () => resolve({ n: 2 })), ctx.signal.addEventListener("abort", () => reject(ctx.signal.reason)))), { next: "END" })
      .compile();
    const starter = await harness.engine([wf], { worker: false });
    const run = await starter.start(wf);
    const lose = async (node: string, step: number) => (await dieWhileRunning(starter, run.id, node, 50, step), await sleep(80));
    await lose("a", 1);
    await lose("a", 1);
    // Two workers lost in a row: within maxRecoveries 2. This one commits step 1, then stops cleanly during b.
    const second = await harness.engine([wf], { store: starter.store, worker: { maxRecoveries: 2 } });
    await until(() => starts === 1, 5_000, "b running");
    await second.worker!.stop();
    await lose("b", 2);
    await lose("b", 2);
    const third = await harness.engine([wf], { store: starter.store, worker: { maxRecoveries: 2 } });
    await until(() => starts === 2, 5_000, "b running again");
    release();
    expect(await run.wait({ until: "end", timeoutMs: 5_000 })).toMatchObject({ status: "succeeded", recoveries: 4 });
    void third;
    // The second worker took the run over after a, the third after b, which the second had started.
    expect(harness.notices.of("took-over")).toEqual([tookOverFromDead(run.id, ": a will run again"), tookOverFromDead(run.id, ": b will run again")]);
  });

  it("runs a task a lost worker left running again, also without a retry policy, and records the lost attempt", async () => {
    let runs = 0;
    const wf = workflow("lost-no-policy", { state })
      .node("work", () => (runs++, { n: 1 }), { next: "END" })
      .compile();
    const { engine, run } = await lostWhileRunning(wf, "work", 50);
    expect(await run.wait()).toMatchObject({ status: "succeeded", recoveries: 1 });
    expect(runs).toBe(1);
    expect(harness.notices.of("took-over")).toEqual([tookOverFromDead(run.id, ": work will run again")]);
    const [task] = await engine.store.listTasks(run.id);
    expect(task!.attempts.map((a) => [a.worker === "dead", a.outcome, a.code ?? null])).toEqual([
      [true, "failed", "WORKER_LOST"],
      [false, "succeeded", null],
    ]);
  });

  it("does not spend a task's retries on the attempt its lost worker left", async () => {
    let runs = 0;
    const wf = workflow("lost-then-fails", { state })
      .node(
        "work",
        () => {
          if (++runs === 1) throw new Error("flaky");
          return { n: 1 };
        },
        { retry: { maxAttempts: 2, backoffMs: 1 }, next: "END" },
      )
      .compile();
    const { engine, run } = await lostWhileRunning(wf, "work", 50);
    expect((await run.wait()).status).toBe("succeeded");
    const [task] = await engine.store.listTasks(run.id);
    expect(task!.attempts.map((a) => [a.outcome, a.code ?? a.error ?? null])).toEqual([
      ["failed", "WORKER_LOST"],
      ["failed", "flaky"],
      ["succeeded", null],
    ]);
    expect(harness.notices.of("took-over")).toEqual([tookOverFromDead(run.id, ": work will run again")]);
  });
});
