import { describe, expect, it, vi } from "vitest";
import { z } from "zod";
import { ConflictError, ValidationError, workflow } from "../../engine/index.js";
import { ended, engineHarness } from "../support/engine.js";
import { storeFactories } from "../support/stores.js";

const state = z.object({ order: z.string().default(""), got: z.array(z.string()).default([]) });

/** An order that takes two payments, in whatever order they come. */
const order = workflow("order", { state, reducers: { got: "append" } })
  .node("collect", async (_s, ctx) => ({ got: [await ctx.receive<string>("paid"), await ctx.receive<string>("paid")] }), { next: "END" })
  .compile();
const other = workflow("refund", { state }).wait("w", { signal: "paid", next: "END" }).compile();

describe.each(storeFactories)("signal-with-start ($name store)", (factory) => {
  const harness = engineHarness(factory);

  it("starts the run when no run has the id, then signals it; the next call finds it and signals it", async () => {
    const engine = await harness.engine([order]);
    const op = engine.operator("webhook");
    const first = await op.signalWithStart({ runId: "order-7", workflow: order, input: { order: "7" } }, "paid", "EUR 5", { reason: "webhook 1" });
    expect(first.result).toMatchObject({ started: true, signalId: first.command.id });
    const second = await op.signalWithStart({ runId: "order-7", workflow: order, input: { order: "ignored: the run exists" } }, "paid", "EUR 6");
    expect(second.result.started).toBe(false);
    expect((await ended(engine, "order-7")).status).toBe("succeeded");
    expect(await engine.run("order-7").state()).toEqual({ order: "7", got: ["EUR 5", "EUR 6"] });
    const [created] = await engine.store.readEvents({ runId: "order-7", types: ["run.created"] });
    expect(created!.payload).toMatchObject({ workflow: "order", signal: { id: first.command.id, name: "paid" } });
  });

  it("of two senders racing, one starts the run and both signals land, even in one millisecond", async () => {
    const engine = await harness.engine([order], { worker: false });
    const op = engine.operator("webhook");
    // The same actor, input and creation time: a Redis store takes the second create for the first sent again.
    const now = vi.spyOn(Date, "now").mockReturnValue(Date.now());
    let sent;
    try {
      sent = await Promise.all(["EUR 1", "EUR 2"].map((data) => op.signalWithStart({ runId: "order-8", workflow: order }, "paid", data)));
    } finally {
      now.mockRestore();
    }
    expect(sent.map((s) => s.result.started).sort()).toEqual([false, true]);
    const worker = await harness.engine([order], { store: engine.store });
    expect((await ended(worker, "order-8")).status).toBe("succeeded");
    expect([...(await engine.run("order-8", order).state()).got].sort()).toEqual(["EUR 1", "EUR 2"]);
  });

  it("refuses a run of another workflow with that id, or bad input, sending nothing", async () => {
    const engine = await harness.engine([order, other], { worker: false });
    await engine.start(other, {}, { id: "order-9" });
    const op = engine.operator("webhook");
    await expect(op.signalWithStart({ runId: "order-9", workflow: order }, "paid", "EUR 5")).rejects.toThrow(new ConflictError("run order-9 is a run of workflow refund, not order: no signal sent"));
    expect(await engine.store.listCommands({ runId: "order-9" })).toEqual([]);
    await expect(op.signalWithStart({ runId: "order-10", workflow: order, input: { order: 10 } }, "paid", "EUR 5")).rejects.toBeInstanceOf(ValidationError);
    await expect(op.signalWithStart({ runId: "order 10", workflow: order }, "paid")).rejects.toThrow(/run id "order 10" may only use/);
    await expect(op.signalWithStart({ runId: "order-10", workflow: order }, "bad name")).rejects.toThrow(/signal name "bad name"/);
    expect(await engine.store.getRun("order-10")).toBeUndefined();
  });
});
