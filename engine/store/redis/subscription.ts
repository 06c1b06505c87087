import { StoreError } from "../../errors.js";
import type { EventSource } from "../event-feed.js";
import type { EventRecord } from "../records.js";
import type { SubscribeOptions } from "../store.js";
import type { EventTail } from "./event-tail.js";
import { pause } from "../../sleep.js";

/**
 * Past events after `after`, then new ones as they are committed (`Store.subscribe` on Redis).
 * The tail wakes the subscription when the store-wide sequence passes what it has seen; a lost
 * connection is retried (commands wait for the reconnect), so a Redis restart does not end a
 * subscription. It ends when its signal aborts or the store closes (`closed`).
 */
export async function* subscribeEvents(source: EventSource, tail: EventTail, closed: () => boolean, options: SubscribeOptions): AsyncIterable<EventRecord> {
  const { runId, signal, types } = options;
  let after = options.after;
  let failures = 0;
  while (!signal?.aborted && !closed()) {
    try {
      after ??= await source.lastEventSeq();
      const mark = runId === undefined && !types ? after : await source.lastEventSeq();
      const batch = await source.readEvents({ after, ...(runId !== undefined ? { runId } : {}), ...(types ? { types } : {}), limit: 500 });
      failures = 0;
      for (const event of batch) {
        if (signal?.aborted) return;
        after = event.seq;
        yield event;
      }
      if (batch.length === 0) await tail.waitPast(mark, signal);
    } catch (error) {
      if (closed() || signal?.aborted) return;
      if (error instanceof StoreError) throw error;
      await pause(Math.min(2_000, 100 * 2 ** failures++), signal);
    }
  }
}
