import { describe, expect, it } from "vitest";
import { EventFeed, type EventSource } from "../../engine/store/event-feed.js";
import type { EventRecord } from "../../engine/store/records.js";
import type { EventQuery } from "../../engine/store/store.js";

/** A source holding the events published so far, counting the reads subscribers make of it. */
function source() {
  const events: EventRecord[] = [];
  let reads = 0;
  const src: EventSource = {
    async readEvents(query: EventQuery) {
      reads++;
      return events.filter((e) => e.seq > (query.after ?? 0)).slice(0, query.limit ?? Infinity);
    },
    async lastEventSeq() {
      return events.at(-1)?.seq ?? 0;
    },
  };
  const commit = (feed: EventFeed, count: number) => {
    const made: EventRecord[] = [];
    for (let i = 0; i < count; i++) {
      const seq = events.length + 1;
      made.push({ seq, runId: "run-1", runSeq: seq, taskId: null, traceId: "t", spanId: null, type: "node.log", actor: "test", payload: { node: "n", level: "info", message: `event ${seq}` }, time: 0 } as EventRecord);
      events.push(made.at(-1)!);
    }
    feed.publish(made);
  };
  return { src, commit, reads: () => reads };
}

/** Takes `count` events from a subscription, waiting for each as a consumer would. */
async function take(iterator: AsyncIterator<EventRecord>, count: number): Promise<number[]> {
  const seqs: number[] = [];
  while (seqs.length < count) seqs.push((await iterator.next()).value!.seq);
  return seqs;
}

const turn = () => new Promise((resolve) => setImmediate(resolve));

describe("event feed: what this process committed, handed to its subscribers", () => {
  it("a subscriber that fell behind by many commits gets each event, in order, without reading the store again", async () => {
    const feed = new EventFeed();
    const { src, commit, reads } = source();
    const fast = feed.subscribe(src)[Symbol.asyncIterator]();
    const slow = feed.subscribe(src)[Symbol.asyncIterator]();
    const fastFirst = fast.next();
    const slowFirst = slow.next();
    await turn();
    const readsAtStart = reads();
    // The fast one keeps up with every commit; the slow one takes nothing for 100 commits.
    commit(feed, 1);
    expect((await fastFirst).value!.seq).toBe(1);
    for (let i = 0; i < 99; i++) {
      const next = fast.next();
      commit(feed, 2);
      expect((await next).value!.seq).toBe(2 + 2 * i);
      expect(await take(fast, 1)).toEqual([3 + 2 * i]);
    }
    expect((await slowFirst).value!.seq).toBe(1);
    expect(await take(slow, 198)).toEqual(Array.from({ length: 198 }, (_, i) => i + 2));
    expect(reads()).toBe(readsAtStart);
    await fast.return?.();
    await slow.return?.();
  });

  it("a subscriber that starts after commits it does not need still gets every later one from memory", async () => {
    const feed = new EventFeed();
    const { src, commit, reads } = source();
    for (let i = 0; i < 50; i++) commit(feed, 3);
    const late = feed.subscribe(src)[Symbol.asyncIterator]();
    const first = late.next();
    await turn();
    const readsAtStart = reads();
    commit(feed, 3);
    commit(feed, 3);
    expect((await first).value!.seq).toBe(151);
    expect(await take(late, 5)).toEqual([152, 153, 154, 155, 156]);
    expect(reads()).toBe(readsAtStart);
    await late.return?.();
  });

  it("a subscriber further behind than the feed remembers reads the store, and misses nothing", async () => {
    const feed = new EventFeed();
    const { src, commit, reads } = source();
    const behind = feed.subscribe(src)[Symbol.asyncIterator]();
    const first = behind.next();
    await turn();
    const readsAtStart = reads();
    for (let i = 0; i < 300; i++) commit(feed, 1);
    expect((await first).value!.seq).toBe(1);
    expect(await take(behind, 299)).toEqual(Array.from({ length: 299 }, (_, i) => i + 2));
    expect(reads()).toBeGreaterThan(readsAtStart);
    await behind.return?.();
  });
});
