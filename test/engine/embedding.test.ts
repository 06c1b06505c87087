import { describe, expect, expectTypeOf, it } from "vitest";
import { z } from "zod";
import { createEngine, NotFoundError, PitwallError, ValidationError, WaitTimeoutError, workflow, type StateOf } from "../../engine/index.js";
import { engineHarness } from "../support/engine.js";
import { storeFactories } from "../support/stores.js";

const harness = engineHarness(storeFactories.find((f) => f.name === "sqlite")!);

const held = workflow("held", { state: z.object({ n: z.number().default(0) }), interruptBefore: ["work"] })
  .node("work", () => ({ n: 1 }), { next: "END" })
  .compile();

describe("an engine embedded in a service", () => {
  it("records run.cancel and engine.operator() as the engine's actor, with the engine's secret keys, unless given another actor", async () => {
    const engine = await harness.engine([held], { actor: "service:billing", secretKeys: ["reason"] });
    const first = await engine.start(held);
    await first.wait();
    await first.cancel("card 4111-1111");
    const second = await engine.start(held);
    await second.wait();
    await second.cancel("duplicate", "ann");
    // Its operator acts as the engine too, unless named.
    const third = await engine.start(held);
    await third.wait();
    await engine.operator().cancel(third.id, { reason: "stale" });
    const fourth = await engine.start(held);
    await fourth.wait();
    await engine.operator("bo").cancel(fourth.id, { reason: "stale" });
    const requested = await engine.store.readEvents({ types: ["operator.requested"] });
    expect(requested.map((e) => [e.runId, e.actor])).toEqual([
      [first.id, "service:billing"],
      [second.id, "operator:ann"],
      [third.id, "service:billing"],
      [fourth.id, "operator:bo"],
    ]);
    expect(JSON.stringify(requested)).not.toContain("4111");
  });

  it("throws a WaitTimeoutError (code TIMEOUT) with the run as it was when a wait runs out, apart from a caller's abort and a closed store", async () => {
    const engine = await harness.engine([held], { worker: false });
    const run = await engine.start(held);
    const timedOut = await run.wait({ timeoutMs: 50 }).catch((error: unknown) => error);
    expect(timedOut).toBeInstanceOf(WaitTimeoutError);
    expect(timedOut).toMatchObject({ code: "TIMEOUT", runId: run.id, status: "queued", timeoutMs: 50, until: "settled", run: { id: run.id, status: "queued" } });
    expect((timedOut as Error).message).toBe(`run ${run.id} did not settle within 50 ms (it is queued)`);

    const caller = new AbortController();
    const aborted = run.wait({ timeoutMs: 60_000, signal: caller.signal }).catch((error: unknown) => error);
    caller.abort(new Error("client went away"));
    expect(await aborted).toEqual(new Error("client went away"));

    const closing = run.wait({ until: "end", timeoutMs: 60_000 }).catch((error: unknown) => error);
    await new Promise((resolve) => setTimeout(resolve, 50));
    await engine.store.close();
    const closed = await closing;
    expect(closed).toBeInstanceOf(PitwallError);
    expect(closed).not.toBeInstanceOf(WaitTimeoutError);
    expect((closed as PitwallError).code).not.toBe("TIMEOUT");
  });

  it("names what was not found and its id on a NotFoundError", async () => {
    const engine = await harness.engine([held], { worker: false });
    const missing = await engine.run("run-typo").get().catch((error: unknown) => error);
    expect(missing).toBeInstanceOf(NotFoundError);
    expect(missing).toMatchObject({ code: "NOT_FOUND", what: "run", id: "run-typo", message: "run run-typo not found" });
  });

  it("types a handle on an existing run by its workflow's state, and refuses a run of another workflow for that type", async () => {
    const other = workflow("other", { state: z.object({ text: z.string().default("") }) })
      .node("work", () => ({ text: "done" }), { next: "END" })
      .compile();
    expectTypeOf<StateOf<typeof held>>().toEqualTypeOf<{ n: number }>();
    const engine = await harness.engine([held, other]);
    const started = await engine.start(held);
    await started.wait();
    // A service that kept only the run's id: the handle's state is typed by the workflow given.
    const handle = engine.run(started.id, held);
    const state = await handle.state();
    expectTypeOf(state).toEqualTypeOf<{ n: number }>();
    expect(state).toEqual({ n: 0 });
    expectTypeOf(await engine.run<StateOf<typeof held>>(started.id).state()).toEqualTypeOf<{ n: number }>();

    const wrong = await engine.run(started.id, other).state().catch((error: unknown) => error);
    expect(wrong).toBeInstanceOf(ValidationError);
    expect((wrong as Error).message).toBe(`run ${started.id} is a run of workflow held, not of other: its state is not of that workflow's type`);
    const values = engine.run(started.id, other).values()[Symbol.asyncIterator]();
    await expect(values.next()).rejects.toThrow(ValidationError);
  });

  it("leaves a store it was given open on close, for the engines sharing it and for its owner to close; closes the store it made itself", async () => {
    const first = await harness.engine([held], { worker: false });
    const second = await harness.engine([held], { store: first.store });
    await first.close();
    const run = await second.start(held);
    expect(await run.wait({ timeoutMs: 10_000 })).toMatchObject({ status: "paused" });
    await second.close();
    expect((await first.store.getRun(run.id))?.status).toBe("paused");

    const own = createEngine({ workflows: [held], worker: false });
    const started = await own.start(held);
    await own.close();
    await expect(own.store.getRun(started.id)).rejects.toThrow(/closed/);
  });
});
