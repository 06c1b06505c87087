import { Redis } from "ioredis";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { StoreError, openStore, type NewEvent, type Store } from "../../engine/index.js";
import { newId } from "../../engine/ids.js";
import { newRun } from "../../engine/runtime/new-run.js";
import { RedisStore } from "../../engine/store/redis/redis-store.js";
import { until } from "../support/engine.js";
import { RedisServer } from "../support/redis-server.js";

const WF = { name: "memory", version: "v-memory" };

function log(runId: string): NewEvent {
  return { runId, taskId: null, traceId: "t", spanId: null, type: "node.log", actor: "engine", payload: { node: "x", level: "info", message: "x".repeat(200) }, time: Date.now() };
}

/** The server's memory limit and its eviction policy, as pitwall finds them when it opens a store. */
describe("Redis store: the server's memory limit and eviction policy", () => {
  const server = new RedisServer();
  let raw: Redis;
  let opened = 0;
  const stores: Store[] = [];

  /** A URL with a prefix of its own. */
  const nextUrl = () => `${server.url}/0?prefix=${encodeURIComponent(`m${++opened}:`)}`;

  async function track<T extends Store>(store: Promise<T>): Promise<T> {
    const s = await store;
    stores.push(s);
    return s;
  }

  const usedMemory = async () => Number(/^used_memory:(\d+)/m.exec(await raw.info("memory"))![1]);

  /** Sets maxmemory `headroom` bytes above what the server uses now (below it when negative; 0: no limit). */
  async function limitMemory(headroom: number): Promise<number> {
    const used = await usedMemory();
    const limit = headroom === 0 ? 0 : used + headroom;
    await raw.config("SET", "maxmemory", String(limit));
    return limit;
  }

  beforeAll(async () => {
    await server.start();
    raw = new Redis({ port: server.port, lazyConnect: true });
    await raw.connect();
  });
  afterEach(async () => {
    await raw.config("SET", "maxmemory", "0");
    await raw.config("SET", "maxmemory-policy", "noeviction");
  });
  afterAll(async () => {
    await Promise.all(stores.map((s) => s.close()));
    raw.disconnect();
    await server.dispose();
  });

  it("reads the room as a share of maxmemory: low under 5% (or 1 MiB) left, full only at the limit, where a commit is refused as out of memory", async () => {
    const url = nextUrl();
    const store = await track(openStore(url));
    expect(await store.room()).toBeUndefined();
    const id = newId("run");
    await store.createRun(newRun({ id, workflow: WF, state: {}, actor: "test" }));
    const claim = (await store.claimRun({ owner: "w", leaseMs: 60_000 }))!;
    const commit = () => store.commit({ id: newId("c"), runId: id, fence: claim.fence, events: [log(id)] });
    const where = `the memory limit (maxmemory) of Redis at ${url}`;

    // 100 MiB left of about 101 MiB is room: a fixed 256 MiB threshold called it nearly full.
    let limit = await limitMemory(100 * 2 ** 20);
    expect(await store.room()).toMatchObject({ totalBytes: limit, where, state: "ok" });
    // With 30 MB used, 1.5 MiB left is under 5% of the limit: nearly full, above the 1 MiB floor.
    const before = await usedMemory();
    await raw.set("filler", Buffer.alloc(30 * 2 ** 20));
    try {
      // The buffer the value came in is counted too (60 MiB in all) until the server frees it a
      // moment later: a limit set from used_memory before then would leave 30 MiB of room.
      await until(async () => (await usedMemory()) < before + 45 * 2 ** 20, 10_000, "the server to free the filler's query buffer");
      await limitMemory(1.5 * 2 ** 20);
      expect(await store.room()).toMatchObject({ state: "low" });
      await limitMemory(4 * 2 ** 20);
      expect(await store.room()).toMatchObject({ state: "ok" });
    } finally {
      await raw.del("filler");
    }
    // Half a megabyte left of a few: nearly full, and commits still go through (a fixed 1 MiB called it full).
    limit = await limitMemory(512 * 1024);
    expect(await store.room()).toMatchObject({ totalBytes: limit, state: "low" });
    await commit();

    limit = await limitMemory(-64 * 1024);
    expect(await store.room()).toMatchObject({ totalBytes: limit, freeBytes: 0, state: "full" });
    const refused = await commit().catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(StoreError);
    expect((refused as StoreError).message).toMatch(
      new RegExp(`^Redis at ${escape(url)} is out of memory \\(maxmemory \\d+\\.\\d MB, policy noeviction\\): delete old runs \\(pitwall prune\\) or raise maxmemory$`),
    );
    // It passes once room is made: a worker waits and commits then.
    expect((refused as StoreError).transient).toBe(true);
    await limitMemory(0);
    await commit();
    expect(await store.readEvents({ runId: id, types: ["node.log"] })).toHaveLength(2);
  });

  it("opens a full store (the layout marker is not written again), so that start and workers say what is wrong", async () => {
    const url = nextUrl();
    await (await openStore(url)).close();
    await limitMemory(-64 * 1024);
    const store = await track(openStore(url));
    await expect(store.createRun(newRun({ id: newId("run"), workflow: WF, state: {}, actor: "test" }))).rejects.toThrow(/is out of memory/);
    // A new store cannot be made on a full server: said the same way, not as Redis's words.
    await expect(openStore(nextUrl())).rejects.toThrow(new RegExp(`^Redis at .* is out of memory \\(maxmemory [\\d.]+ MB, policy noeviction\\): delete old runs`));
  });

  it("refuses to write to a server that evicts keys at its limit, warns a reader, and warns of an evicting policy without a limit", async () => {
    const url = nextUrl();
    await raw.config("SET", "maxmemory-policy", "allkeys-lru");
    const limit = await limitMemory(100 * 2 ** 20);
    const mb = (limit / 2 ** 20).toFixed(1);
    const refused = await openStore(url).catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(StoreError);
    expect((refused as Error).message).toBe(
      `Redis at ${url} deletes keys when it is full (maxmemory-policy allkeys-lru, maxmemory ${mb} MB), which would lose runs' records silently: set maxmemory-policy noeviction; pitwall writes nothing to it until then`,
    );
    expect(await raw.exists(`m${opened}:schema`)).toBe(0);

    const warnings: string[] = [];
    const reader = await track(openStore(url, { readOnly: true, onWarning: (w) => warnings.push(w) }));
    expect(warnings).toEqual([`Redis at ${url} deletes keys when it is full (maxmemory-policy allkeys-lru, maxmemory ${mb} MB): runs' records may be missing; set maxmemory-policy noeviction`]);
    expect(await reader.room()).toMatchObject({ state: "ok", evicting: "allkeys-lru" });

    warnings.length = 0;
    await limitMemory(0);
    await track(openStore(url, { onWarning: (w) => warnings.push(w) }));
    expect(warnings).toEqual([
      `Redis at ${url} has maxmemory-policy allkeys-lru: it evicts nothing while it has no memory limit (maxmemory 0), but with one it would delete runs' records silently; set maxmemory-policy noeviction`,
    ]);

    // volatile-* evicts only keys with a time to live, which pitwall's records never have.
    warnings.length = 0;
    await raw.config("SET", "maxmemory-policy", "volatile-lru");
    await limitMemory(100 * 2 ** 20);
    await track(openStore(url, { onWarning: (w) => warnings.push(w) }));
    expect(warnings).toEqual([]);
  });

  it("stops writing when the policy is changed to evict under an open store, and goes on once it is changed back", async () => {
    const url = nextUrl();
    const store = await track(RedisStore.open(url, { policyCheckMs: 50 }));
    const create = () => store.createRun(newRun({ id: newId("run"), workflow: WF, state: {}, actor: "test" }));
    await create();
    await raw.config("SET", "maxmemory-policy", "allkeys-random");
    await limitMemory(100 * 2 ** 20);
    // The policy is read again in the background, at most every policyCheckMs.
    let refused: unknown;
    for (let i = 0; i < 50 && !refused; i++) {
      await new Promise((resolve) => setTimeout(resolve, 60));
      refused = await create().then(() => undefined, (e: unknown) => e);
    }
    expect((refused as Error | undefined)?.message).toMatch(/deletes keys when it is full \(maxmemory-policy allkeys-random, maxmemory [\d.]+ MB\), which would lose runs. records silently: set maxmemory-policy noeviction; pitwall writes nothing to it until then$/);
    const before = (await store.listRuns()).runs.length;
    await expect(create()).rejects.toThrow(/allkeys-random/);
    expect((await store.listRuns()).runs.length).toBe(before);
    expect(await store.room()).toMatchObject({ evicting: "allkeys-random" });

    await raw.config("SET", "maxmemory-policy", "noeviction");
    let again = false;
    for (let i = 0; i < 50 && !again; i++) {
      await new Promise((resolve) => setTimeout(resolve, 60));
      again = await create().then(() => true, () => false);
    }
    expect(again).toBe(true);
  });
});

function escape(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
}
