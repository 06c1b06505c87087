import { StoreError } from "../errors.js";
import type { EventRecord } from "../store/records.js";
import type { Store, SubscribeOptions } from "../store/store.js";
import { pause } from "../sleep.js";

/**
 * Told of a passing store failure as it begins (its error) and as it ends (undefined), once each
 * per outage: a follower says so rather than exiting, or waiting in silence.
 */
export type OutageListener = (error: StoreError | undefined) => void;

const FIRST_RETRY_MS = 250;
const MAX_RETRY_MS = 2_000;

/** Whether an error is a store failure that may pass (a lost connection, a file locked for now). */
export function passingFailure(error: unknown): error is StoreError {
  return error instanceof StoreError && error.transient;
}

/**
 * Waits out the passing failures of a store for one long-lived reader (a follower, a wait):
 * `attempt` is made again, after a growing pause, for as long as it fails so, until it succeeds,
 * fails otherwise, or `signal` aborts.
 */
export class Outlasting {
  private failing = false;
  private pauseMs = FIRST_RETRY_MS;

  constructor(
    private readonly listener: OutageListener,
    private readonly signal?: AbortSignal,
  ) {}

  async attempt<T>(work: () => Promise<T>): Promise<T> {
    for (;;) {
      try {
        const value = await work();
        this.answered();
        return value;
      } catch (error) {
        await this.failed(error);
      }
    }
  }

  /** The store answered: an outage told is over. */
  answered(): void {
    this.pauseMs = FIRST_RETRY_MS;
    if (!this.failing) return;
    this.failing = false;
    this.listener(undefined);
  }

  /** Rethrows what is not a passing failure (or comes after an abort); else tells it once and pauses. */
  async failed(error: unknown): Promise<void> {
    if (!passingFailure(error) || this.signal?.aborted) throw error;
    if (!this.failing) {
      this.failing = true;
      this.listener(error);
    }
    await pause(this.pauseMs, this.signal);
    this.pauseMs = Math.min(this.pauseMs * 2, MAX_RETRY_MS);
  }
}

/**
 * `store.subscribe(options)` that outlasts the store's passing failures: it goes on, once the
 * store answers again, from the last event it gave, so that nothing is missed or given twice.
 */
export async function* outlastingSubscription(store: Store, options: SubscribeOptions, listener: OutageListener): AsyncGenerator<EventRecord> {
  const outlasting = new Outlasting(listener, options.signal);
  let after = options.after ?? (await outlasting.attempt(() => store.lastEventSeq()));
  for (;;) {
    try {
      for await (const event of store.subscribe({ ...options, after })) {
        outlasting.answered();
        after = event.seq;
        yield event;
      }
      return;
    } catch (error) {
      await outlasting.failed(error);
      // Asked again once before subscribing, so that the store's recovery is told when it comes,
      // not at the next event.
      await outlasting.attempt(() => store.lastEventSeq());
    }
  }
}
