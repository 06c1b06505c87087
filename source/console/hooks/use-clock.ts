import { useEffect, useState } from "react";

const SECOND = 1_000;
const MINUTE = 60 * SECOND;
const HOUR = 60 * MINUTE;
const DAY = 24 * HOUR;
/** However far the next change, the time is read again at least this often. */
const LONGEST_MS = MINUTE;
/**
 * Texts in minutes or more change at the turn of each row's own minute: those turns are gathered
 * on a grid of this many ms of the clock, so that a list of old runs redraws a few times a minute
 * (each text at most this late), not once per row.
 */
const COARSE_MS = 15 * SECOND;
/** Timers may fire a little early: the tick lands this much after the change it is for. */
const MARGIN_MS = 5;

/**
 * How long until the text shown for any of `times` changes: an age or duration counting up from a
 * past time, a countdown (`wakes in 29s`) to a future one. Each counts in the unit it shows
 * (`ago`, `span`): seconds below a minute, minutes below an hour, then hours, then days.
 * Undefined when there is nothing to count.
 */
export function untilNextChange(times: readonly (number | null | undefined)[], now: number): number | undefined {
  let soonest: number | undefined;
  for (const t of times) {
    if (t === null || t === undefined) continue;
    const distance = Math.abs(now - t);
    const unit = distance < MINUTE ? SECOND : distance < HOUR ? MINUTE : distance < DAY ? HOUR : DAY;
    // Counting up, the text changes when the distance reaches the next whole unit; counting down,
    // when it falls below the whole unit it shows (from 60s, the next second shows 59s).
    let wait = t <= now ? unit - (distance % unit) : (distance % unit) + 1;
    if (unit > SECOND) wait = Math.ceil((now + wait) / COARSE_MS) * COARSE_MS - now;
    soonest = Math.min(soonest ?? Infinity, wait);
  }
  return soonest === undefined ? undefined : Math.min(LONGEST_MS, soonest + MARGIN_MS);
}

/**
 * The time, for the ages, durations and countdowns a view shows from (or to) `times`. It ticks
 * when one of their texts changes — each second while one is under a minute away (a countdown
 * never freezes), within 15 s of the turn of the minute for the others — so an idle console with
 * old runs redraws at most four times a minute.
 */
export function useClock(times: readonly (number | null | undefined)[]): number {
  const [now, setNow] = useState(() => Date.now());
  const key = times.join(",");
  useEffect(() => {
    const wait = untilNextChange(times, Date.now());
    if (wait === undefined) return;
    const timer = setTimeout(() => setNow(Date.now()), wait);
    return () => clearTimeout(timer);
    // `key` stands for `times`, a new array at every render.
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, [now, key]);
  return now;
}
