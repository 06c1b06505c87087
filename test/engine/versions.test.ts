import { describe, expect, it } from "vitest";
import { z } from "zod";
import { createEngine, workflow, type LeftBehind } from "../../engine/index.js";
import { engineHarness, until } from "../support/engine.js";
import { storeFactories } from "../support/stores.js";

const state = z.object({ log: z.array(z.string()).default([]) });
const memory = storeFactories.find((f) => f.name === "memory")!;

describe("an embedded engine and runs of a version it cannot run", () => {
  const harness = engineHarness(memory);

  it("says which version it cannot run and why, in a wait that times out and to the worker's onLeftBehind", async () => {
    const before = workflow("edited", { state }).node("a", () => ({ log: ["a"] }), { next: "END" }).compile();
    // The same workflow after its code changed: another graph, so another version.
    const after = workflow("edited", { state }).node("a", () => ({ log: ["a"] }), { next: "b" }).node("b", () => ({ log: ["b"] }), { next: "END" }).compile();
    expect(after.version).not.toBe(before.version);
    const store = await memory.open();
    const run = await createEngine({ store, workflows: [before], worker: false }).start(before);

    const told: LeftBehind[] = [];
    const engine = await harness.engine([after], { store, worker: { onLeftBehind: (left) => told.push(left) } });
    await expect(engine.run(run.id).wait({ timeoutMs: 100 })).rejects.toThrow(
      `run ${run.id} did not settle within 100 ms (it is queued; this engine's worker cannot run it: this process has workflow edited only in version ${after.version}: its graph changed since runs of version ${before.version} started; register the workflow as it was when the run started, or fork the run onto a version this engine has (operator.fork(runId, n, { workflow })))`,
    );
    await until(() => told.length > 0, 5_000, "the left-behind report");
    expect(told).toEqual([{ workflow: "edited", version: before.version, status: "queued", count: 1, why: expect.stringContaining("its graph changed") }]);

    // Forked onto the version it has, the run goes on.
    const { result } = await engine.operator("ann").fork(run.id, 0, { workflow: after });
    expect((await engine.run(result.runId).wait({ timeoutMs: 5_000 })).status).toBe("succeeded");
  });
});

describe("two workflows built in code with the same graph", () => {
  const harness = engineHarness(memory);

  it("are refused together when their code differs (they share a version; a run would run the code registered last)", async () => {
    const build = (who: string) => workflow("same", { state }).node("a", () => ({ log: [who] }), { next: "END" }).compile();
    const a = build("A");
    const b = build("B");
    expect(a.version).toBe(b.version);
    const refusal = `workflow same version ${a.version} is already registered with other code (node a's function differs): two workflows with the same graph have the same version, so a run of either would run whichever was registered last; give them different names, or register one`;
    expect(() => createEngine({ workflows: [a, b], worker: false })).toThrow(refusal);
    const engine = await harness.engine([a]);
    await expect(engine.start(b)).rejects.toThrow(refusal);
    // The same workflow again is no conflict.
    expect((await (await engine.start(a)).wait({ timeoutMs: 5_000 })).status).toBe("succeeded");
  });
});
