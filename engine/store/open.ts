import { StoreError } from "../errors.js";
import { MemoryStore } from "./memory/memory-store.js";
import { RedisStore } from "./redis/redis-store.js";
import type { Store } from "./store.js";

/** A store URL with any password replaced, safe to print. */
export function describeStoreUrl(url: string): string {
  return url.replace(/^(rediss?:\/\/)([^@/]*)@/, (_m, scheme: string, auth: string) => {
    const user = auth.includes(":") ? auth.slice(0, auth.indexOf(":")) : "";
    return `${scheme}${user ? `${user}:***` : "***"}@`;
  });
}

export interface OpenStoreOptions {
  /**
   * SQLite: `process` (default) survives a process crash; `os` survives power loss.
   * Redis: see the README ("Redis: many workers on many machines") for what each promises.
   */
  durability?: "process" | "os";
}

/**
 * Opens a store by URL: `memory:`, `sqlite:./pitwall.db` (the default), `redis://user:pass@host:6379/0`
 * or `rediss://...`. Errors name the store and the problem in one line.
 */
export async function openStore(url: string, options: OpenStoreOptions = {}): Promise<Store> {
  if (url === "memory:" || url === "memory") return new MemoryStore();
  if (/^rediss?:\/\//i.test(url)) return RedisStore.open(url, options.durability ? { durability: options.durability } : {});
  throw new StoreError(`unsupported store URL ${describeStoreUrl(url)}: use memory:, sqlite:<file> or redis://host:port`);
}
