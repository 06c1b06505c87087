import type { EventRecord } from "./records.js";
import type { EventQuery } from "./store.js";

export interface EventSource {
  readEvents(query: EventQuery): Promise<EventRecord[]>;
  lastEventSeq(): Promise<number>;
}

/**
 * Turns "something changed" signals into live event subscriptions. A store calls `publish()`
 * after its own commits; a store shared between processes also passes a `watch` function that
 * notices other processes' commits (started only while somebody is waiting, so idle costs nothing).
 */
export class EventFeed {
  private version = 0;
  private readonly waiters = new Set<() => void>();
  private stopWatching: (() => void) | undefined;
  private closed = false;

  constructor(private readonly watch?: (notify: () => void) => () => void) {}

  publish(): void {
    this.version++;
    const waiters = [...this.waiters];
    this.waiters.clear();
    for (const wake of waiters) wake();
    this.updateWatch();
  }

  close(): void {
    this.closed = true;
    this.publish();
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

  async *subscribe(
    source: EventSource,
    options: { after?: number; runId?: string; signal?: AbortSignal } = {},
  ): AsyncIterable<EventRecord> {
    const { signal, runId } = options;
    let after = options.after ?? (await source.lastEventSeq());
    while (!signal?.aborted && !this.closed) {
      const version = this.version;
      const batch = await source.readEvents({ after, ...(runId !== undefined ? { runId } : {}), limit: 500 });
      if (batch.length > 0) {
        for (const event of batch) {
          if (signal?.aborted) return;
          after = event.seq;
          yield event;
        }
        continue;
      }
      await this.waitForChange(version, signal);
    }
  }
}
