import { describe, expect, it } from "vitest";
import { z } from "zod";
import { MemoryStore, workflow, type Store, type SubscribeOptions } from "../../engine/index.js";
import { engineHarness } from "../support/engine.js";
import { storeFactories } from "../support/stores.js";

const state = z.object({ n: z.number().default(0) });

/** The store, and what each `subscribe` made through it asked for. */
function listening(store: Store): { store: Store; asked: SubscribeOptions[] } {
  const asked: SubscribeOptions[] = [];
  const proxy = new Proxy(store, {
    get(target, key) {
      if (key !== "subscribe") return Reflect.get(target, key) as unknown;
      return (options: SubscribeOptions = {}) => {
        asked.push(options);
        return target.subscribe(options);
      };
    },
  });
  return { store: proxy, asked };
}

describe("waiting on a run listens to that run and the sub-workflow runs it waits on, not the whole store", () => {
  const harness = engineHarness(storeFactories[0]!);

  it("wait() and events() settle on a child's pause while reading only the chain's own events", async () => {
    const child = workflow("listened-child", { state, interruptBefore: ["ask"] }).node("ask", () => ({ n: 1 }), { next: "END" }).compile();
    const parent = workflow("listened-parent", { state }).node("first", () => ({ n: 1 }), { next: "sub" }).subgraph("sub", child, { next: "END" }).compile();
    const busy = workflow("listened-busy", { state }).node("a", () => ({ n: 1 }), { next: "b" }).node("b", () => ({ n: 2 }), { next: "END" }).compile();
    const shared = new MemoryStore();
    const waiter = listening(shared);
    await harness.engine([parent, child, busy], { store: shared });
    const engine = await harness.engine([], { store: waiter.store, worker: false });
    const run = await engine.start(parent);
    await Promise.all(Array.from({ length: 5 }, () => engine.start(busy)));
    const settled = await run.wait({ timeoutMs: 10_000 });
    expect(settled.waitingOn).not.toBeNull();
    const seen: string[] = [];
    for await (const event of run.events()) seen.push(event.runId);
    expect(new Set(seen)).toEqual(new Set([run.id]));
    expect(waiter.asked.length).toBeGreaterThan(0);
    expect(waiter.asked.filter((options) => options.runId === undefined)).toEqual([]);
    expect(waiter.asked.filter((options) => options.runId !== run.id && options.runId !== settled.waitingOn)).toEqual([]);
  });
});
