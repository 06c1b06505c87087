import { ValidationError } from "../errors.js";
import { MemoryStore } from "./memory/memory-store.js";
import { readOnlyStore } from "./read-only.js";
import { SqliteStore } from "./sqlite/sqlite-store.js";
import type { Store } from "./store.js";

/**
 * A store URL with its user information masked, safe to print even when it does not parse:
 * everything between `//` and the last `@` (a password may hold `@`, `#`, `/` of its own), but
 * for a user name before a `:`, becomes `***`.
 */
export function describeStoreUrl(url: string): string {
  const m = /^([a-z][a-z0-9+.-]*:\/\/)([\s\S]*)$/i.exec(url);
  const at = m ? m[2]!.lastIndexOf("@") : -1;
  if (!m || at < 0) return url;
  const auth = m[2]!.slice(0, at);
  const user = auth.includes(":") ? auth.slice(0, auth.indexOf(":")) : "";
  return `${m[1]}${user && !/[/?#]/.test(user) ? `${user}:***` : "***"}@${m[2]!.slice(at + 1)}`;
}

/**
 * What to tell a person about a store URL before it is used: a password sent as it is (no TLS)
 * to another machine can be read by anyone on the network between. Undefined when nothing.
 */
export function storeUrlWarning(url: string): string | undefined {
  if (!/^redis:\/\//i.test(url)) return undefined;
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return undefined;
  }
  const host = parsed.hostname.replace(/^\[(.*)\]$/, "$1");
  const loopback = host === "localhost" || host === "::1" || /^127\./.test(host);
  if (parsed.password === "" || loopback) return undefined;
  return `the store URL ${describeStoreUrl(url)} sends its password unencrypted (redis://) to ${host}: anyone on the network between can read it; use rediss:// (TLS) to reach another machine`;
}

/**
 * `text:`, for a message that goes on after it — or `text` alone when it ends in a colon already
 * (a URL whose prefix is `fleet:`), so that no "::" is printed.
 */
export function withColon(text: string): string {
  return text.endsWith(":") ? text : `${text}:`;
}

export interface OpenStoreOptions {
  /**
   * SQLite: `process` (default) survives a process crash; `os` survives power loss.
   * Redis: see the README ("Redis: many workers on many machines") for what each promises.
   */
  durability?: "process" | "os";
  /** SQLite: how long to wait for another process's write before failing (default 5000 ms). */
  busyTimeoutMs?: number;
  /**
   * Only reads: every write is refused, and nothing is created, upgraded or changed on opening.
   * A SQLite file is opened read-only, so a file or folder this process may not write works too.
   */
  readOnly?: boolean;
  /**
   * Creates the store when it is missing (default): a SQLite file, a Redis prefix's keys. False:
   * a missing store is an error naming it, for tools that act on what a store already holds (a
   * mistyped path, prefix or database must not read as an empty store, nor leave one behind).
   */
  create?: boolean;
  /**
   * Hears, once each, what is worth saying about a store that opens all the same (Redis: a
   * `maxmemory-policy` that may evict keys, a password the server does not ask for). Not called
   * for SQLite or memory stores, which have nothing of the kind to say.
   */
  onWarning?: (message: string) => void;
}

const DURABILITIES = ["process", "os"];

/**
 * Opens a store by URL: `memory:`, `sqlite:./pitwall.db` (the default; `sqlite:/abs/path.db` and
 * a bare file path work too), `redis://user:pass@host:6379/0` or `rediss://...`. Errors name the
 * store and the problem in one line.
 */
export async function openStore(url: string, options: OpenStoreOptions = {}): Promise<Store> {
  const store = await openByKind(url, options);
  return options.readOnly ? readOnlyStore(store) : store;
}

async function openByKind(url: string, options: OpenStoreOptions): Promise<Store> {
  const readOnly = options.readOnly ?? false;
  if (url === "memory:" || url === "memory") return new MemoryStore();
  if (/^rediss?:\/\//i.test(url)) {
    // Loaded only for a Redis URL: ioredis and the Redis store are ~50 modules that every other
    // command would load for nothing at start.
    const { RedisStore } = await import("./redis/redis-store.js");
    return RedisStore.open(url, {
      readOnly,
      ...(options.create !== undefined ? { create: options.create } : {}),
      ...(options.durability ? { durability: options.durability } : {}),
      ...(options.onWarning ? { onWarning: options.onWarning } : {}),
    });
  }
  const file = sqliteFile(url);
  if (file === undefined) {
    throw new ValidationError(`unsupported store URL ${withColon(describeStoreUrl(url))} use memory:, sqlite:<file> or redis://host:port`);
  }
  if (file === "") throw new ValidationError(`store URL ${JSON.stringify(url)} names no file: use sqlite:<file>, e.g. sqlite:./pitwall.db`);
  if (options.durability !== undefined && !DURABILITIES.includes(options.durability)) {
    throw new ValidationError(`store ${withColon(url)} unknown durability ${JSON.stringify(options.durability)}: use "process" or "os"`);
  }
  return new SqliteStore(file, {
    readOnly,
    ...(options.create !== undefined ? { create: options.create } : {}),
    ...(options.durability ? { durability: options.durability } : {}),
    ...(options.busyTimeoutMs !== undefined ? { busyTimeoutMs: options.busyTimeoutMs } : {}),
  });
}

/** The file of a `sqlite:` URL (`sqlite:///abs` and `sqlite:rel` both work) or of a bare path. */
function sqliteFile(url: string): string | undefined {
  if (url.startsWith("sqlite:")) return url.slice("sqlite:".length).replace(/^\/\/(?=\/)/, "");
  if (/^[a-z][a-z0-9+.-]*:/i.test(url)) return undefined;
  return url;
}
