import { StoreError } from "../errors.js";

/**
 * Runs `look` `firstMs` from now and then every `everyMs` until the signal aborts, one look at a
 * time (one that is due while the last still runs is skipped). Its timers keep no process alive.
 */
export function repeatUntil(signal: AbortSignal, firstMs: number, everyMs: number, look: () => Promise<void>): void {
  let looking = false;
  const once = async () => {
    if (looking || signal.aborted) return;
    looking = true;
    try {
      await look();
    } finally {
      looking = false;
    }
  };
  const first = setTimeout(once, firstMs);
  const again = setInterval(once, everyMs);
  first.unref();
  again.unref();
  signal.addEventListener("abort", () => (clearTimeout(first), clearInterval(again)), { once: true });
}

/**
 * A watch's look at the store, now and every `everyMs` until the signal aborts: a failure other
 * than the store's (which the claim loop reports, once) is told to `failed`.
 */
export function lookUntil(signal: AbortSignal, everyMs: number, look: () => Promise<unknown>, failed: (error: unknown) => void): void {
  repeatUntil(signal, 0, everyMs, async () => {
    try {
      await look();
    } catch (error) {
      if (!(error instanceof StoreError)) failed(error);
    }
  });
}
