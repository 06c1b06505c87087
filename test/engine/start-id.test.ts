import { describe, expect, it, vi } from "vitest";
import { z } from "zod";
import { ConflictError, RunExistsError, ValidationError, workflow } from "../../engine/index.js";
import { engineHarness, sleep } from "../support/engine.js";
import { storeFactories } from "../support/stores.js";

const state = z.object({ order: z.string().default(""), amount: z.number().default(0) });
const charge = workflow("charge", { state }).node("pay", () => ({}), { next: "END" }).compile();
const refund = workflow("refund", { state }).node("pay", () => ({}), { next: "END" }).compile();

describe.each(storeFactories)("a start with an id, retried ($name store)", (factory) => {
  const harness = engineHarness(factory);

  it("is the same run when it is the same start; ifExists reuse returns it, and no second run is made", async () => {
    const engine = await harness.engine([charge], { worker: false });
    const first = await engine.start(charge, { order: "o-42", amount: 5 }, { id: "order-42" });
    expect(first.id).toBe("order-42");
    // Redis takes a second create with the same input checkpoint, in the same millisecond, as the
    // first one sent again (its reply lost): the same start, acknowledged without an error.
    await sleep(2);

    const again = await engine.start(charge, { order: "o-42", amount: 5 }, { id: "order-42" }).catch((e: unknown) => e);
    expect(again).toBeInstanceOf(RunExistsError);
    expect(again).toBeInstanceOf(ConflictError);
    expect(again).toMatchObject({ code: "CONFLICT", sameStart: true, run: { id: "order-42", workflow: "charge" }, message: "run order-42 already exists: started before with this workflow and input" });

    const reused = await engine.start(charge, { amount: 5, order: "o-42" }, { id: "order-42", ifExists: "reuse" });
    expect(reused.id).toBe("order-42");
    expect((await engine.store.listRuns()).runs.map((r) => r.id)).toEqual(["order-42"]);
  });

  it("of two alike starts in one millisecond, one makes the run and the other finds it made", async () => {
    const engine = await harness.engine([charge], { worker: false });
    // The same input and creation time: a Redis store takes the second create for the first sent again.
    const now = vi.spyOn(Date, "now").mockReturnValue(Date.now());
    let outcomes;
    try {
      outcomes = await Promise.allSettled([1, 2].map(() => engine.start(charge, { order: "o-43" }, { id: "order-43" })));
    } finally {
      now.mockRestore();
    }
    expect(outcomes.map((o) => o.status).sort()).toEqual(["fulfilled", "rejected"]);
    expect(outcomes.find((o) => o.status === "rejected")).toMatchObject({ reason: { sameStart: true } });
    expect((await engine.store.listRuns()).runs.map((r) => r.id)).toEqual(["order-43"]);
  });

  it("is a conflict, saying how it differs, when the id names another workflow's run or another input", async () => {
    const engine = await harness.engine([charge, refund], { worker: false });
    await engine.start(charge, { order: "o-7", amount: 5 }, { id: "order-7", interruptBefore: ["pay"] });
    const cases = [
      [refund, { order: "o-7", amount: 5 }, ["pay"], "run order-7 already exists, a run of workflow charge, not refund: give another id"],
      [charge, { order: "o-7", amount: 6 }, ["pay"], "run order-7 already exists, started from another input: give another id"],
      [charge, { order: "o-7", amount: 5 }, [], "run order-7 already exists, started with other interrupt lists: give another id"],
    ] as const;
    for (const [wf, input, before, message] of cases) {
      const error = await engine.start(wf, input, { id: "order-7", ifExists: "reuse", interruptBefore: [...before] }).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(RunExistsError);
      expect(error).toMatchObject({ sameStart: false, message });
    }
    expect((await engine.store.listRuns()).runs).toHaveLength(1);
  });

  it("refuses an id a run cannot have, an empty one included, and an unknown ifExists", async () => {
    const engine = await harness.engine([charge], { worker: false });
    for (const id of ["", "a:b", "x".repeat(129), "order 42"]) {
      await expect(engine.start(charge, {}, { id })).rejects.toThrow(ValidationError);
    }
    await expect(engine.start(charge, {}, { id: "ok", ifExists: "replace" as "reuse" })).rejects.toThrow('ifExists "replace": give "error" or "reuse"');
    expect((await engine.store.listRuns()).runs).toEqual([]);
  });
});
