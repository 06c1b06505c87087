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
