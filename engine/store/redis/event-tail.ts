import type { Redis } from "ioredis";
import { dropClient } from "./connection.js";

interface Waiter {
  mark: number;
  wake: () => void;
}

/**
 * Follows the store-wide event stream with blocking reads (XREAD BLOCK) on a connection of its
 * own, and wakes the subscribers waiting for an event past the sequence number they have seen.
 * It runs only while somebody waits; one tail serves every subscription of a store.
 */
export class EventTail {
  private seen = 0;
  private readonly waiters = new Set<Waiter>();
  private loop: Promise<void> | undefined;
  private connection: Promise<Redis> | undefined;
  private closed = false;
  /** Ends waits for a connection or a reply when the tail closes (the server may be gone). */
  private readonly closing = new AbortController();

  constructor(
    private readonly open: () => Promise<Redis>,
    private readonly stream: string,
    private readonly lastSeq: () => Promise<number>,
  ) {}

  /** Resolves once an event with a sequence number above `mark` exists, or on abort or close. */
  waitPast(mark: number, signal?: AbortSignal): Promise<void> {
    if (this.closed || signal?.aborted || this.seen > mark) return Promise.resolve();
    return new Promise((resolve) => {
      const waiter: Waiter = {
        mark,
        wake: () => {
          this.waiters.delete(waiter);
          signal?.removeEventListener("abort", waiter.wake);
          resolve();
        },
      };
      signal?.addEventListener("abort", waiter.wake, { once: true });
      this.waiters.add(waiter);
      this.loop ??= this.follow().finally(() => (this.loop = undefined));
    });
  }

  async close(): Promise<void> {
    this.closed = true;
    this.closing.abort();
    for (const waiter of [...this.waiters]) waiter.wake();
    const connection = this.connection;
    this.connection = undefined;
    // A connection still being made is closed once it is made; nobody waits for it.
    connection?.then(dropClient, () => undefined);
    await this.loop;
  }

  /** `promise`, or a rejection as soon as the tail closes. */
  private untilClosed<T>(promise: Promise<T>): Promise<T> {
    return new Promise((resolve, reject) => {
      if (this.closing.signal.aborted) return reject(new Error("closed"));
      const onClose = () => reject(new Error("closed"));
      this.closing.signal.addEventListener("abort", onClose, { once: true });
      promise.then(resolve, reject).finally(() => this.closing.signal.removeEventListener("abort", onClose));
    });
  }

  private advance(seq: number): void {
    // A server restored from an older copy numbers from lower again: follow it down.
    this.seen = seq;
    for (const waiter of [...this.waiters]) if (seq > waiter.mark) waiter.wake();
  }

  /** The tail's connection; a failed first attempt is forgotten so that the next one retries. */
  private connect(): Promise<Redis> {
    if (!this.connection) {
      const attempt = this.open();
      this.connection = attempt;
      attempt.catch(() => {
        if (this.connection === attempt) this.connection = undefined;
      });
    }
    return this.connection;
  }

  private async follow(): Promise<void> {
    while (this.waiters.size > 0 && !this.closed) {
      try {
        const connection = await this.untilClosed(this.connect());
        this.advance(await this.untilClosed(this.lastSeq()));
        if (this.waiters.size === 0) break;
        // Returns at the next event past what was seen (or after 5 s, to notice a restored server).
        // Unanswered for the command timeout past that, it fails and its connection is made again
        // (silence.ts): a network that dropped the connection silently would hold it for good.
        await this.untilClosed(connection.xread("COUNT", 1, "BLOCK", 5_000, "STREAMS", this.stream, `${this.seen}-0`));
      } catch {
        if (this.closed) return;
        await new Promise((resolve) => setTimeout(resolve, 200));
      }
    }
  }
}
