import { afterEach, expect, it } from "vitest";
import { LiveFeed, type Change } from "../../source/console/live.js";
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
  await new Promise((resolve) => setTimeout(resolve, 250));
  const seen = changes.flatMap((c) => c.events.map((e) => e.seq));
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
  await new Promise((resolve) => setTimeout(resolve, 300));
  expect(changes.some((c) => c.overflow)).toBe(true);
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
