import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createEngine, openStore, type EventRecord, type Store } from "../../engine/index.js";
import { until } from "../support/engine.js";
import { BACKOFF_MS, TIMER_SECONDS, WORKFLOWS, type WorkflowName } from "../support/durable-workflows.js";
import { kill, spawnWorker } from "../support/processes.js";
import { RedisServer } from "../support/redis-server.js";

// A worker whose clock is 15 s off the Redis server's: its timers are judged by the server's
// clock, which hands it the run when the time has come, so it takes the run once for the time
// it parks on and once as it wakes — not hundreds of times — and wakes on the server's time.
const SKEW_MS = 15_000;

describe("Redis store: a worker whose clock is off the server's", () => {
  const server = new RedisServer();
  beforeAll(() => server.start());
  afterAll(() => server.dispose());

  /** The run's claims (each stamped by the server's clock) once a worker `skewMs` off has finished it. */
  async function claims(workflow: WorkflowName, skewMs: number): Promise<EventRecord[]> {
    const url = `${server.url}/0?prefix=${workflow}${skewMs}:`;
    const store: Store = await openStore(url);
    const engine = createEngine({ store, workflows: [WORKFLOWS[workflow]()], worker: false });
    const worker = spawnWorker(url, workflow, 2000, "serve", skewMs);
    try {
      const { id } = await engine.start(workflow, {});
      await until(async () => (await store.getRun(id))?.status === "succeeded", 30_000);
      return (await store.readEvents({ runId: id })).filter((e) => e.type === "run.claimed");
    } finally {
      await kill(worker);
      await engine.close();
      await store.close();
    }
  }

  /** How long after its first claim the run was claimed again, having been claimed twice and no more. */
  async function claimedAgainAfter(workflow: WorkflowName, skewMs: number): Promise<number> {
    const claimed = await claims(workflow, skewMs);
    expect(claimed, `claims by the worker ${skewMs} ms off`).toHaveLength(2);
    return claimed[1]!.time - claimed[0]!.time;
  }

  it(`a wait node's run: claimed twice, woken ${TIMER_SECONDS} s after it parked, the worker's clock 15 s behind or ahead`, async () => {
    for (const after of await Promise.all([claimedAgainAfter("timer", -SKEW_MS), claimedAgainAfter("timer", SKEW_MS)])) {
      expect(after).toBeGreaterThanOrEqual(TIMER_SECONDS * 1000);
      expect(after).toBeLessThan(TIMER_SECONDS * 1000 + 1500);
    }
  }, 60_000);

  it(`a retry's backoff longer than a worker holds a run: claimed twice, retried ${BACKOFF_MS / 1000} s later, the worker's clock 15 s behind or ahead`, async () => {
    for (const after of await Promise.all([claimedAgainAfter("backoff", -SKEW_MS), claimedAgainAfter("backoff", SKEW_MS)])) {
      expect(after).toBeGreaterThanOrEqual(BACKOFF_MS);
      expect(after).toBeLessThan(BACKOFF_MS + 1500);
    }
  }, 60_000);
});
