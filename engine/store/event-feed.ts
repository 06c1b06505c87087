import type { EventType } from "../runtime/events.js";
import type { EventRecord } from "./records.js";
import type { EventQuery, SubscribeOptions } from "./store.js";

export interface EventSource {
  readEvents(query: EventQuery): Promise<EventRecord[]>;
  lastEventSeq(): Promise<number>;
}

/** How many recent in-process publishes are remembered for subscribers that fell behind. */
const RECENT = 256;
const PAGE = 500;

/**
 * Turns commits into live event subscriptions. A store calls `publish(events)` after each of
 * its own commits; subscribers in this process then get those events without reading the store
 * at all. A store shared between processes also passes a `watch` function that notices other
 * processes' commits (started only while somebody is waiting, so idle costs nothing); such
 * changes, whose events are unknown here, make subscribers read the store.
 */
export class EventFeed {
  private version = 0;
  /** Recent publishes by version, with their events when the publisher knew them. */
  private readonly recent: { version: number; events: readonly EventRecord[] | undefined }[] = [];
  private readonly waiters = new Set<() => void>();
  private stopWatching: (() => void) | undefined;
  private closed = false;

  constructor(private readonly watch?: (notify: () => void) => () => void) {}

  /** Something was committed: the events this process committed, or undefined when unknown. */
  publish(events?: readonly EventRecord[]): void {
    this.version++;
    this.recent.push({ version: this.version, events });
    if (this.recent.length > RECENT) this.recent.shift();
    const waiters = [...this.waiters];
    this.waiters.clear();
    for (const wake of waiters) wake();
    this.updateWatch();
  }

  close(): void {
    this.closed = true;
    this.publish();
  }

  /**
   * The events published since `version`, when they are exactly every event after `after`
   * (nothing unknown in between); undefined when the store must be read instead.
   */
  private published(version: number, after: number): EventRecord[] | undefined {
    const batches = this.recent.filter((b) => b.version > version);
    if (batches.length !== this.version - version) return undefined;
    const out: EventRecord[] = [];
    let next = after + 1;
    for (const batch of batches) {
      if (!batch.events) return undefined;
      for (const event of batch.events) {
        if (event.seq !== next) return undefined;
        out.push(event);
        next++;
      }
    }
    return out;
  }

  /** Resolves at the next change after `version` (immediately if it already happened), or on abort. */
  private waitForChange(version: number, signal?: AbortSignal): Promise<void> {
    if (this.version !== version || this.closed || signal?.aborted) return Promise.resolve();
    return new Promise((resolve) => {
      const wake = () => {
        signal?.removeEventListener("abort", onAbort);
        resolve();
      };
      const onAbort = () => {
        this.waiters.delete(wake);
        this.updateWatch();
        resolve();
      };
      signal?.addEventListener("abort", onAbort, { once: true });
      this.waiters.add(wake);
      this.updateWatch();
    });
  }

  private updateWatch(): void {
    if (this.waiters.size > 0 && !this.stopWatching && this.watch && !this.closed) {
      this.stopWatching = this.watch(() => this.publish());
    } else if ((this.waiters.size === 0 || this.closed) && this.stopWatching) {
      this.stopWatching();
      this.stopWatching = undefined;
    }
  }

  async *subscribe(source: EventSource, options: SubscribeOptions = {}): AsyncIterable<EventRecord> {
    const { signal, runId, types } = options;
    const wanted = (e: EventRecord) => (runId === undefined || e.runId === runId) && (!types || types.includes(e.type as EventType));
    const filtered = runId !== undefined || types !== undefined;
    // `after`: every event up to it has been considered (delivered or filtered out).
    let after = options.after ?? (await source.lastEventSeq());
    let version = this.version;
    let read = true;
    while (!signal?.aborted && !this.closed) {
      if (read) {
        version = this.version;
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
      await this.waitForChange(version, signal);
      const known = this.published(version, after);
      version = this.version;
      read = known === undefined;
      for (const event of known ?? []) {
        if (signal?.aborted) return;
        after = event.seq;
        if (wanted(event)) yield event;
      }
    }
  }
}
