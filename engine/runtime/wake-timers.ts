import { MAX_TIMER_MS } from "../graph/definition.js";
import type { StoreClock } from "./store-clock.js";

/**
 * The timers that wake an executor's loop with a tick: at a task's retry or wait time, and
 * ~100 ms after a progress or log event that no commit has carried yet.
 */
export class WakeTimers {
  private readonly timers = new Set<NodeJS.Timeout>();
  private readonly tickTimes = new Set<number>();
  private flushTimer: NodeJS.Timeout | undefined;

  constructor(
    private readonly tick: () => void,
    private readonly clock: StoreClock,
  ) {}

  /** Wakes the loop at `time`, on the store's clock (one timer per distinct time). */
  at(time: number): void {
    if (this.tickTimes.has(time)) return;
    this.tickTimes.add(time);
    // A time further off than a timer reaches wakes the loop then, which sets the next one.
    const delay = Math.min(MAX_TIMER_MS, Math.max(0, this.clock.untilMs(time)));
    const timer = setTimeout(() => {
      this.timers.delete(timer);
      this.tickTimes.delete(time);
      this.tick();
    }, delay);
    this.timers.add(timer);
  }

  /** Progress and log lines ride with the next commit, or go on their own within ~100 ms. */
  flushSoon(): void {
    if (!this.flushTimer) {
      this.flushTimer = setTimeout(() => {
        this.flushTimer = undefined;
        this.tick();
      }, 100);
    }
  }

  clear(): void {
    clearTimeout(this.flushTimer);
    for (const t of this.timers) clearTimeout(t);
  }
}
