import { setFlagsFromString } from "node:v8";

/**
 * What `runConsole` changes in its process before React loads, shared with the console
 * benchmark so that it measures the console as people run it.
 *
 * - React's production build: the development one checks much more on every render.
 * - Heap growth: the console lives long with a small live heap (tens of MB) while each frame
 *   makes short-lived garbage; for small heaps V8 otherwise lets the old generation reach
 *   several times what is live before collecting. Growing 20% past the live size keeps the
 *   resident size near what is used, for a few percent more time in the collector. V8 reads
 *   this setting each time it sizes the heap, so setting it now takes effect. Not done when
 *   the operator passed heap flags of their own.
 */
export function tuneConsoleProcess(): void {
  process.env.NODE_ENV ??= "production";
  const given = [...process.execArgv, process.env.NODE_OPTIONS ?? ""].join(" ");
  if (!/heap-growing|max-old-space|optimize-for-size/.test(given)) setFlagsFromString("--heap-growing-percent=20");
}
