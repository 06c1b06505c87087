import { Redis } from "ioredis";
import { z } from "zod";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Operator, StoreError, createEngine, openStore, workflow, type NewEvent, type Store } from "../../engine/index.js";
import { newId } from "../../engine/ids.js";
import { newRun } from "../../engine/runtime/new-run.js";
import { parseRedisUrl } from "../../engine/store/redis/connection.js";
import { ScriptArgs, callScript } from "../../engine/store/redis/lua/scripts.js";
import { newTaskRecord } from "../../engine/runtime/transitions.js";
import { runClaimedEvent } from "../../engine/store/rules.js";
import { waitFor } from "../support/fleet.js";
import { NoticeLog } from "../support/notices.js";
import { checkpoint } from "../support/records.js";
import { RedisServer } from "../support/redis-server.js";

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

function log(runId: string): NewEvent {
  return { runId, taskId: null, traceId: "t", spanId: null, type: "node.log", actor: "engine", payload: { node: "x", level: "info", message: "hi" }, time: Date.now() };
}

describe("Redis store", () => {
  const server = new RedisServer();
  let raw: Redis;
  let opened = 0;
  const stores: Store[] = [];

  /** A store with a prefix of its own (returned with the prefix, to look at its keys). */
  async function open(query = ""): Promise<{ store: Store; prefix: string }> {
    const prefix = `s${++opened}:`;
    const store = await openStore(`${server.url}/0?prefix=${encodeURIComponent(prefix)}${query}`);
    stores.push(store);
    return { store, prefix };
  }

  async function queuedRun(store: Store, version = "v1", extra: { parentRunId?: string } = {}): Promise<string> {
    const id = newId("run");
    await store.createRun(newRun({ id, workflow: { name: `wf-${version}`, version }, state: {}, actor: "test", ...extra }));
    return id;
  }

  /** The owner and delivery count of the only pending entry of a lease stream. */
  async function leaseHolder(stream: string): Promise<[string, number]> {
    const pending = (await raw.xpending(stream, "owners", "-", "+", 10)) as [string, string, number, number][];
    expect(pending).toHaveLength(1);
    return [pending[0]![1], pending[0]![3]];
  }

  beforeAll(async () => {
    await server.start();
    raw = new Redis({ port: server.port, lazyConnect: true });
    await raw.connect();
  });
  afterAll(async () => {
    await Promise.all(stores.map((s) => s.close()));
    raw.disconnect();
    await server.dispose();
  });

  it("reads user, password, database, TLS, prefix and retention from the URL", () => {
    const target = parseRedisUrl("rediss://ann:p%40ss@cache.example:6380/3?prefix=team%3A&retention=500");
    expect(target).toMatchObject({
      description: "rediss://ann:***@cache.example:6380/3?prefix=team%3A&retention=500",
      prefix: "team:",
      eventRetention: 500,
      options: { host: "cache.example", port: 6380, db: 3, username: "ann", password: "p@ss", tls: { servername: "cache.example" } },
    });
    expect(parseRedisUrl("redis://localhost")).toMatchObject({ prefix: "pitwall:", options: { port: 6379, db: 0 } });
  });

  // No record has a time to live (only a claim's resend marker does), so a volatile-* maxmemory-policy evicts nothing a run needs.
  it("keeps every key under its prefix and a run's keys under its {runId} hash tag, gives no record a time to live, and never sends KEYS", async () => {
    await raw.config("RESETSTAT");
    const { store, prefix } = await open();
    const wf = workflow("layout", { state: z.object({ n: z.number().default(0) }) })
      .node("one", () => ({ n: 1 }), { next: "pause" })
      .wait("pause", { seconds: 0.2, next: "two" })
      .node("two", (s) => ({ n: s.n + 1 }))
      .compile();
    const engine = createEngine({ store, workflows: [wf], worker: { pollMs: 50 } });
    const run = await engine.start(wf, {});
    expect((await run.wait({ timeoutMs: 10_000 })).status).toBe("succeeded");
    await engine.worker!.stop();
    const keys: string[] = [];
    let cursor = "0";
    do {
      const [next, batch] = await raw.scan(cursor, "MATCH", `${prefix}*`, "COUNT", 1000);
      keys.push(...batch);
      cursor = next;
    } while (cursor !== "0");
    const runKeys = keys.filter((k) => k.startsWith(`${prefix}run:`));
    expect(runKeys.length).toBeGreaterThan(4);
    for (const key of runKeys) expect(key.startsWith(`${prefix}run:{${run.id}}`)).toBe(true);
    const expiring: string[] = [];
    for (const key of keys) if ((await raw.pttl(key)) !== -1) expiring.push(key.slice(prefix.length));
    expect(expiring.length).toBeGreaterThan(0);
    expect(expiring.filter((key) => !key.startsWith("claim-req:"))).toEqual([]);
    expect(await raw.info("commandstats")).not.toMatch(/cmdstat_keys:/);
  });

  it("opened read-only, writes nothing: not even a new store's layout marker, nor a refused write", async () => {
    const prefix = `s${++opened}:`;
    const url = `${server.url}/0?prefix=${encodeURIComponent(prefix)}`;
    const keys = async () => (await raw.scan("0", "MATCH", `${prefix}*`, "COUNT", 1000))[1];
    const empty = await openStore(url, { readOnly: true });
    stores.push(empty);
    expect((await empty.listRuns()).runs).toEqual([]);
    await expect(empty.createRun(newRun({ id: "run-1", workflow: { name: "wf", version: "v1" }, state: {}, actor: "test" }))).rejects.toThrow(
      `store ${server.url}/0?prefix=${encodeURIComponent(prefix)} is open read-only: nothing can be written to it`,
    );
    expect(await keys()).toEqual([]);
    const writer = await openStore(url);
    stores.push(writer);
    const id = await queuedRun(writer);
    const reader = await openStore(url, { readOnly: true });
    stores.push(reader);
    expect((await reader.getRun(id))?.status).toBe("queued");
    await expect(reader.claimRun({ owner: "w", leaseMs: 1000 })).rejects.toThrow(/is open read-only/);
    expect((await writer.getRun(id))?.status).toBe("queued");
  });

  /** A run that succeeded after `steps` steps of one task and three events each. */
  async function longRun(store: Store, steps: number): Promise<string> {
    const id = await queuedRun(store);
    const { fence } = (await store.claimRun({ owner: "w1", leaseMs: 60_000, runId: id }))!;
    for (let step = 1; step <= steps; step++) {
      await store.commit({
        id: `c${step}`,
        runId: id,
        fence,
        checkpoint: checkpoint(id, step, [["n", "set", step]]),
        tasks: [newTaskRecord({ id: `${id}:${step}:work`, runId: id, step, node: "work", index: null, status: "succeeded" })],
        events: [log(id), log(id), log(id)],
        ...(step === steps ? { run: { status: "succeeded", owner: null, leaseUntil: null, endedAt: Date.now() } } : {}),
      });
    }
    return id;
  }

  it("deletes a long run in script calls of bounded work, and a deletion left unfinished is finished by the next one", async () => {
    const { store, prefix } = await open();
    const long = await longRun(store, 1500);
    const evalshaCalls = async () => Number(/^cmdstat_evalsha:calls=(\d+)/m.exec(await raw.info("commandstats"))?.[1] ?? 0);
    const before = await evalshaCalls();
    await store.deleteRun(long);
    // 4,500 events and 1,500 tasks at 1,000 a call: one call to delete, at least seven to purge.
    expect((await evalshaCalls()) - before).toBeGreaterThanOrEqual(8);
    expect((await store.readEvents()).filter((e) => e.runId === long)).toEqual([]);

    // A process stopped after the run was deleted and before its purge was done.
    const stopped = await longRun(store, 20);
    expect((await callScript(raw, "deleteRun", new ScriptArgs(prefix, 100_000).add(stopped)))[0]).toBe("ok");
    expect(await store.getRun(stopped)).toBeUndefined();
    expect(await store.listTasks(stopped)).toEqual([]);
    expect(await store.readEvents({ runId: stopped })).toEqual([]);
    expect((await store.readEvents()).filter((e) => e.runId === stopped)).toHaveLength(2 + 20 * 3);
    const next = await longRun(store, 1);
    await store.deleteRun(next);
    expect((await store.readEvents()).filter((e) => e.runId === stopped || e.runId === next)).toEqual([]);
    expect(await raw.exists(`${prefix}purging`)).toBe(0);
    const [, left] = await raw.scan("0", "MATCH", `${prefix}run:*`, "COUNT", 10_000);
    expect(left).toEqual([]);
  });

  it("takes a create sent again (its reply lost) as done, but not another workflow's run made with that id in the same millisecond", async () => {
    const { store } = await open();
    const init = newRun({ id: "run-twice", workflow: { name: "wf", version: "v1" }, state: {}, actor: "test" });
    await store.createRun(init);
    await expect(store.createRun(init)).resolves.toBeDefined();
    // The same first checkpoint (same state, same millisecond), another workflow: not a resend.
    const other = { ...init, run: { ...init.run, workflow: "other" } };
    await expect(store.createRun(other)).rejects.toThrow("run run-twice already exists");
    expect((await store.getRun("run-twice"))?.workflow).toBe("wf");
  });

  it("writes the same run.claimed event as the other stores", async () => {
    const { store } = await open();
    const id = await queuedRun(store);
    const first = (await store.claimRun({ owner: "w1", leaseMs: 60_000 }))!;
    const [event] = await store.readEvents({ runId: id, types: ["run.claimed"] });
    expect(event).toMatchObject(runClaimedEvent(first.run, "w1", first.fence, false, event!.time));
  });

  it("never hands out a fence twice, even after the server lost its counter's last increments", async () => {
    const { store, prefix } = await open();
    const first = (await store.claimRun({ owner: "w1", leaseMs: 60_000, runId: await queuedRun(store) }))!;
    const second = (await store.claimRun({ owner: "w1", leaseMs: 60_000, runId: await queuedRun(store) }))!;
    expect(second.fence).toBeGreaterThan(first.fence);
    await raw.set(`${prefix}fence`, "0"); // as a crash between two fsyncs of the append-only file would
    const third = (await store.claimRun({ owner: "w1", leaseMs: 60_000, runId: await queuedRun(store) }))!;
    expect(third.fence).toBeGreaterThan(second.fence);
  });

  it("lets exactly one of many racing workers take over an expired lease, and counts the takeover", async () => {
    const { store, prefix } = await open();
    const id = await queuedRun(store);
    await store.claimRun({ owner: "lost", leaseMs: 100 });
    await sleep(150);
    const racers = await Promise.all(Array.from({ length: 6 }, () => openStore(`${server.url}?prefix=${encodeURIComponent(prefix)}`)));
    stores.push(...racers);
    const claims = await Promise.all(racers.map((s, i) => s.claimRun({ owner: `racer-${i}`, leaseMs: 100 })));
    const winners = claims.filter((c) => c !== undefined);
    expect(winners).toHaveLength(1);
    expect(winners[0]).toMatchObject({ recovered: true, run: { id, recoveries: 1 } });
    // The lease entry moved to the new owner; its delivery count records the takeover.
    const [owner, deliveries] = await leaseHolder(`${prefix}leases:100`);
    expect([owner, deliveries]).toEqual([winners[0]!.run.owner, 2]);
    // Consumers that hold nothing (the lost worker, the readers of offers) are forgotten.
    const consumers = (await raw.xinfo("CONSUMERS", `${prefix}leases:100`, "owners")) as string[][];
    expect(consumers.map((c) => c[1])).toEqual([owner]);
    expect(await raw.xinfo("CONSUMERS", `${prefix}offers:v1`, "workers")).toEqual([]);
  });

  it("pauses as poison a run whose workers keep getting lost", async () => {
    const { store } = await open();
    const wf = workflow("poison", { state: z.object({ n: z.number().default(0) }) }).node("work", () => ({ n: 1 })).compile();
    const starter = createEngine({ store, workflows: [wf], worker: false });
    const run = await starter.start(wf, {});
    for (const ghost of ["ghost-1", "ghost-2"]) {
      expect(await store.claimRun({ owner: ghost, leaseMs: 50 })).toBeDefined();
      await sleep(80);
    }
    const notices = new NoticeLog();
    const engine = createEngine({ store, workflows: [wf], worker: { maxRecoveries: 1, pollMs: 50, onNotice: notices.listen } });
    const settled = await run.wait({ timeoutMs: 10_000 });
    await engine.worker!.stop();
    expect(settled).toMatchObject({ status: "paused", reason: "poison", recoveries: 2 });
    // Taken over from the last worker lost, to be paused.
    expect(notices.of("took-over")).toMatchObject([{ runId: run.id, from: "ghost-2" }]);
  });

  it("claims a timer run only once it is due, from the timer set", async () => {
    const { store, prefix } = await open();
    const id = await queuedRun(store);
    const { fence } = (await store.claimRun({ owner: "w", leaseMs: 60_000 }))!;
    const wakeAt = Date.now() + 200;
    await store.commit({ id: newId("c"), runId: id, fence, run: { status: "queued", owner: null, leaseUntil: null, wakeAt } });
    expect(Number(await raw.zscore(`${prefix}timers`, id))).toBe(wakeAt);
    expect(await store.claimRun({ owner: "w", leaseMs: 60_000 })).toBeUndefined();
    await sleep(250);
    expect((await store.claimRun({ owner: "w", leaseMs: 60_000 }))?.run.id).toBe(id);
    expect(await raw.zscore(`${prefix}timers`, id)).toBeNull();
  });

  it("offers a run waiting for a child as soon as the child ends, even without a wake", async () => {
    const { store } = await open();
    const parent = await queuedRun(store);
    const child = await queuedRun(store, "v1", { parentRunId: parent });
    const p = (await store.claimRun({ owner: "w", leaseMs: 60_000, runId: parent }))!;
    await store.commit({ id: newId("c"), runId: parent, fence: p.fence, run: { status: "queued", owner: null, leaseUntil: null, waitingOn: child } });
    const c = (await store.claimRun({ owner: "w", leaseMs: 60_000 }))!;
    expect(c.run.id).toBe(child);
    expect(await store.claimRun({ owner: "w", leaseMs: 60_000 })).toBeUndefined();
    await store.commit({ id: newId("c"), runId: child, fence: c.fence, run: { status: "succeeded", owner: null, leaseUntil: null } });
    expect((await store.claimRun({ owner: "w", leaseMs: 60_000 }))?.run.id).toBe(parent);
  });

  it("counts a workflow's running runs for runsAtOnce from a set of its own, built once in a store that had none, and not held back by a member whose run ended", async () => {
    const { store, prefix } = await open();
    const running = `${prefix}runs:running:wf-v1`;
    const runsAtOnce = { "wf-v1": 2 };
    for (const version of ["v1", "v2"]) {
      const definition = { name: `wf-${version}`, state: {}, start: "x", nodes: {}, limits: { maxSteps: 10, concurrency: 1 }, interruptBefore: [], interruptAfter: [] };
      await store.putWorkflow({ version, name: `wf-${version}`, definition: definition as never, createdAt: 1 });
    }
    const ids: string[] = [];
    for (let i = 0; i < 4; i++) ids.push(await queuedRun(store));
    const other = await queuedRun(store, "v2");
    const first = (await store.claimRun({ owner: "w", leaseMs: 60_000, runId: ids[0]! }))!;
    const second = (await store.claimRun({ owner: "w", leaseMs: 60_000, runId: ids[1]! }))!;
    expect((await raw.smembers(running)).sort()).toEqual([ids[0], ids[1]].sort());
    // As a pitwall that kept no such sets left the store: the first claim that counts builds them.
    await raw.del(running, `${prefix}runs:running-indexed`);
    expect(await store.claimRun({ owner: "w", leaseMs: 60_000, runsAtOnce, versions: ["v1"] })).toBeUndefined();
    expect((await raw.smembers(running)).sort()).toEqual([ids[0], ids[1]].sort());
    expect(await raw.get(`${prefix}runs:running-indexed`)).toBe("1");
    expect((await store.claimRun({ owner: "w", leaseMs: 60_000, runsAtOnce }))?.run.id).toBe(other);
    // A run that ends leaves the set, and its place is taken.
    await store.commit({ id: newId("c"), runId: ids[0]!, fence: first.fence, run: { status: "succeeded", owner: null, leaseUntil: null } });
    expect(await raw.smembers(running)).toEqual([ids[1]]);
    expect((await store.claimRun({ owner: "w", leaseMs: 60_000, runsAtOnce }))?.run.id).toBe(ids[2]);
    // A member left behind by a run that ended without leaving it is dropped once the count reaches the limit.
    await store.commit({ id: newId("c"), runId: ids[1]!, fence: second.fence, run: { status: "succeeded", owner: null, leaseUntil: null } });
    await raw.sadd(running, ids[1]!);
    expect((await store.claimRun({ owner: "w", leaseMs: 60_000, runsAtOnce }))?.run.id).toBe(ids[3]);
    expect((await raw.smembers(running)).sort()).toEqual([ids[2], ids[3]].sort());
    expect(await store.claimRun({ owner: "w", leaseMs: 60_000, runsAtOnce })).toBeUndefined();
  });

  it("lists deadlines from indexes built by the first read of a process that writes, in a store written without them; read-only, from the runs and interrupts themselves", async () => {
    const { store, prefix } = await open();
    const timed = newId("run");
    await store.createRun(newRun({ id: timed, workflow: { name: "wf-v1", version: "v1" }, state: {}, actor: "test", deadlineSeconds: 600 }));
    const asking = await queuedRun(store);
    const { fence } = (await store.claimRun({ owner: "w", leaseMs: 60_000, runId: asking }))!;
    const request = { question: "ok?", decisions: ["approve", "reject"] };
    const pending = { id: `int-${asking}`, runId: asking, taskId: null, node: "ask", step: 1, kind: "node" as const, request, status: "pending" as const, resolution: null, createdAt: 1, deadline: { at: Date.now() + 5_000, decision: "approve" } };
    await store.commit({ id: newId("c"), runId: asking, fence, interrupts: [pending] });
    const expected = await store.listDeadlines();
    expect(expected.map((d) => d.id)).toEqual([pending.id, timed]);
    // As a release without the indexes left the store.
    const indexes = [`${prefix}deadlines:runs`, `${prefix}deadlines:interrupts`, `${prefix}deadlines-indexed`];
    await raw.del(...indexes);
    const url = `${server.url}/0?prefix=${encodeURIComponent(prefix)}`;
    const reader = await openStore(url, { readOnly: true });
    stores.push(reader);
    expect(await reader.listDeadlines()).toEqual(expected);
    expect(await raw.exists(...indexes)).toBe(0);
    const writer = await openStore(url);
    stores.push(writer);
    expect(await writer.listDeadlines()).toEqual(expected);
    expect(await raw.exists(...indexes)).toBe(3);
    expect(await reader.listDeadlines()).toEqual(expected);
  });

  it("offers the oldest runnable run first, across the versions a worker can run, and no other", async () => {
    const { store } = await open();
    const older = await queuedRun(store, "v1");
    const newer = await queuedRun(store, "v2");
    await queuedRun(store, "v3");
    expect((await store.claimRun({ owner: "w", leaseMs: 60_000, versions: ["v2", "v1"] }))?.run.id).toBe(older);
    expect((await store.claimRun({ owner: "w", leaseMs: 60_000, versions: ["v2", "v1"] }))?.run.id).toBe(newer);
    expect(await store.claimRun({ owner: "w", leaseMs: 60_000, versions: ["v2", "v1"] })).toBeUndefined();
  });

  it("leaves an expired run of another version to a worker that can run it, at once", async () => {
    const { store, prefix } = await open();
    const id = await queuedRun(store, "v2");
    await store.claimRun({ owner: "lost", leaseMs: 100 });
    await sleep(150);
    expect(await store.claimRun({ owner: "v1-only", leaseMs: 100, versions: ["v1"] })).toBeUndefined();
    expect(await leaseHolder(`${prefix}leases:100`)).toEqual(["lost", 1]);
    expect(await store.claimRun({ owner: "v2-able", leaseMs: 100, versions: ["v2"] })).toMatchObject({ recovered: true, run: { id } });
  });

  it("trims the store-wide event stream to its retention, never dropping events of unfinished runs", async () => {
    await raw.config("SET", "stream-node-max-entries", "10");
    const { store } = await open("&retention=5");
    const finished = await queuedRun(store);
    const f = (await store.claimRun({ owner: "w", leaseMs: 60_000, runId: finished }))!;
    for (let i = 0; i < 10; i++) await store.commit({ id: newId("c"), runId: finished, fence: f.fence, events: Array.from({ length: 10 }, () => log(finished)) });
    await store.commit({ id: newId("c"), runId: finished, fence: f.fence, run: { status: "succeeded", owner: null, leaseUntil: null } });
    const unfinished = await queuedRun(store);
    const u = (await store.claimRun({ owner: "w", leaseMs: 60_000, runId: unfinished }))!;
    for (let i = 0; i < 5; i++) await store.commit({ id: newId("c"), runId: unfinished, fence: u.fence, events: Array.from({ length: 5 }, () => log(unfinished)) });
    const all = await store.readEvents();
    const kept = (runId: string) => all.filter((e) => e.runId === runId).map((e) => e.runSeq);
    expect(kept(unfinished)).toEqual(Array.from({ length: 27 }, (_, i) => i + 1));
    expect(kept(finished).length).toBeLessThan(20);
    expect((await store.readEvents({ runId: finished })).length).toBe(102);
    await raw.config("SET", "stream-node-max-entries", "100");
  });

  it("lists runs of several statuses newest first, page by page", async () => {
    const { store } = await open();
    const ids: string[] = [];
    for (let i = 0; i < 7; i++) ids.push(await queuedRun(store));
    for (const id of ids.slice(0, 4)) {
      const { fence } = (await store.claimRun({ owner: "w", leaseMs: 60_000, runId: id }))!;
      if (id === ids[1] || id === ids[3]) await store.commit({ id: newId("c"), runId: id, fence, run: { status: "paused", reason: "killed", owner: null, leaseUntil: null } });
    }
    const runs = await Promise.all(ids.map((id) => store.getRun(id)));
    const expected = runs
      .filter((r) => r!.status === "queued" || r!.status === "paused")
      .sort((a, b) => b!.updatedAt - a!.updatedAt || (a!.id < b!.id ? 1 : -1))
      .map((r) => r!.id);
    const paged: string[] = [];
    let cursor: string | undefined;
    do {
      const page = await store.listRuns({ status: ["queued", "paused"], limit: 2, ...(cursor ? { cursor } : {}) });
      paged.push(...page.runs.map((r) => r.id));
      cursor = page.nextCursor;
    } while (cursor);
    expect(paged).toEqual(expected);
    expect(paged).toHaveLength(5);
  });

  it("delivers a kill from another connection to the worker running the node within a second", async () => {
    const { store, prefix } = await open();
    let aborted = 0;
    const wf = workflow("long", { state: z.object({ n: z.number().default(0) }) })
      .node(
        "slow",
        (_s, ctx) =>
          new Promise((_resolve, reject) => {
            ctx.signal.addEventListener("abort", () => {
              aborted = Date.now();
              reject(new Error("aborted"));
            });
          }),
      )
      .compile();
    const engine = createEngine({ store, workflows: [wf] });
    const run = await engine.start(wf, {});
    await waitFor(async () => (await store.readEvents({ runId: run.id, types: ["task.started"] })).length > 0, 10_000, "the node to start");
    const console = await openStore(`${server.url}?prefix=${encodeURIComponent(prefix)}`);
    stores.push(console);
    const asked = Date.now();
    await new Operator(console, { actor: "operator:ann" }).kill(run.id, { reason: "stuck" });
    expect(aborted).toBeGreaterThan(0);
    expect(aborted - asked).toBeLessThan(1_000);
    expect(await run.wait({ timeoutMs: 5_000 })).toMatchObject({ status: "paused", reason: "killed" });
    await engine.worker!.stop();
  });

  describe("durability os", () => {
    const everysec = new RedisServer({ appendonly: true, appendfsync: "everysec" });
    const always = new RedisServer({ appendonly: true, appendfsync: "always" });
    beforeAll(() => Promise.all([everysec.start(), always.start()]));
    afterAll(() => Promise.all([everysec.dispose(), always.dispose()]));

    it("opens only where every write is fsynced before it is acknowledged, and says why not elsewhere", async () => {
      await expect(openStore(server.url, { durability: "os" })).rejects.toThrow(/appendonly no/);
      const refused = await openStore(everysec.url, { durability: "os" }).catch((e: unknown) => e);
      expect(refused).toBeInstanceOf(StoreError);
      expect((refused as Error).message).toMatch(/fsyncs its append-only file "everysec".*no WAITAOF/);
      const store = await openStore(always.url, { durability: "os" });
      const id = await queuedRun(store);
      expect((await store.getRun(id))?.status).toBe("queued");
      await store.close();
    });
  });
});
