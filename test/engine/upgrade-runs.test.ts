import { describe, expect, it } from "vitest";
import { z } from "zod";
import { ConflictError, NotFoundError, Operator, ValidationError, Worker, runBatch, runUpgrades, selectRuns, selects, workflow, type Engine, type RunHandle, type Store, type UpgradeOutcome } from "../../engine/index.js";
import { engineHarness, until } from "../support/engine.js";
import { storeFactories } from "../support/stores.js";

const state = z.object({ log: z.array(z.string()).default([]) });

/** v1 asks for approval, then its `ship` node has a bug; v2 ships, with a key of its own (a default). */
const buggy = workflow("release", { state, reducers: { log: "append" } })
  .approval("review", { question: "Ship it?", decisions: ["approve", "reject"], routes: { approve: "ship", reject: "END" } })
  .node("ship", () => {
    throw new Error("bug in ship");
  }, { next: "END", retry: { maxAttempts: 1 } })
  .compile();
const fixedState = z.object({ log: z.array(z.string()).default([]), channel: z.string().default("stable") });
const fixed = workflow("release", { state: fixedState, reducers: { log: "append" } })
  .approval("review", { question: "Ship it?", decisions: ["approve", "reject"], routes: { approve: "ship", reject: "END" } })
  .node("ship", (s) => ({ log: [`shipped to ${s.channel}`] }), { next: "END" })
  .compile();
/** The same graph and schema as v1, ship fixed: no state change. */
const patched = workflow("release", { state, reducers: { log: "append" } })
  .approval("review", { question: "Ship it?", decisions: ["approve", "reject"], routes: { approve: "ship", reject: "END" } })
  .node("ship", () => ({ log: ["shipped"] }), { next: "END" })
  .compile();
const renamed = workflow("release", { state, reducers: { log: "append" } })
  .approval("check", { question: "Ship it?", decisions: ["approve", "reject"], routes: { approve: "ship", reject: "END" } })
  .node("ship", () => ({}), { next: "END" })
  .compile();
const stricter = workflow("release", { state: z.object({ log: z.array(z.string()).default([]), ticket: z.string() }), reducers: { log: "append" } })
  .approval("review", { question: "Ship it?", decisions: ["approve", "reject"], routes: { approve: "ship", reject: "END" } })
  .node("ship", () => ({}), { next: "END" })
  .compile();
const other = workflow("another", { state }).node("a", () => ({}), { next: "END" }).compile();

/** An upgrade that moved its run, with its command; the test fails when it did not. */
function moved(outcome: UpgradeOutcome) {
  if (outcome.unchanged) throw new Error(`the upgrade moved nothing: ${outcome.effect}`);
  return outcome;
}

/** Everything the store holds that an upgrade could write, record for record. */
async function storeContents(store: Store) {
  const runs = (await store.listRuns({ limit: 1_000 })).runs;
  return {
    runs,
    events: await store.readEvents(),
    lastEventSeq: await store.lastEventSeq(),
    commands: await store.listCommands(),
    checkpoints: await Promise.all(runs.map((r) => store.listCheckpoints(r.id))),
    workflows: await store.listWorkflows(),
  };
}

