import { MemoryStore, type Store } from "../../engine/index.js";

/**
 * The stores every contract and engine suite runs against. Each store's folder adds its entry;
 * `setup` starts whatever the store needs (a file, a redis-server) once per test file.
 */
export interface StoreFactory {
  name: string;
  setup?(): Promise<void>;
  teardown?(): Promise<void>;
  /** A fresh, empty store. */
  open(): Promise<Store>;
}

export const storeFactories: StoreFactory[] = [{ name: "memory", open: async () => new MemoryStore() }];
