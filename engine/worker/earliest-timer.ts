/** setTimeout's longest wait (about 24.8 days): a later time is looked at again then. */
const MAX_TIMER_MS = 2 ** 31 - 1;

/**
 * One timer for the earliest of a watch's times (interrupts' and runs' deadlines, schedules' next
 * times), set again as they change, and none once the watch's signal aborts. It keeps no process alive.
 */
export class EarliestTimer {
  private timer: NodeJS.Timeout | undefined;
  private signal: AbortSignal | undefined;

  constructor(private readonly due: () => void) {}

  /** Sets timers until `signal` aborts. */
  until(signal: AbortSignal): void {
    this.signal = signal;
    signal.addEventListener("abort", () => clearTimeout(this.timer), { once: true });
  }

  /** Calls `due` at the earliest of `times` (none: no timer), `now` on the same clock as they are. */
  arm(times: Iterable<number>, now: number): void {
    clearTimeout(this.timer);
    const next = Math.min(...times);
    if (!this.signal || this.signal.aborted || next === Infinity) return;
    this.timer = setTimeout(this.due, Math.min(MAX_TIMER_MS, Math.max(0, next - now)));
    this.timer.unref();
  }
}
