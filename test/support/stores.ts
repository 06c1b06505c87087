import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, afterEach, beforeAll, beforeEach } from "vitest";
import { MemoryStore, openStore, type Store } from "../../engine/index.js";
import { addReadmeUser } from "./redis-acl.js";
import { RedisServer } from "./redis-server.js";

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

/**
 * One redis-server per test file; each store opened on it has a key prefix of its own, and is
 * used as the least-privileged user the README's "Redis permissions" make.
 */
function redisFactory(): StoreFactory {
  let server: RedisServer | undefined;
  let opened = 0;
  return {
    name: "redis",
    async setup() {
      server = new RedisServer();
      await server.start();
      await addReadmeUser(server.port, "pitwall", "tests", "t*");
    },
    async teardown() {
      await server?.dispose();
      server = undefined;
    },
    async open() {
      if (!server) throw new Error("the redis store factory was not set up");
      return openStore(`${server.url.replace("redis://", "redis://pitwall:tests@")}/0?prefix=${encodeURIComponent(`t${++opened}:`)}`);
    },
  };
}

/** A temporary folder per test file; each open is a new file in it. */
function sqliteFactory(): StoreFactory {
  let dir: string | undefined;
  let opened = 0;
  return {
    name: "sqlite",
    async setup() {
      dir = mkdtempSync(join(tmpdir(), "pitwall-sqlite-"));
    },
    async teardown() {
      if (dir) rmSync(dir, { recursive: true, force: true });
      dir = undefined;
    },
    async open() {
      dir ??= mkdtempSync(join(tmpdir(), "pitwall-sqlite-"));
      return openStore(`sqlite:${join(dir, `store-${++opened}.db`)}`);
    },
  };
}

/** A fresh store of the factory's kind for each test of a file, handed to `use` before it and closed after it. */
export function storeEach(factory: StoreFactory, use: (store: Store) => void): void {
  let store: Store | undefined;
  beforeAll(async () => factory.setup?.());
  afterAll(async () => factory.teardown?.());
  beforeEach(async () => {
    store = await factory.open();
    use(store);
  });
  afterEach(async () => {
    await store?.close();
  });
}

export const storeFactories: StoreFactory[] = [{ name: "memory", open: async () => new MemoryStore() }, sqliteFactory(), redisFactory()];
