import { useEffect, useState } from "react";

/** Ages and durations show seconds below a minute, then minutes: past that, a redraw every 15 s is enough. */
const FAST_MS = 1_000;
const SLOW_MS = 15_000;

/**
 * The time, for the ages and durations a view shows, counted from `since`. It ticks every second
 * only while one of them is under a minute (its text changes each second); an idle console with
 * older runs redraws four times a minute.
 */
export function useClock(since: readonly (number | null | undefined)[]): number {
  const [now, setNow] = useState(() => Date.now());
  const fast = since.some((t) => t !== null && t !== undefined && Date.now() - t < 60_000);
  useEffect(() => {
    const timer = setInterval(() => setNow(Date.now()), fast ? FAST_MS : SLOW_MS);
    return () => clearInterval(timer);
  }, [fast]);
  return now;
}
