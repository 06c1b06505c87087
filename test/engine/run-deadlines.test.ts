import { describe, expect, it } from "vitest";
import { z } from "zod";
import { ValidationError, WorkflowRegistry, Worker, actionRegistry, loadWorkflowText, workflow } from "../../engine/index.js";
import { ended, engineHarness, sleep, until } from "../support/engine.js";
import { storeFactories } from "../support/stores.js";

const state = z.object({ done: z.boolean().default(false), log: z.array(z.string()).default([]) });

/** `work` runs until its signal aborts it. */
const hanging = (name: string, limits: { deadlineSeconds?: number } = {}) =>
  workflow(name, { state, limits })
    .node("work", (_s, ctx) => new Promise<never>((_resolve, reject) => ctx.signal.addEventListener("abort", () => reject(ctx.signal.reason), { once: true })), { next: "END" })
    .compile();

describe.each(storeFactories)("run deadlines ($name store)", (factory) => {
  const harness = engineHarness(factory);

  it("cancels a run still running at its deadline, as actor timeout, its node aborted", async () => {
    const wf = hanging("runs-too-long");
    const engine = await harness.engine([wf]);
    const run = await engine.start(wf, {}, { deadlineSeconds: 0.3 });
    const record = await engine.store.getRun(run.id);
    expect(record!.deadlineAt! - record!.createdAt).toBe(300);
    const end = await ended(engine, run.id);
    expect(end.status).toBe("canceled");
    const [canceled] = await engine.store.readEvents({ runId: run.id, types: ["run.canceled"] });
    expect(canceled!.actor).toBe("timeout");
    expect((canceled!.payload as { reason: string }).reason).toMatch(/^it had not ended 0\.3 s after it started \(deadline \d{4}-/);
    const [task] = await engine.store.listTasks(run.id);
    expect(task!.status).toBe("canceled");
    const commands = await engine.store.listCommands({ runId: run.id });
    expect(commands.map((c) => [c.type, c.actor, c.status])).toEqual([["cancel", "timeout", "accepted"]]);
  });

  it("takes the workflow's limits.deadlineSeconds, cancels a paused run and its child runs, and leaves a run that ended in time", async () => {
    const child = workflow("deadline-child", { state })
      .approval("ask", { question: "Go?", routes: { approve: "END", reject: "END" } })
      .compile();
    const parent = workflow("deadline-parent", { state, limits: { deadlineSeconds: 1.5 } })
      .subgraph("sub", child, { next: "END" })
      .compile();
    const quick = workflow("quick", { state, limits: { deadlineSeconds: 1 } }).node("work", () => ({ done: true }), { next: "END" }).compile();
    const engine = await harness.engine([parent, child, quick]);
    const run = await engine.start(parent);
    const fast = await engine.start(quick);
    expect((await fast.wait()).status).toBe("succeeded");
    await until(async () => (await engine.store.listRuns({ parentRunId: run.id })).runs[0]?.status === "paused", 5_000, "the child to pause");
    expect((await engine.store.getRun(run.id))!.deadlineAt).toBeDefined();
    expect((await ended(engine, run.id)).status).toBe("canceled");
    const [sub] = (await engine.store.listRuns({ parentRunId: run.id })).runs;
    expect((await ended(engine, sub!.id)).status).toBe("canceled");
    const [subCanceled] = await engine.store.readEvents({ runId: sub!.id, types: ["run.canceled"] });
    expect((subCanceled!.payload as { reason: string }).reason).toMatch(/^parent run .* canceled: it had not ended 1\.5 s after it started/);
    await sleep(300);
    expect((await engine.store.getRun(fast.id))!.status).toBe("succeeded");
    expect(await engine.store.listCommands({ runId: fast.id })).toEqual([]);
  });

  it("cancels a run whose deadline passed while no worker ran, as a draining worker starts", async () => {
    const wf = workflow("deadline-drained", { state })
      .approval("ask", { question: "Go?", routes: { approve: "END", reject: "END" } })
      .compile();
    const engine = await harness.engine([wf], { worker: false });
    const run = await engine.start(wf, {}, { deadlineSeconds: 1 });
    const worker = () => new Worker(engine.store, new WorkflowRegistry(engine.store, actionRegistry({}), [wf]), { pollMs: 50 });
    await worker().drain();
    const paused = await engine.store.getRun(run.id);
    expect(paused!.status).toBe("paused");
    await sleep(paused!.deadlineAt! - Date.now() + 50);
    await worker().drain();
    expect((await engine.store.getRun(run.id))!.status).toBe("canceled");
  });

  it("a draining worker (worker --once) cancels a run whose deadline passes while it runs, and starts nothing of one already past it", async () => {
    const wf = hanging("drained-deadlines");
    const engine = await harness.engine([wf], { worker: false });
    const late = await engine.start(wf, {}, { deadlineSeconds: 0.05 });
    await sleep(100);
    const running = await engine.start(wf, {}, { deadlineSeconds: 1.5 });
    await new Worker(engine.store, new WorkflowRegistry(engine.store, actionRegistry({}), [wf]), { pollMs: 50 }).drain();
    expect((await engine.store.getRun(late.id))!.status).toBe("canceled");
    expect(await engine.store.readEvents({ runId: late.id, types: ["task.started"] })).toEqual([]);
    expect((await engine.store.getRun(running.id))!.status).toBe("canceled");
    expect((await engine.store.readEvents({ runId: running.id, types: ["task.started"] })).length).toBe(1);
  });

  it("refuses a deadline that is not a time from now, naming it, and writes nothing", async () => {
    const wf = hanging("bad-deadline");
    const engine = await harness.engine([wf], { worker: false });
    await expect(engine.start(wf, {}, { deadlineSeconds: 0 })).rejects.toThrow(new ValidationError("deadlineSeconds must be a number above 0 and at most 3153600000 (100 years), not 0"));
    expect((await engine.store.listRuns()).runs).toEqual([]);
    expect(() =>
      loadWorkflowText(JSON.stringify({ name: "w", state: {}, start: "a", limits: { deadlineSeconds: -1 }, nodes: { a: { kind: "wait", seconds: 1, next: "END" } } }), actionRegistry({})),
    ).toThrow(/\$\.limits\.deadlineSeconds/);
  });
});
