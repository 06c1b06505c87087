import { createRequire } from "node:module";
import { pathToFileURL } from "node:url";

/** How many texts each of Ink's text caches may hold before it is emptied. */
export const INK_CACHE_LIMIT = 4_096;

/** How often the caches are looked at. */
const TRIM_EVERY_MS = 5_000;

export interface InkCaches {
  /** Texts each cache holds now: undefined for one this Ink release does not have as expected. */
  sizes(): { measured: number | undefined; wrapped: number | undefined };
  stop(): void;
}

/**
 * Ink 6.8 keeps the size of every distinct text it has measured (measure-text.js) and every
 * text it has wrapped (wrap-text.js) in module-level caches that are never emptied
 * (vadimdemedes/ink#986). The console draws new row texts every second — clocks, steps, what
 * runs now — so one left attached to a busy store would grow by hundreds of megabytes a day.
 * The caches are private to their modules: each is found by handing its function a probe text
 * while the one write it makes is watched, then emptied whenever it holds more than `limit`
 * texts (a few screens' worth, so that a frame's texts are mostly still found). Ink is
 * imported here as the console imports it; for a release whose modules differ, nothing is done.
 */
export async function boundInkCaches(limit = INK_CACHE_LIMIT, everyMs = TRIM_EVERY_MS): Promise<InkCaches> {
  const build = new URL(".", pathToFileURL(createRequire(import.meta.url).resolve("ink")));
  const [measured, wrapped] = await Promise.all([
    import(new URL("measure-text.js", build).href).then((m: { default: (text: string) => unknown }) => mapOf(m.default), () => undefined),
    import(new URL("wrap-text.js", build).href).then((m: { default: (text: string, width: number, wrap: string) => string }) => recordOf(m.default), () => undefined),
  ]);
  const trim = () => {
    if (measured && measured.size > limit) measured.clear();
    if (wrapped && Object.keys(wrapped).length > limit) for (const key of Object.keys(wrapped)) delete wrapped[key];
  };
  const timer = setInterval(trim, everyMs);
  timer.unref();
  return {
    sizes: () => ({ measured: measured?.size, wrapped: wrapped ? Object.keys(wrapped).length : undefined }),
    stop: () => clearInterval(timer),
  };
}

const probe = () => `pitwall-cache-probe-${Math.random()}`;

/** The Map that `measure` stores a new text's size in. */
function mapOf(measure: (text: string) => unknown): Map<string, unknown> | undefined {
  const text = probe();
  const set = Map.prototype.set;
  let found: Map<string, unknown> | undefined;
  Map.prototype.set = function (this: Map<unknown, unknown>, key: unknown, value: unknown) {
    if (key === text) found = this as Map<string, unknown>;
    return set.call(this, key, value);
  };
  try {
    measure(text);
  } finally {
    Map.prototype.set = set;
  }
  found?.delete(text);
  return found;
}

/** The object that `wrap` stores a new text's wrapped form in, under its text, width and kind. */
function recordOf(wrap: (text: string, width: number, kind: string) => string): Record<string, string> | undefined {
  const text = probe();
  const key = `${text}4truncate`;
  let found: Record<string, string> | undefined;
  Object.defineProperty(Object.prototype, key, {
    configurable: true,
    set(this: Record<string, string>) {
      found = this;
    },
  });
  try {
    wrap(text, 4, "truncate");
  } finally {
    delete (Object.prototype as Record<string, unknown>)[key];
  }
  return found;
}
