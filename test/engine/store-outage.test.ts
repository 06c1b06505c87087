import { describe, expect, it } from "vitest";
import { z } from "zod";
import { StoreError, outlastingSubscription, workflow, type EventRecord, type Store, type SubscribeOptions } from "../../engine/index.js";
import { engineHarness, until } from "../support/engine.js";
import { storeFactories } from "../support/stores.js";

const state = z.object({ n: z.number().default(0) });
const steps = workflow("outage-steps", { state })
  .node("a", (s) => ({ n: s.n + 1 }), { next: "b" })
  .node("b", (s) => ({ n: s.n + 1 }), { next: "END" })
  .compile();

/**
 * The store, whose reads fail as a store does for a while (a lost connection, a file locked by a
 * backup) once `fail(n)` is called: the next n reads, then it answers again. A subscription's own
 * reads are inside the store: it fails as one would, before giving its next event.
 */
function flaky(store: Store): { store: Store; fail: (reads: number) => void; failed: () => number } {
  let left = 0;
  let failed = 0;
  const failure = () => {
    left--;
    failed++;
    return new StoreError(`store ${store.description} does not answer for now`, { transient: true });
  };
  const reads = new Set<string | symbol>(["readEvents", "lastEventSeq", "getRun"]);
  const proxy = new Proxy(store, {
    get(target, key) {
      const value = Reflect.get(target, key) as unknown;
      if (typeof value !== "function") return value;
      if (key === "subscribe") {
        return async function* (options: SubscribeOptions) {
          for await (const event of target.subscribe(options)) {
            if (left > 0) throw failure();
            yield event;
          }
        };
      }
      if (!reads.has(key)) return value.bind(target);
      return async (...args: unknown[]) => {
        if (left > 0) throw failure();
        return (value as (...a: unknown[]) => Promise<unknown>).apply(target, args);
      };
    },
  });
  return { store: proxy, fail: (n) => (left = n), failed: () => failed };
}

describe.each(storeFactories.filter((f) => f.name !== "memory"))("followers outlast a store's passing failures ($name store)", (factory) => {
  const harness = engineHarness(factory);

  it("a subscription says when the store stops answering and when it answers again, and goes on from where it stopped: no event lost or given twice", async () => {
    const engine = await harness.engine([steps]);
    const { store, fail, failed } = flaky(engine.store);
    const told: (string | undefined)[] = [];
    const heard: EventRecord[] = [];
    const stop = new AbortController();
    const following = (async () => {
      for await (const event of outlastingSubscription(store, { signal: stop.signal }, (error) => told.push(error?.message))) heard.push(event);
    })();
    const first = await engine.start(steps);
    await until(() => heard.some((e) => e.runId === first.id && e.type === "run.succeeded"), 10_000, "the first run's events");
    fail(3);
    const second = await engine.start(steps);
    await until(() => heard.some((e) => e.runId === second.id && e.type === "run.succeeded"), 10_000, "the second run's events, after the outage");
    stop.abort();
    await following;
    expect(failed()).toBe(3);
    expect(told).toEqual([`store ${engine.store.description} does not answer for now`, undefined]);
    const stored = (await engine.store.readEvents({ after: heard[0]!.seq - 1 })).filter((e) => e.seq <= heard.at(-1)!.seq);
    expect(heard.map((e) => e.seq)).toEqual(stored.map((e) => e.seq));
  });

  it("a wait given onStoreFailure waits the outage out; without, it fails with the store's error as before", async () => {
    const engine = await harness.engine([steps]);
    const { store, fail } = flaky(engine.store);
    const watcher = await harness.engine([], { store, worker: false });
    const told: (string | undefined)[] = [];
    const run = await watcher.start(steps);
    fail(2);
    const settled = await watcher.run(run.id).wait({ until: "end", timeoutMs: 10_000, onStoreFailure: (error) => told.push(error?.message) });
    expect(settled.status).toBe("succeeded");
    expect(told).toEqual([`store ${engine.store.description} does not answer for now`, undefined]);
    fail(1);
    await expect(watcher.run(run.id).wait({ timeoutMs: 10_000 })).rejects.toThrow(`store ${engine.store.description} does not answer for now`);
  });
});
