import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { createEngine, openStore, type EventRecord, type Store } from "../../engine/index.js";
import { fanout } from "../support/fanout-workflow.js";
import { Fleet, busiest, checkRuns, owners, staleWrites, takenOverFrom, waitFor, waitUntilSettled } from "../support/fleet.js";
import { RedisServer } from "../support/redis-server.js";

const RUNS = 200;
const WORKERS = 4;
const LEASE_MS = 1_500;

/**
 * Four worker processes share one redis-server (appendonly, fsync always) and execute 200 runs
 * of a fan-out workflow started from this process; each test disturbs them in one way.
 */
// Longer than the waits below add up to (a quarter of the runs, a takeover, all settled): they,
// not the test's deadline, say what did not happen in time on a loaded machine.
describe("Redis: worker processes sharing one server", { timeout: 200_000 }, () => {
  let server: RedisServer;
  let store: Store;
  let fleet: Fleet | undefined;

  beforeEach(async () => {
    server = new RedisServer({ appendonly: true, appendfsync: "always" });
    await server.start();
    store = await openStore(server.url);
  });

  afterEach(async () => {
    await fleet?.stop();
    fleet = undefined;
    await store.close();
    await server.dispose();
  });

  async function startRuns(): Promise<string[]> {
    const engine = createEngine({ store, worker: false, workflows: [fanout] });
    const ids: string[] = [];
    for (let i = 0; i < RUNS; i++) ids.push((await engine.start(fanout, {})).id);
    return ids;
  }

  async function midway(): Promise<void> {
    await waitFor(async () => (await store.countRuns()).succeeded >= RUNS / 4, 60_000, "a quarter of the runs to finish");
  }

  it("finishes every run with one recorded success per task, and a subscriber here is handed every event the workers commit, in order, as they commit them", async () => {
    fleet = await Fleet.start(server.url, WORKERS, { leaseMs: LEASE_MS });
    const ids = await startRuns();
    await waitUntilSettled(store, RUNS);
    expect(await checkRuns(store, ids)).toEqual([]);
    const claimedBy = new Set((await store.readEvents({ types: ["run.claimed"] })).map((e) => (e.payload as { worker: string }).worker));
    expect(claimedBy.size).toBe(WORKERS);

    // This process follows the store while the workers, other processes, commit. Each run starts
    // once the end of the one before has been handed on: a subscription that did not pass on
    // other processes' events as they are committed would stall here. (How soon it passes them
    // on is a figure of the `redis` benchmark.)
    const after = await store.lastEventSeq();
    const seen: EventRecord[] = [];
    const controller = new AbortController();
    const watching = (async () => {
      for await (const event of store.subscribe({ after, signal: controller.signal })) seen.push(event);
    })();
    const engine = createEngine({ store, worker: false, workflows: [fanout] });
    const followed: string[] = [];
    for (let i = 0; i < 20; i++) {
      const { id } = await engine.start(fanout, {});
      followed.push(id);
      await waitFor(() => seen.some((e) => e.runId === id && e.type === "run.succeeded"), 30_000, `the subscription to hand on the end of run ${i + 1} of 20`);
    }
    controller.abort();
    await watching;
    expect(await checkRuns(store, followed)).toEqual([]);
    // Every event committed since it began, once each and in the order of the store's sequence,
    // up to the last it handed on before it was stopped.
    expect(seen).toEqual((await store.readEvents({ after })).slice(0, seen.length));
    expect([...new Set(seen.filter((e) => e.type === "run.claimed").map((e) => e.runId))]).toEqual(followed);
  });

  it("finishes the runs of a worker killed with SIGKILL on the other workers", async () => {
    fleet = await Fleet.start(server.url, WORKERS, { leaseMs: LEASE_MS });
    const ids = await startRuns();
    await midway();
    const victim = await busiest(store);
    fleet.worker(victim).process.kill("SIGKILL");
    // Its runs stay recorded as its own until another worker takes them over, a lease later.
    const orphans = (await owners(store)).get(victim)!;
    expect(orphans.length).toBeGreaterThan(0);
    await waitUntilSettled(store, RUNS);
    expect(await checkRuns(store, ids)).toEqual([]);
    for (const runId of orphans) {
      const claims = await store.readEvents({ runId, types: ["run.claimed"] });
      const last = claims[claims.length - 1]!.payload as { worker: string; recovered: boolean };
      expect(last.worker).not.toBe(victim);
      expect(takenOverFrom(victim, claims)).toBe(true);
      expect((await store.getRun(runId))?.recoveries).toBeGreaterThanOrEqual(1);
    }
  });

  it("refuses every commit of a worker stopped past its lease (SIGSTOP): nothing of it is recorded after the takeover", async () => {
    fleet = await Fleet.start(server.url, WORKERS, { leaseMs: LEASE_MS });
    const ids = await startRuns();
    await midway();
    const sleeper = await busiest(store);
    const { process: child, lines } = fleet.worker(sleeper);
    child.kill("SIGSTOP");
    const held = (await owners(store)).get(sleeper)!;
    expect(held.length).toBeGreaterThan(0);
    await waitFor(
      async () => {
        const now = await owners(store);
        return !held.some((id) => now.get(sleeper)?.includes(id));
      },
      30_000,
      "the stopped worker's runs to be taken over",
    );
    child.kill("SIGCONT");
    await waitUntilSettled(store, RUNS);
    expect(await checkRuns(store, ids)).toEqual([]);
    const events: EventRecord[] = [];
    for (const runId of held) events.push(...(await store.readEvents({ runId })));
    expect(held.every((runId) => takenOverFrom(sleeper, events.filter((e) => e.runId === runId)))).toBe(true);
    expect(staleWrites(events)).toEqual([]);
    // Once resumed, it found out through a refused commit or lease renewal, and stopped those runs.
    await waitFor(() => lines.some((l) => held.includes(l.runId as string) && String(l.why).startsWith("lease lost")), 10_000, "the resumed worker to notice");
  });

  it("loses nothing when Redis is killed and restarted from its append-only file during the runs", async () => {
    fleet = await Fleet.start(server.url, WORKERS, { leaseMs: LEASE_MS });
    const ids = await startRuns();
    await midway();
    const before = await store.lastEventSeq();
    await server.crashAndRestart(300);
    expect(await store.lastEventSeq()).toBeGreaterThanOrEqual(before);
    await waitUntilSettled(store, RUNS);
    expect(await checkRuns(store, ids)).toEqual([]);
  });
});
