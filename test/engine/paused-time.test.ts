import { describe, expect, it } from "vitest";
import { z } from "zod";
import { workflow } from "../../engine/index.js";
import { ranMs } from "../../source/text/run-time.js";
import { engineHarness, sleep } from "../support/engine.js";
import { storeFactories } from "../support/stores.js";

const asks = workflow("asks-twice", { state: z.object({ n: z.number().default(0) }) })
  .node("one", async (s, ctx) => (await ctx.interrupt({ question: "first?" }), { n: s.n + 1 }), { next: "two" })
  .node("two", async (s, ctx) => (await ctx.interrupt({ question: "second?" }), { n: s.n + 1 }), { next: "END" })
  .compile();

describe.each(storeFactories)("time a run spent paused ($name store)", (factory) => {
  const harness = engineHarness(factory);

  it("is kept apart from the time it ran, over every pause: how long it ran leaves the waiting for people out", async () => {
    const engine = await harness.engine([asks]);
    const run = await engine.start(asks);
    for (let i = 0; i < 2; i++) {
      expect(await run.wait({ timeoutMs: 10_000 })).toMatchObject({ status: "paused" });
      const paused = await run.get();
      expect(paused.pausedAt).toEqual(expect.any(Number));
      await sleep(300);
      const [pending] = await run.pendingInterrupts();
      await engine.operator("ann").resolve(pending!.id, { decision: "approve" });
    }
    const done = await run.wait({ timeoutMs: 10_000 });
    expect(done.status).toBe("succeeded");
    expect(done.pausedAt ?? null).toBeNull();
    expect(done.pausedMs).toBeGreaterThanOrEqual(600);
    const wall = done.endedAt! - done.startedAt!;
    expect(ranMs(done, Date.now())).toBe(wall - done.pausedMs!);
  });
});
