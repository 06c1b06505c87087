import type { Claim } from "../store/store.js";

/**
 * Now as the run's store sees it. The store decides by its own clock when a run parked on a
 * timer is due (Redis: the server's), so the executor judges timers by that clock too, and writes
 * them in it: a wait node's wake time, a retry's `notBefore`. A worker whose clock is off then
 * neither takes a run the store hands it as due for not due yet (and releases it, to be handed
 * it again at once), nor has its timers fire early or late by its error.
 */
export class StoreClock {
  private constructor(private readonly aheadMs: number) {}

  /** The store's clock as the claim measured it (this process's own, for a store that has none). */
  static of(claim: Pick<Claim, "storeAheadMs">): StoreClock {
    return new StoreClock(claim.storeAheadMs ?? 0);
  }

  now(): number {
    return Date.now() + this.aheadMs;
  }

  /** A time this process's clock stamped (a task's creation, by step.ts) on the store's clock. */
  fromLocal(time: number): number {
    return time + this.aheadMs;
  }

  /** How long from now until `time` (on the store's clock), for a timer of this process. */
  untilMs(time: number): number {
    return time - this.now();
  }
}
