import { useEffect, useState } from "react";

/** The time, refreshed every `ms` (ages and durations move on their own). */
export function useClock(ms: number): number {
  const [now, setNow] = useState(() => Date.now());
  useEffect(() => {
    const timer = setInterval(() => setNow(Date.now()), ms);
    return () => clearInterval(timer);
  }, [ms]);
  return now;
}
