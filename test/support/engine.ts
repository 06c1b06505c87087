import { afterAll, afterEach, beforeAll } from "vitest";
import { createEngine, type CompiledWorkflow, type Engine, type EngineOptions, type Store } from "../../engine/index.js";
import type { StoreFactory } from "./stores.js";

/**
 * Engines for a test file, one per test, on a fresh store of the given kind, with short timings
 * so that retries, kills and leases do not slow the suite down.
 */
export function engineHarness(factory: StoreFactory) {
  const open: Engine[] = [];
  const stores: Store[] = [];
  beforeAll(async () => factory.setup?.());
  afterAll(async () => factory.teardown?.());
  afterEach(async () => {
    // The engines first: a store given to an engine is the caller's to close, once its worker stopped.
    await Promise.all(open.splice(0).map((e) => e.close()));
    await Promise.all(stores.splice(0).map((s) => s.close()));
  });
  return {
    async engine(workflows: CompiledWorkflow[] = [], options: Partial<EngineOptions> = {}): Promise<Engine> {
      const store: Store = options.store ?? (await factory.open());
      if (!options.store) stores.push(store);
      const engine = createEngine({
        store,
        workflows,
        ...options,
        worker: options.worker === false ? false : { killGraceMs: 200, pollMs: 50, leaseMs: 2_000, ...(options.worker ?? {}) },
      });
      open.push(engine);
      return engine;
    },
  };
}

export const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Polls until `check` returns a truthy value (no fixed sleeps in tests). */
export async function until<T>(check: () => Promise<T> | T, timeoutMs = 5_000, what = "condition"): Promise<NonNullable<T>> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await check();
    if (value) return value as NonNullable<T>;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(10);
  }
}
