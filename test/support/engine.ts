import { afterAll, afterEach, beforeAll, expect } from "vitest";
import { TERMINAL_RUN_STATUSES, createEngine, type CompiledWorkflow, type Engine, type EngineOptions, type RunHandle, type RunRecord, type Store } from "../../engine/index.js";
import { NoticeLog } from "./notices.js";
import type { StoreFactory } from "./stores.js";

/**
 * Engines for a test file, one per test, on a fresh store of the given kind, with short timings
 * so that retries, kills and leases do not slow the suite down. Their workers' notices go to
 * `notices` (unless the test listens itself), for the test to assert on; those of a kind the test
 * did not ask about are written to stderr when it ends, as a worker without a listener would.
 */
export function engineHarness(factory: StoreFactory) {
  const open: Engine[] = [];
  const stores: Store[] = [];
  const notices = new NoticeLog();
  beforeAll(async () => factory.setup?.());
  afterAll(async () => factory.teardown?.());
  afterEach(async () => {
    // The engines first: a store given to an engine is the caller's to close, once its worker stopped.
    await Promise.all(open.splice(0).map((e) => e.close()));
    await Promise.all(stores.splice(0).map((s) => s.close()));
    notices.end();
  });
  return {
    notices,
    async engine(workflows: CompiledWorkflow[] = [], options: Partial<EngineOptions> = {}): Promise<Engine> {
      const store: Store = options.store ?? (await factory.open());
      if (!options.store) stores.push(store);
      const worker = options.worker ?? {};
      // A test that listens itself (onNotice, or onError, which hears notices without onNotice) keeps them.
      const listen = worker && !worker.onNotice && !worker.onError ? { onNotice: notices.listen } : {};
      const engine = createEngine({
        store,
        workflows,
        ...options,
        worker: worker === false ? false : { killGraceMs: 200, pollMs: 50, leaseMs: 2_000, ...listen, ...worker },
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

/** Approves the question `run` pauses on (as operator ann), once it has paused for it. */
export async function approveWhenAsked(engine: Engine, run: RunHandle): Promise<void> {
  expect(await run.wait()).toMatchObject({ status: "paused", reason: "interrupt" });
  const [pending] = await engine.store.listInterrupts({ runId: run.id, status: "pending" });
  await engine.operator("ann").resolve(pending!.id, { decision: "approve" });
}

/** The run once it has ended (polled: a worker of the engine, or of another, ends it). */
export async function ended(engine: Engine, id: string, timeoutMs = 10_000): Promise<RunRecord> {
  return until(
    async () => {
      const run = await engine.store.getRun(id);
      return run && TERMINAL_RUN_STATUSES.includes(run.status) ? run : undefined;
    },
    timeoutMs,
    `run ${id} to end`,
  );
}
