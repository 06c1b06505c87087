import { Redis } from "ioredis";
import { afterAll, beforeAll, expect, it } from "vitest";
import { openStore, type Store } from "../../engine/index.js";
import { RedisServer } from "../support/redis-server.js";
import { openConsole } from "./harness.js";

const server = new RedisServer();
let raw: Redis;
beforeAll(async () => {
  await server.start();
  raw = new Redis({ port: server.port, lazyConnect: true });
  await raw.connect();
});
afterAll(async () => {
  raw.disconnect();
  await server.dispose();
});

/** Leaves the server `headroom` bytes below its memory limit (above it when negative; 0: no limit). */
async function limitMemory(headroom: number): Promise<void> {
  const used = Number(/^used_memory:(\d+)/m.exec(await raw.info("memory"))![1]);
  await raw.config("SET", "maxmemory", headroom === 0 ? "0" : String(used + headroom));
}

it("says in the header that the store is full, or nearly, and stops saying so once it has room", async () => {
  const store: Store = await openStore(`${server.url}/0`);
  await limitMemory(-64 * 1024);
  const ui = await openConsole({ store, recountMs: 500 });
  try {
    expect((await ui.waitFor(" store full ")).split("\n")[0]).toContain(" store full ");
    await limitMemory(600 * 1024);
    // The room is read again with the counts (every 5 s; here every 0.5). What the server uses
    // moves by a client buffer or two between setting the limit and the console's reading (more
    // under load).
    const header = (await ui.waitFor(/ store \d+\.\dK left /, 8_000)).split("\n")[0]!;
    expect(Number(/ store (\d+\.\d)K left /.exec(header)![1])).toBeGreaterThan(400);
    expect(Number(/ store (\d+\.\d)K left /.exec(header)![1])).toBeLessThan(800);
    await limitMemory(0);
    expect((await ui.waitFor((f) => !f.includes(" store "), 8_000)).split("\n")[0]).toContain("memory:test");
  } finally {
    ui.unmount();
    await raw.config("SET", "maxmemory", "0");
    await store.close();
  }
});

it("says in the header when the server is changed to evict keys under it, and stops once it is changed back", async () => {
  const store: Store = await openStore(`${server.url}/0`);
  const ui = await openConsole({ store, recountMs: 500 });
  try {
    await raw.config("SET", "maxmemory-policy", "allkeys-lru");
    await limitMemory(100 * 2 ** 20);
    expect((await ui.waitFor(" store evicts keys ", 8_000)).split("\n")[0]).toContain(" store evicts keys ");
    await raw.config("SET", "maxmemory-policy", "noeviction");
    expect((await ui.waitFor((f) => !f.includes(" store evicts keys "), 8_000)).split("\n")[0]).toContain("memory:test");
  } finally {
    ui.unmount();
    await raw.config("SET", "maxmemory-policy", "noeviction");
    await raw.config("SET", "maxmemory", "0");
    await store.close();
  }
});
