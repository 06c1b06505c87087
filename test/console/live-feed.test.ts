import { afterEach, expect, it } from "vitest";
import { openStore } from "../../engine/index.js";
import { LiveFeed, type Change } from "../../source/console/live.js";
import { sleep, until } from "../support/engine.js";
import { RedisServer } from "../support/redis-server.js";
import { fixture, settle, type Fixture } from "./fixtures.js";

let fx: Fixture | undefined;
let feed: LiveFeed | undefined;
afterEach(async () => {
  await feed?.stop();
  await fx?.close();
});

it("hands a burst of store events to listeners in a few coalesced changes, in order, none lost", async () => {
  fx = fixture();
  feed = new LiveFeed(fx.store, { coalesceMs: 100 });
  const changes: Change[] = [];
  feed.listen((c) => changes.push(c));
  feed.start(await fx.store.lastEventSeq());
  const runs = await Promise.all([0, 1, 2, 3].map(() => settle(fx!.engine, "task-queue")));
  const written = await fx.store.readEvents({});
  const seen = await until(() => {
    const handed = changes.flatMap((c) => c.events.map((e) => e.seq));
    return handed.length >= written.length && handed;
  }, 5_000, "every written event handed out");
  expect(seen).toEqual(written.map((e) => e.seq));
  expect(written.length).toBeGreaterThan(80);
  expect(changes.length).toBeLessThanOrEqual(written.length / 10);
  expect(new Set(changes.flatMap((c) => [...c.runs]))).toEqual(new Set(runs.map((r) => r.id)));
});

it("says when it dropped events from a window so that readers go back to the store", async () => {
  fx = fixture();
  feed = new LiveFeed(fx.store, { coalesceMs: 200, maxEvents: 10 });
  const changes: Change[] = [];
  feed.listen((c) => changes.push(c));
  feed.start(await fx.store.lastEventSeq());
  await settle(fx.engine, "task-queue");
  await until(() => changes.some((c) => c.overflow), 5_000, "a change saying it dropped events");
  expect(Math.max(...changes.map((c) => c.events.length))).toBeLessThanOrEqual(10);
});

it("costs nothing while the store is idle: no change is handed out", async () => {
  fx = fixture();
  await settle(fx.engine, "task-queue");
  feed = new LiveFeed(fx.store, { coalesceMs: 10 });
  let calls = 0;
  feed.listen(() => calls++);
  feed.start();
  await new Promise((resolve) => setTimeout(resolve, 300));
  expect(calls).toBe(0);
});

it("says when the store stops answering (Redis gone, the subscription silently reconnecting) and clears it once it answers", async () => {
  const server = new RedisServer();
  await server.start();
  const store = await openStore(`${server.url}?prefix=live:`);
  try {
    feed = new LiveFeed(store, { heartbeatMs: 100, answerMs: 300 });
    const reported: (string | undefined)[] = [];
    feed.onError = (message) => reported.push(message);
    feed.start();
    await sleep(300);
    expect(feed.error).toBeUndefined();
    const restarted = server.crashAndRestart(1_500);
    await until(async () => feed!.error?.startsWith("store not answering: "), 5_000, "a store-not-answering problem");
    expect(feed.error).toMatch(/what is shown may be out of date$/);
    await restarted;
    await until(async () => feed!.error === undefined, 10_000, "the problem cleared");
    expect(reported.at(-1)).toBeUndefined();
  } finally {
    await feed?.stop();
    feed = undefined;
    await store.close();
    await server.dispose();
  }
});
