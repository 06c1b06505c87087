import type { EventType } from "../runtime/events.js";
import type { EventRecord } from "./records.js";
import type { EventQuery, SubscribeOptions } from "./store.js";

export interface EventSource {
  readEvents(query: EventQuery): Promise<EventRecord[]>;
  lastEventSeq(): Promise<number>;
}

/** How a store shared between processes notices their commits: `changed` is asked every `everyMs`. */
export interface ChangeWatch {
  /** Whether another process committed since the last call (false when the store cannot tell now). */
  changed(): boolean;
  everyMs: number;
}

/**
 * How many recent in-process publishes are remembered at most for subscribers that fell behind.
 * Only those some subscriber has not taken yet are kept: on a busy worker, whose own subscriber
 * keeps up, events held for nobody lived long enough to be copied by the young generation's
 * collections, about a tenth of a step's time.
 */
const RECENT = 256;
const PAGE = 500;

interface Cursor {
  version: number;
}

/** A subscriber waiting for the next change: `resolve` ends its wait. */
interface Waiting {
  resolve: (() => void) | undefined;
}

/**
 * Turns commits into live event subscriptions. A store calls `publish(events)` after each of
 * its own commits; subscribers in this process then get those events without reading the store
 * at all. A store shared between processes also passes a `watch` that notices other processes'
 * commits; such changes, whose events are unknown here, make subscribers read the store.
 *
 * The watch is polled only while somebody waits, so an idle store costs nothing; it stops at the
 * first poll that finds nobody waiting rather than at each publish, so that a busy store's
 * subscribers, waiting again right after each commit, do not start and stop a timer per commit.
 */
export class EventFeed {
  private version = 0;
  /** Recent publishes, by version: the i-th has version `this.version - recent.length + 1 + i`. */
  private readonly recent: (readonly EventRecord[] | undefined)[] = [];
  private readonly waiters = new Set<Waiting>();
  /** Each subscriber's place: the version up to which it has taken the publishes. */
  private readonly cursors = new Set<Cursor>();
  private timer: ReturnType<typeof setInterval> | undefined;
  private closed = false;

  constructor(private readonly watch?: ChangeWatch) {}

  /** Something was committed: the events this process committed, or undefined when unknown. */
  publish(events?: readonly EventRecord[]): void {
    this.version++;
    this.recent.push(events);
    let oldest = this.version;
    for (const cursor of this.cursors) oldest = Math.min(oldest, cursor.version);
    // The publishes after `oldest` are kept, RECENT at most.
    const keep = Math.min(RECENT, this.version - oldest);
    if (this.recent.length > keep) this.recent.splice(0, this.recent.length - keep);
    // Ending a wait resolves a promise: nothing runs (nor joins the set) before the loop is done.
    for (const waiting of this.waiters) end(waiting);
    this.waiters.clear();
  }

  close(): void {
    this.closed = true;
    this.publish();
    this.stopWatching();
  }

  /**
   * The events published since `version`, when they are exactly every event after `after`
   * (nothing unknown in between); undefined when the store must be read instead.
   */
  private published(version: number, after: number): EventRecord[] | undefined {
    const missed = this.version - version;
    if (missed > this.recent.length) return undefined;
    const out: EventRecord[] = [];
    let next = after + 1;
    for (let i = this.recent.length - missed; i < this.recent.length; i++) {
      const events = this.recent[i];
      if (!events) return undefined;
      for (const event of events) {
        if (event.seq !== next) return undefined;
        out.push(event);
        next++;
      }
    }
    return out;
  }

  /** Resolves at the next change after `version` (immediately if it already happened), or on abort. */
  private waitForChange(version: number, waiting: Waiting, signal?: AbortSignal): Promise<void> {
    if (this.version !== version || this.closed || signal?.aborted) return Promise.resolve();
    return new Promise((resolve) => {
      waiting.resolve = resolve;
      this.waiters.add(waiting);
      if (this.watch && !this.timer) this.timer = setInterval(() => this.poll(), this.watch.everyMs);
    });
  }

  private poll(): void {
    if (this.waiters.size === 0 || this.closed) return this.stopWatching();
    if (this.watch!.changed()) this.publish();
  }

  private stopWatching(): void {
    clearInterval(this.timer);
    this.timer = undefined;
  }

  async *subscribe(source: EventSource, options: SubscribeOptions = {}): AsyncIterable<EventRecord> {
    const { signal, runId, types } = options;
    const wanted = (e: EventRecord) => (runId === undefined || e.runId === runId) && (!types || types.includes(e.type as EventType));
    const filtered = runId !== undefined || types !== undefined;
    const waiting: Waiting = { resolve: undefined };
    const cursor: Cursor = { version: this.version };
    this.cursors.add(cursor);
    const onAbort = () => {
      this.waiters.delete(waiting);
      end(waiting);
    };
    signal?.addEventListener("abort", onAbort, { once: true });
    try {
      // `after`: every event up to it has been considered (delivered or filtered out).
      let after = options.after ?? (await source.lastEventSeq());
      let read = true;
      while (!signal?.aborted && !this.closed) {
        if (read) {
          cursor.version = this.version;
          // With a filter the page says nothing about events it skipped; the store's last number,
          // taken before the read, does.
          const last = filtered ? await source.lastEventSeq() : 0;
          const batch = await source.readEvents({ after, ...(runId !== undefined ? { runId } : {}), ...(types ? { types } : {}), limit: PAGE });
          for (const event of batch) {
            if (signal?.aborted) return;
            after = event.seq;
            yield event;
          }
          if (batch.length === PAGE) continue;
          after = Math.max(after, last);
        }
        await this.waitForChange(cursor.version, waiting, signal);
        const known = this.published(cursor.version, after);
        cursor.version = this.version;
        read = known === undefined;
        for (const event of known ?? []) {
          if (signal?.aborted) return;
          after = event.seq;
          if (wanted(event)) yield event;
        }
      }
    } finally {
      signal?.removeEventListener("abort", onAbort);
      this.waiters.delete(waiting);
      this.cursors.delete(cursor);
    }
  }
}

function end(waiting: Waiting): void {
  const resolve = waiting.resolve;
  waiting.resolve = undefined;
  resolve?.();
}