describe.each(storeFactories)("upgrading a run in place onto another version ($name store)", (factory) => {
  const harness = engineHarness(factory);

  async function pausedAtReview(engine: Engine): Promise<RunHandle> {
    const run = await engine.start(buggy);
    expect(await run.wait({ timeoutMs: 10_000 })).toMatchObject({ status: "paused", reason: "interrupt" });
    return run;
  }

  async function approve(engine: Engine, run: RunHandle) {
    const [pending] = await engine.store.listInterrupts({ runId: run.id, status: "pending" });
    await engine.operator("ann").resolve(pending!.id, { decision: "approve" });
  }

  it("a run paused at an approval on the buggy version goes on, approved, with the fixed version's behaviour; its history shows the move and the state fitted", async () => {
    const engine = await harness.engine([buggy, fixed]);
    const run = await pausedAtReview(engine);
    const headBefore = (await run.get()).headN;
    const outcome = moved(await engine.operator("ann").upgrade(run.id, { workflow: fixed, reason: "ship fixed" }));
    const checkpointId = `${run.id}:${headBefore + 1}`;
    expect(outcome.effect).toBe(`run ${run.id} moved from version ${buggy.version.slice(0, 12)} to version ${fixed.version.slice(0, 12)}; its state fitted to the new schema (checkpoint ${checkpointId})`);
    expect(outcome.result).toMatchObject({ from: buggy.version, to: fixed.version, checkpointId });
    expect(await run.get()).toMatchObject({ status: "paused", version: fixed.version, headN: headBefore + 1 });
    // The new key's default is an operator's edit in the history, not a stored state rewritten.
    const [edit] = (await engine.store.listCheckpoints(run.id)).slice(-1);
    expect(edit).toMatchObject({ id: checkpointId, source: "update", actor: "operator:ann", nodes: [], next: ["review"] });
    expect(await engine.operator("ann").state(run.id, headBefore)).toEqual({ log: [] });
    const events = await engine.store.readEvents({ runId: run.id, types: ["operator.requested", "run.upgraded", "state.edited", "operator.accepted"] });
    expect(events.map((e) => [e.type, e.payload])).toEqual([
      ["operator.requested", { commandId: outcome.command.id, command: "upgrade", args: { version: fixed.version }, reason: "ship fixed" }],
      ["run.upgraded", { from: buggy.version, to: fixed.version, reason: "ship fixed", checkpointId }],
      ["state.edited", { checkpointId, diff: [{ op: "add", path: "$.channel", value: "stable" }] }],
      ["operator.accepted", { commandId: outcome.command.id, command: "upgrade", effect: outcome.effect }],
    ]);
    const command = await engine.store.getCommand(outcome.command.id);
    expect(command).toMatchObject({ type: "upgrade", status: "accepted", actor: "operator:ann" });
    expect(await runUpgrades(engine.store, run.id)).toEqual([{ from: buggy.version, to: fixed.version, at: command!.createdAt, actor: "operator:ann", reason: "ship fixed", checkpointId }]);
    await approve(engine, run);
    expect(await run.wait({ until: "end", timeoutMs: 10_000 })).toMatchObject({ status: "succeeded", version: fixed.version });
    expect(await run.state()).toEqual({ log: ["shipped to stable"], channel: "stable" });
  });

  it("a version whose schema keeps the state writes no checkpoint", async () => {
    const engine = await harness.engine([buggy, patched]);
    const run = await pausedAtReview(engine);
    const before = await run.get();
    const op = engine.operator("ann");
    const outcome = moved(await op.upgrade(run.id, { workflow: patched }));
    expect(outcome.effect).toBe(`run ${run.id} moved from version ${buggy.version.slice(0, 12)} to version ${patched.version.slice(0, 12)}`);
    expect(outcome.result.checkpointId).toBeUndefined();
    expect(await run.get()).toMatchObject({ version: patched.version, headN: before.headN });
    expect(await engine.store.readEvents({ runId: run.id, types: ["run.upgraded"] })).toHaveLength(1);
    await approve(engine, run);
    expect(await run.wait({ until: "end", timeoutMs: 10_000 })).toMatchObject({ status: "succeeded" });
    expect((await run.state()).log).toEqual(["shipped"]);
  });

  it("upgrading a run to the version it is on writes nothing at all — no command, no event, its updatedAt as it was — and says so", async () => {
    const engine = await harness.engine([buggy, patched], { worker: false });
    const drain = () => new Worker(engine.store, engine.registry, { pollMs: 20 }).drain();
    const op = engine.operator("ann");
    const paused = await engine.start(buggy);
    await drain();
    const ended = await engine.start(buggy);
    await drain();
    await op.cancel(ended.id, { reason: "not this one" });
    await op.upgrade(paused.id, { workflow: patched, reason: "ship fixed" });
    // Started once no worker runs: it stays queued.
    const queued = await engine.start(buggy);
    expect((await queued.get()).status).toBe("queued");
    const before = await storeContents(engine.store);
    for (const [run, target] of [[paused, patched], [ended, buggy], [queued, buggy]] as const) {
      const outcome = await op.upgrade(run.id, { workflow: target, reason: "again" });
      expect(outcome).toEqual({ unchanged: true, effect: `run ${run.id} is on version ${target.version.slice(0, 12)} already; nothing to do`, result: { from: target.version, to: target.version } });
    }
    expect(await storeContents(engine.store)).toEqual(before);
    // With a patch it is an edit, and says so: refused, as before, writing nothing.
    await expect(op.upgrade(paused.id, { workflow: patched, patch: { log: ["x"] } })).rejects.toThrow(
      new ValidationError(`run ${paused.id} is on version ${patched.version.slice(0, 12)} already: edit its state with pitwall edit`),
    );
    expect(await storeContents(engine.store)).toEqual(before);
  });

  it("a batch upgrade leaves a run another operator moved to the version meanwhile, as its plan would, writing nothing for it", async () => {
    const engine = await harness.engine([buggy, patched], { worker: false });
    const op = engine.operator("ann");
    const [a, b] = [await engine.start(buggy), await engine.start(buggy)];
    await new Worker(engine.store, engine.registry, { pollMs: 20 }).drain();
    const { runs } = await selectRuns(engine.store, { workflows: ["release"] }, 10);
    moved(await op.upgrade(a.id, { workflow: patched }));
    const aBefore = { run: await a.get(), commands: await engine.store.listCommands({ runId: a.id }), events: await engine.store.readEvents({ runId: a.id }) };
    const results = await runBatch(op, engine.store, runs, { kind: "upgrade", workflow: patched });
    expect(new Map(results.map((r) => [r.runId, r.status === "skipped" ? r.why : r.status]))).toEqual(
      new Map([
        [a.id, `it is on version ${patched.version.slice(0, 12)} already`],
        [b.id, "done"],
      ]),
    );
    expect({ run: await a.get(), commands: await engine.store.listCommands({ runId: a.id }), events: await engine.store.readEvents({ runId: a.id }) }).toEqual(aBefore);
    expect((await b.get()).version).toBe(patched.version);
  });

  it("selects runs by the start of the version they are on now, among a run's descendants too", async () => {
    const engine = await harness.engine([buggy, patched], { worker: false });
    const op = engine.operator("ann");
    const [a, b] = [await engine.start(buggy), await engine.start(buggy)];
    await new Worker(engine.store, engine.registry, { pollMs: 20 }).drain();
    await op.upgrade(b.id, { workflow: patched });
    const { result: onPatched } = await op.fork(a.id, 0, { workflow: patched });
    const { result: onBuggy } = await op.fork(a.id, 0);
    const ids = async (selection: Parameters<typeof selectRuns>[1], limit = 10) => (await selectRuns(engine.store, selection, limit)).runs.map((r) => r.id).sort();
    const [oldPrefix, newPrefix] = [buggy.version.slice(0, 6), patched.version.slice(0, 6)];
    expect(await ids({ versions: [newPrefix] })).toEqual([b.id, onPatched.runId].sort());
    expect(await ids({ versions: [oldPrefix] })).toEqual([a.id, onBuggy.runId].sort());
    expect(await ids({ versions: [oldPrefix, newPrefix], status: ["paused"] })).toEqual([a.id, b.id].sort());
    expect(await ids({ versions: [newPrefix], descendantsOf: a.id })).toEqual([onPatched.runId]);
    expect(await ids({ versions: [newPrefix], workflows: ["release", "another"] })).toEqual([b.id, onPatched.runId].sort());
    const first = await selectRuns(engine.store, { versions: [oldPrefix] }, 1);
    expect([first.runs.length, first.more]).toEqual([1, true]);
    expect(selects({ versions: [newPrefix] })).toBe(true);
  });

  it("a queued run is taken by a worker that has only the new version; a failed step's run goes on by a retry under it", async () => {
    const idle = await harness.engine([buggy], { worker: false });
    const queued = await idle.start(buggy);
    await idle.operator("ann").upgrade(queued.id, { workflow: patched });
    // A worker of the new version only: the run is offered to it, not to the old version's workers.
    const engine = await harness.engine([patched], { store: idle.store });
    expect(await engine.run(queued.id).wait({ timeoutMs: 10_000 })).toMatchObject({ status: "paused", reason: "interrupt", version: patched.version });
    await approve(engine, engine.run(queued.id));
    expect(await engine.run(queued.id).wait({ until: "end", timeoutMs: 10_000 })).toMatchObject({ status: "succeeded", version: patched.version });

    const both = await harness.engine([buggy, patched]);
    const broken = await pausedAtReview(both);
    await approve(both, broken);
    expect(await broken.wait({ timeoutMs: 10_000 })).toMatchObject({ status: "paused", reason: "retries-exhausted" });
    const op = both.operator("ann");
    await op.upgrade(broken.id, { workflow: patched, reason: "fix for ship" });
    await op.retry(broken.id, "ship");
    expect(await broken.wait({ until: "end", timeoutMs: 10_000 })).toMatchObject({ status: "succeeded", version: patched.version });
    expect((await broken.state()).log).toEqual(["shipped"]);
  });

  it("refuses, writing nothing, what cannot go on under the new version or is not the run's to move now", async () => {
    const engine = await harness.engine([buggy, fixed]);
    const run = await pausedAtReview(engine);
    const op = engine.operator("ann");
    const before = await run.get();
    const short = (v: string) => v.slice(0, 12);
    await expect(op.upgrade("run-none", { workflow: fixed })).rejects.toThrow(new NotFoundError("run", "run-none"));
    await expect(op.upgrade(run.id, { workflow: other })).rejects.toThrow(
      new ValidationError(`run ${run.id} is a run of workflow release; an upgrade moves it to another version of that workflow, not to another`),
    );
    await expect(op.upgrade(run.id, { workflow: renamed })).rejects.toThrow(
      new ValidationError(`version ${short(renamed.version)} of workflow release has no node "review", which run ${run.id} runs next from checkpoint ${before.headN}: keep the node in the new version, or fork run ${run.id} from another checkpoint (pitwall fork --workflow)`),
    );
    await expect(op.upgrade(run.id, { workflow: stricter })).rejects.toThrow(
      `the state of checkpoint ${before.headN} under version ${short(stricter.version)} is invalid at $.ticket: `,
    );
    await expect(op.upgrade(run.id, { workflow: fixed, patch: { nope: 1 } })).rejects.toBeInstanceOf(ValidationError);
    await op.breakpoint(run.id, "ship");
    const noShip = workflow("release", { state, reducers: { log: "append" } })
      .approval("review", { question: "Ship it?", decisions: ["approve", "reject"], routes: { approve: "END", reject: "END" } })
      .compile();
    await expect(op.upgrade(run.id, { workflow: noShip })).rejects.toThrow(
      `version ${short(noShip.version)} of workflow release has no node "ship", on which run ${run.id} has a breakpoint: clear it first (pitwall unbreak ${run.id} ship), or keep the node in the new version`,
    );
    await op.clearBreakpoint(run.id, "ship");
    // The approval's answers must still lead somewhere: a decision it offers that the new version does not route would fail the run.
    const noReject = workflow("release", { state, reducers: { log: "append" } })
      .approval("review", { question: "Ship it?", decisions: ["approve", "reject"], routes: { approve: "ship" } })
      .node("ship", () => ({}), { next: "END" })
      .compile();
    const [asked] = await engine.store.listInterrupts({ runId: run.id, status: "pending" });
    await expect(op.upgrade(run.id, { workflow: noReject })).rejects.toThrow(
      `version ${short(noReject.version)} of workflow release routes no "reject" from approval "review", which run ${run.id}'s interrupt ${asked!.id} offers: answering it so would fail the run; route it in the new version, or answer the interrupt first`,
    );
    // A run's own interrupt lists must name nodes the new version has.
    const listed = await engine.start(buggy, {}, { interruptBefore: ["ship"] });
    expect(await listed.wait({ timeoutMs: 10_000 })).toMatchObject({ status: "paused", reason: "interrupt" });
    await expect(op.upgrade(listed.id, { workflow: noShip })).rejects.toThrow(
      `version ${short(noShip.version)} of workflow release has no node "ship", which run ${listed.id} interrupts at: keep the node in the new version, or fork run ${listed.id} from another checkpoint (pitwall fork --workflow)`,
    );
    const unchanged = await run.get();
    expect(unchanged).toMatchObject({ version: buggy.version, headN: before.headN });
    const commands = await engine.store.listCommands({ runId: run.id });
    expect(commands.filter((c) => c.type === "upgrade")).toEqual([]);
    expect(await engine.store.readEvents({ runId: run.id, types: ["run.upgraded", "state.edited"] })).toEqual([]);

    // Ended: it stays on its version.
    await op.cancel(run.id, { reason: "not this week" });
    const { headN } = await run.get();
    await expect(op.upgrade(run.id, { workflow: fixed })).rejects.toThrow(
      new ConflictError(`run ${run.id} has ended (canceled) and stays on its version: fork it onto the new one from its last checkpoint (pitwall fork ${run.id} ${headN} --workflow FILE), or go on from it (pitwall start FILE --from ${run.id})`),
    );
  });

  it("refuses what the step in progress would undo: an answer not yet carried out that the new version does not route, a wait whose wait changed, a finished sibling's write its schema refuses or that would replace the patch", async () => {
    const short = (v: string) => v.slice(0, 12);
    const numbers = z.object({ n: z.number().default(0), log: z.array(z.string()).default([]) });
    const strings = z.object({ n: z.string().default(""), log: z.array(z.string()).default([]) });
    const fanned = (schema: typeof numbers | typeof strings) =>
      workflow("fanned", { state: schema as typeof numbers, reducers: { log: "append" } })
        .node("a", () => ({}), { next: ["x", "y"] })
        .approval("x", { question: "Go?", routes: { approve: "END", reject: "END" } })
        .node("y", () => ({ n: 1 }), { next: "END" })
        .compile();
    const parked = (seconds: number) => workflow("parked", { state }).wait("w", { seconds, next: "END" }).compile();
    const engine = await harness.engine([buggy, fanned(numbers), parked(3600)], { worker: false });
    const drain = () => new Worker(engine.store, engine.registry, { pollMs: 20 }).drain();
    const op = engine.operator("ann");

    const answered = await engine.start(buggy);
    await drain();
    const [asked] = await engine.store.listInterrupts({ runId: answered.id, status: "pending" });
    await op.resolve(asked!.id, { decision: "reject", reason: "not now" });
    const noReject = workflow("release", { state, reducers: { log: "append" } })
      .approval("review", { question: "Ship it?", decisions: ["approve", "reject"], routes: { approve: "ship" } })
      .node("ship", () => ({}), { next: "END" })
      .compile();
    await expect(op.upgrade(answered.id, { workflow: noReject })).rejects.toThrow(
      `version ${short(noReject.version)} of workflow release routes no "reject" from approval "review", which run ${answered.id}'s interrupt ${asked!.id} was answered with (its node has not gone on yet)`,
    );

    const waiting = await engine.start(parked(3600));
    await drain();
    expect((await waiting.get()).wakeAt).not.toBeNull();
    await expect(op.upgrade(waiting.id, { workflow: parked(1) })).rejects.toThrow(/waits \(time\) in wait node "w" for 3600 s, which version \w+ of workflow parked makes 1 s: the wait under way keeps what it began with/);

    const fan = await engine.start(fanned(numbers));
    await drain();
    expect(await fan.get()).toMatchObject({ status: "paused", reason: "interrupt" });
    await expect(op.upgrade(fan.id, { workflow: fanned(strings), patch: { n: "five" } })).rejects.toThrow(
      `node "y" wrote "n" in run ${fan.id}'s step in progress (applied when the step ends), which version ${short(fanned(strings).version)} of workflow fanned refuses: `,
    );
    await expect(op.upgrade(fan.id, { workflow: fanned(numbers), patch: { n: 5 } })).rejects.toThrow(/is on version .* already/);
    const renamedLog = workflow("fanned", { state: numbers, reducers: { log: "append" } })
      .node("a", () => ({}), { next: ["x", "y"] })
      .approval("x", { question: "Go on?", routes: { approve: "END", reject: "END" } })
      .node("y", () => ({ n: 1 }), { next: "END" })
      .compile();
    await expect(op.upgrade(fan.id, { workflow: renamedLog, patch: { n: 5 } })).rejects.toThrow(
      `node "y" wrote "n" in run ${fan.id}'s step in progress, applied when the step ends: it would replace what the patch sets there; patch it after the step ends (pitwall edit)`,
    );
    for (const run of [answered, waiting, fan]) expect((await engine.store.listCommands({ runId: run.id })).filter((c) => c.type === "upgrade")).toEqual([]);
  });

  it("a fork from a checkpoint written before the upgrade checks its state against the version the fork runs", async () => {
    const counted = (schema: z.ZodObject<{ n: z.ZodDefault<z.ZodNumber> | z.ZodDefault<z.ZodString> }>) =>
      workflow("counted", { state: schema }).approval("ask", { question: "Go?", routes: { approve: "END", reject: "END" } }).compile();
    const v1 = counted(z.object({ n: z.number().default(1) }));
    const v2 = counted(z.object({ n: z.string().default("") }));
    const engine = await harness.engine([v1, v2]);
    const run = await engine.start(v1);
    expect(await run.wait({ timeoutMs: 10_000 })).toMatchObject({ status: "paused" });
    const op = engine.operator("ann");
    await op.upgrade(run.id, { workflow: v2, patch: { n: "one" } });
    await expect(op.fork(run.id, 0)).rejects.toThrow(/^the state of checkpoint 0 under version \w+ is invalid at \$\.n: expected string, got number 1; a patch given with the fork/);
    const { result } = await op.fork(run.id, 0, { workflow: v1 });
    expect((await engine.store.getRun(result.runId))!.version).toBe(v1.version);
  });

  it("a key the new version leaves out is gone from the state, not kept as null, and the state can be edited after; a patch reaches into a new key's default", async () => {
    const withNote = workflow("noted", { state: z.object({ note: z.string().optional(), n: z.number().default(0) }) })
      .approval("ask", { question: "Go?", routes: { approve: "END", reject: "END" } })
      .compile();
    const without = workflow("noted", { state: z.object({ n: z.number().default(0) }) })
      .approval("ask", { question: "Go?", routes: { approve: "END", reject: "END" } })
      .compile();
    const engine = await harness.engine([withNote, without]);
    const run = await engine.start(withNote, { note: "old" });
    expect(await run.wait({ timeoutMs: 10_000 })).toMatchObject({ status: "paused" });
    const op = engine.operator("ann");
    await op.upgrade(run.id, { workflow: without, patch: [{ op: "remove", path: "/note" }] });
    expect(await run.state()).toEqual({ n: 0 });
    await op.updateState(run.id, { n: 5 });
    expect(await run.state()).toEqual({ n: 5 });
    // A patch is made on the state as the new version starts it: into a new key's default.
    const withCfg = workflow("noted", { state: z.object({ n: z.number().default(0), cfg: z.object({ level: z.number().optional() }).default({}) }) })
      .approval("ask", { question: "Go?", routes: { approve: "END", reject: "END" } })
      .compile();
    await engine.operator("bob").upgrade(run.id, { workflow: withCfg, patch: [{ op: "add", path: "/cfg/level", value: 2 }], reason: "levels" });
    expect(await run.state()).toEqual({ n: 5, cfg: { level: 2 } });
    // Its moves, oldest first, each with who made it and the checkpoint that fitted its state.
    const { headN } = await run.get();
    expect(await runUpgrades(engine.store, run.id)).toEqual([
      { from: withNote.version, to: without.version, at: expect.any(Number), actor: "operator:ann", checkpointId: `${run.id}:${headN - 2}` },
      { from: without.version, to: withCfg.version, at: expect.any(Number), actor: "operator:bob", reason: "levels", checkpointId: `${run.id}:${headN}` },
    ]);
  });

  it("refuses a running run; a worker that claims the run between the checks and the write wins, and the upgrade writes nothing", async () => {
    const slow = workflow("release", { state, reducers: { log: "append" } })
      .node("work", async (_s, ctx) => {
        await new Promise((resolve) => ctx.signal.addEventListener("abort", resolve));
        return {};
      }, { next: "END" })
      .compile();
    const engine = await harness.engine([slow]);
    const running = await engine.start(slow);
    await until(async () => (await running.get()).status === "running" || undefined, 10_000, "the run to be claimed");
    // Read before the upgrade is sent: its refusal must find its handler waiting.
    const { owner } = await running.get();
    await expect(engine.operator("ann").upgrade(running.id, { workflow: fixed })).rejects.toThrow(
      new ConflictError(`run ${running.id} is running (held by worker ${owner}); a run moves to another version while it is queued, paused or failed: pause it (pitwall kill, pitwall break), or wait until it pauses or ends`),
    );

    const idle = await harness.engine([buggy], { worker: false });
    const queued = await idle.start(buggy);
    // A worker claims the run just before the upgrade's write lands.
    const racing = new Proxy(idle.store, {
      get(target, key, receiver) {
        if (key !== "commit") return Reflect.get(target, key, receiver) as unknown;
        return async (...args: Parameters<typeof target.commit>) => {
          await target.claimRun({ owner: "quick", leaseMs: 60_000, runId: queued.id });
          return target.commit(...args);
        };
      },
    });
    await expect(new Operator(racing, { actor: "operator:ann" }).upgrade(queued.id, { workflow: fixed })).rejects.toThrow(`run ${queued.id} is running (held by worker quick)`);
    expect(await queued.get()).toMatchObject({ status: "running", owner: "quick", version: buggy.version });
    expect((await idle.store.listCommands({ runId: queued.id })).filter((c) => c.type === "upgrade")).toEqual([]);
  });

  it("a parent waiting on a sub-workflow's run moves, its child staying on its own version; a node it waits in must keep its kind", async () => {
    const child = workflow("release-child", { state }).approval("ok", { question: "Child ok?", next: "END" }).compile();
    const parentV1 = workflow("release-parent", { state, reducers: { log: "append" } }).subgraph("sub", child, { next: "END" }).compile();
    const parentV2 = workflow("release-parent", { state, reducers: { log: "append" } })
      .subgraph("sub", child, { next: "after" })
      .node("after", () => ({ log: ["after, on v2"] }), { next: "END" })
      .compile();
    const notSub = workflow("release-parent", { state, reducers: { log: "append" } }).node("sub", () => ({}), { next: "END" }).compile();
    const engine = await harness.engine([parentV1, parentV2]);
    const parent = await engine.start(parentV1);
    const childRun = await until(async () => (await engine.store.listRuns({ parentRunId: parent.id })).runs[0], 10_000, "the child run");
    expect(await engine.run(childRun.id).wait({ timeoutMs: 10_000 })).toMatchObject({ status: "paused", reason: "interrupt" });
    const waiting = await until(async () => ((await parent.get()).waitingOn === childRun.id ? parent.get() : undefined), 10_000, "the parent to wait on its child");
    const op = engine.operator("ann");
    const [task] = await engine.store.listTasks(parent.id, { step: waiting.step + 1 });
    await expect(op.upgrade(parent.id, { workflow: notSub })).rejects.toThrow(
      `task ${task!.id} of run ${parent.id} waits (run) in node "sub", a sub-workflow (release-child) node, which version ${notSub.version.slice(0, 12)} of workflow release-parent makes an action node: keep its kind, or cancel the run and start it again`,
    );
    const outcome = await op.upgrade(parent.id, { workflow: parentV2 });
    expect(outcome.effect).toBe(`run ${parent.id} moved from version ${parentV1.version.slice(0, 12)} to version ${parentV2.version.slice(0, 12)}; its sub-workflow run ${childRun.id} stays on its own version (upgrade that run on its own)`);
    expect(await engine.run(childRun.id).get()).toMatchObject({ version: child.version });
    await approve(engine, engine.run(childRun.id));
    expect(await parent.wait({ until: "end", timeoutMs: 10_000 })).toMatchObject({ status: "succeeded", version: parentV2.version });
    expect((await parent.state()).log).toEqual(["after, on v2"]);
  });

  it("a failed run moves when a retry can bring it back, which then runs it under the new version; one that failed otherwise is refused", async () => {
    const failing = workflow("release", { state, reducers: { log: "append" } })
      .node("ship", () => {
        throw new Error("bug in ship");
      }, { next: "END", retry: { maxAttempts: 1, onExhausted: "fail" } })
      .compile();
    const shipping = workflow("release", { state, reducers: { log: "append" } }).node("ship", () => ({ log: ["shipped"] }), { next: "END" }).compile();
    const engine = await harness.engine([failing, shipping]);
    const run = await engine.start(failing);
    expect(await run.wait({ until: "end", timeoutMs: 10_000 })).toMatchObject({ status: "failed" });
    const op = engine.operator("ann");
    const outcome = await op.upgrade(run.id, { workflow: shipping });
    expect(outcome.effect).toBe(`run ${run.id} moved from version ${failing.version.slice(0, 12)} to version ${shipping.version.slice(0, 12)}; it stays failed until a retry (pitwall retry ${run.id} NODE) runs it under the new version`);
    expect(await run.get()).toMatchObject({ status: "failed", version: shipping.version });
    await op.retry(run.id, "ship");
    expect(await run.wait({ until: "end", timeoutMs: 10_000 })).toMatchObject({ status: "succeeded" });
    expect((await run.state()).log).toEqual(["shipped"]);

    const verdicts = z.object({ verdict: z.string().default("maybe") });
    const routed = (routes: Record<string, string>) => workflow("verdict", { state: verdicts }).node("judge", (s) => ({ route: s.verdict, update: {} }), { routes }).compile();
    const broken = routed({ yes: "END" });
    const engine2 = await harness.engine([broken]);
    const stuck = await engine2.start(broken);
    expect(await stuck.wait({ until: "end", timeoutMs: 10_000 })).toMatchObject({ status: "failed", error: { code: "ROUTE_NO_MATCH" } });
    await expect(engine2.operator("ann").upgrade(stuck.id, { workflow: routed({ yes: "END", maybe: "END" }) })).rejects.toThrow(
      new ConflictError(`run ${stuck.id} failed (ROUTE_NO_MATCH at judge) with no task of its step in progress to retry, so it would stay failed on the new version: fork it onto the new one (pitwall fork ${stuck.id} N --workflow FILE, from the checkpoint N before what failed)`),
    );
    expect((await stuck.get()).version).toBe(broken.version);
  });
});
