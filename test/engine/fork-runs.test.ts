import { describe, expect, it } from "vitest";
import { z } from "zod";
import { ValidationError, workflow } from "../../engine/index.js";
import { engineHarness } from "../support/engine.js";
import { storeFactories } from "../support/stores.js";

describe.each(storeFactories)("forks and continued runs go on as a run of their own ($name store)", (factory) => {
  const harness = engineHarness(factory);

  it("gives a fork and a continued run the whole step limit, counted from the step they began at", async () => {
    const target = z.object({ n: z.number().default(0), target: z.number().default(4) });
    const wf = workflow("turns", { state: target, limits: { maxSteps: 5 } })
      .node("inc", (s) => ({ n: s.n + 1 }), { routes: { done: "END" }, default: "inc", route: (s) => (s.n >= s.target ? "done" : undefined) })
      .compile();
    const engine = await harness.engine([wf]);
    const first = await engine.start(wf);
    expect(await first.wait()).toMatchObject({ status: "succeeded", step: 4 });
    // A next turn of four more steps ends at step 8, past 5 counted from 0, within 5 counted from 4.
    const next = await engine.start(wf, { target: 8 }, { from: first.id });
    expect(await next.wait()).toMatchObject({ status: "succeeded", step: 8 });
    const fork = await engine.operator("ann").fork(first.id, 2, { patch: { target: 7 } });
    expect(await engine.run(fork.result.runId).wait()).toMatchObject({ status: "succeeded", step: 7 });
    // Its limit still holds, counted from there, and the error says from where.
    const spin = await engine.operator("ann").fork(first.id, 2, { patch: { target: 100 } });
    const end = await engine.run(spin.result.runId).wait();
    expect(end).toMatchObject({ status: "failed", step: 7, error: { code: "MAX_STEPS" } });
    expect(end.error!.message).toMatch(/^run exceeded its step limit \(maxSteps 5\) before step 8 \(inc\), step 6 counted from step 2 where it began \(the step of the run it was forked or continued from\): /);
  });

  it("refuses a fork from the checkpoint where a node's result chose a route its version lacks, pointing at the one before", async () => {
    const verdicts = z.object({ n: z.number().default(0), verdict: z.string().default("maybe") });
    const routed = (routes: Record<string, string>) =>
      workflow("verdict", { state: verdicts })
        .node("prep", (s) => ({ n: s.n + 1 }), { next: "judge" })
        .node("judge", (s) => ({ route: s.verdict, update: {} }), { routes })
        .compile();
    const broken = routed({ yes: "END", no: "prep" });
    const fixed = routed({ yes: "END", no: "prep", maybe: "END" });
    const engine = await harness.engine([broken, fixed]);
    const run = await engine.start(broken);
    expect(await run.wait()).toMatchObject({ status: "failed", error: { code: "ROUTE_NO_MATCH", node: "judge" } });
    const operator = engine.operator("ann");
    const head = (await run.get()).headN;
    await expect(operator.fork(run.id, head, { patch: { verdict: "yes" } })).rejects.toThrow(
      `at checkpoint ${head} of run ${run.id}, node "judge" chose route "maybe", which matches none of yes, no in version ${broken.version.slice(0, 12)}: a fork from there would fail at once; fork from checkpoint ${head - 1} to run "judge" again, or fork onto a version whose routes take "maybe" (pitwall fork --workflow)`,
    );
    // From the checkpoint before, the node runs again on the patched state; onto a version with the route, it goes on.
    const again = await operator.fork(run.id, head - 1, { patch: { verdict: "yes" } });
    expect(await engine.run(again.result.runId).wait({ timeoutMs: 5_000 })).toMatchObject({ status: "succeeded" });
    const moved = await operator.fork(run.id, head, { workflow: fixed });
    expect(await engine.run(moved.result.runId, fixed).wait({ timeoutMs: 5_000 })).toMatchObject({ status: "succeeded" });
  });

  it("a fork refused because its state does not fit the version it moves to stores nothing of that version", async () => {
    const body = (max?: number) =>
      workflow("counted", { state: z.object({ n: (max === undefined ? z.number() : z.number().max(max)).default(0) }) })
        .node("inc", (s) => ({ n: s.n + 1 }), { next: "END" })
        .compile();
    const [wf, strict] = [body(), body(0)];
    const engine = await harness.engine([wf]);
    const run = await engine.start(wf);
    expect(await run.wait()).toMatchObject({ status: "succeeded" });
    const stored = await engine.store.listWorkflows();
    const refused = engine.operator("ann").fork(run.id, 1, { workflow: strict });
    await expect(refused).rejects.toThrow(ValidationError);
    // Else the newest stored version of the workflow would be one no run was ever made on (the console's U takes it).
    expect(await engine.store.getWorkflow(strict.version)).toBeUndefined();
    expect(await engine.store.listWorkflows()).toEqual(stored);
  });
});
