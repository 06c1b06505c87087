import type Database from "better-sqlite3";
import { StoreError } from "../../errors.js";
import type { EventRecord } from "../records.js";

/**
 * Group commit. Writes issued in the same turn of the event loop (a worker's executors finishing
 * their steps together, say) share one immediate (write-locked) transaction, so they share its
 * cost; each promise settles only once that transaction is committed, so what it reports is
 * durable. Writes apply in the order issued.
 */
export class GroupCommit {
  private queued: QueuedWrite[] = [];
  /** Events appended by the write in progress. */
  private events: EventRecord[] = [];
  private readonly inTransaction: Database.Transaction<(fn: () => unknown) => unknown>;

  constructor(
    db: Database.Database,
    /** What a failed transaction is reported as (the store's one-line errors). */
    private readonly failure: (error: unknown) => Error,
    /** Hands committed events to this process's subscribers, without reading them back. */
    private readonly publish: (events: EventRecord[]) => void,
    /**
     * Told when each transaction begins (under its lock), when its writes are done (still inside
     * it: what it adds commits with them) and when one is rolled back.
     */
    private readonly hooks: { begin(): void; end(): void; rolledBack(): void },
  ) {
    this.inTransaction = db.transaction((fn: () => unknown) => fn());
  }

  /** Queues `fn` for the next group transaction; `publish` false keeps its events from subscribers. */
  write<T>(fn: () => T, publish = true): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      this.queued.push({ fn, publish, resolve: resolve as (value: unknown) => void, reject });
      if (this.queued.length === 1) setImmediate(() => this.flush());
    });
  }

  /** Called by a write for the events it appends, so that they are published once committed. */
  appended(events: readonly EventRecord[]): void {
    this.events.push(...events);
  }

  /**
   * Applies the queued writes in one transaction. When one of them is refused (a stale fence, a
   * conflict), the group is rolled back and each write is applied again in a transaction of its
   * own, so that a refusal undoes only itself (writes only read and write the database, so running
   * one again is safe). A failure of the store itself (locked past the timeout, disk full) fails
   * them all at once: trying each again would only wait that long once per write.
   */
  flush(): void {
    const batch = this.queued;
    this.queued = [];
    if (batch.length === 0) return;
    if (batch.length > 1) {
      const outcomes = this.transaction(batch);
      if (outcomes.every((o) => o.ok || o.error instanceof StoreError)) return this.settle(batch, outcomes);
    }
    this.settle(
      batch,
      batch.flatMap((write) => this.transaction([write])),
    );
  }

  /** Runs writes in one transaction; a failure of any of them rolls all of them back. */
  private transaction(writes: readonly QueuedWrite[]): WriteOutcome[] {
    const outcomes: WriteOutcome[] = [];
    try {
      this.inTransaction.immediate(() => {
        this.hooks.begin();
        for (const write of writes) {
          this.events = [];
          outcomes.push({ ok: true, value: write.fn(), events: this.events });
        }
        this.hooks.end();
      });
      return outcomes;
    } catch (error) {
      this.hooks.rolledBack();
      const failure: WriteOutcome = { ok: false, error: this.failure(error) };
      return writes.map(() => failure);
    }
  }

  private settle(batch: readonly QueuedWrite[], outcomes: readonly WriteOutcome[]): void {
    batch.forEach((write, i) => {
      const outcome = outcomes[i]!;
      if (!outcome.ok) return write.reject(outcome.error);
      if (write.publish) this.publish(outcome.events);
      write.resolve(outcome.value);
    });
  }
}

interface QueuedWrite {
  fn: () => unknown;
  publish: boolean;
  resolve: (value: unknown) => void;
  reject: (error: unknown) => void;
}

type WriteOutcome = { ok: true; value: unknown; events: EventRecord[] } | { ok: false; error: unknown };
