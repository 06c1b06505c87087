import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { MemoryStore, openStore, type Store } from "../../engine/index.js";
import { newRun } from "../../engine/runtime/new-run.js";
import { RedisServer } from "../support/redis-server.js";

/** Two connections to one store, as two worker processes have (the memory store: one, shared). */
interface Pair {
  name: string;
  open(): Promise<[Store, Store]>;
}

const redis = new RedisServer();
let dir = "";
beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), "pitwall-at-once-"));
  await redis.start();
});
afterAll(async () => {
  await redis.dispose();
  rmSync(dir, { recursive: true, force: true });
});

const pairs: Pair[] = [
  { name: "memory", open: async () => { const store = new MemoryStore(); return [store, store]; } },
  { name: "sqlite", open: async () => { const url = `sqlite:${join(dir, "race.db")}`; return [await openStore(url), await openStore(url)]; } },
  { name: "redis", open: async () => { const url = `${redis.url}/0?prefix=race:`; return [await openStore(url), await openStore(url)]; } },
];

describe.each(pairs)("claims racing for a workflow's last places ($name store)", (pair) => {
  it("gives no more runs than runsAtOnce however many claims from two connections come at once — each for another version of the workflow — and the other workflow's runs besides", async () => {
    const [a, b] = await pair.open();
    try {
      const versions = { a: "v-raced-a", b: "v-raced-b", beside: "v-beside" };
      for (const [version, name] of [[versions.a, "raced"], [versions.b, "raced"], [versions.beside, "beside"]] as const) {
        const definition = { name, state: {}, start: "x", nodes: {}, limits: { maxSteps: 10, concurrency: 1 }, interruptBefore: [], interruptAfter: [] };
        await a.putWorkflow({ version, name, definition: definition as never, createdAt: 1 });
      }
      for (let i = 0; i < 6; i++) {
        await a.createRun(newRun({ id: `run-raced-a${i}`, workflow: { name: "raced", version: versions.a }, state: {}, actor: "test" }));
        await b.createRun(newRun({ id: `run-raced-b${i}`, workflow: { name: "raced", version: versions.b }, state: {}, actor: "test" }));
      }
      for (let i = 0; i < 4; i++) await b.createRun(newRun({ id: `run-beside-${i}`, workflow: { name: "beside", version: versions.beside }, state: {}, actor: "test" }));
      const runsAtOnce = { raced: 3 };
      // Each connection's worker runs one version of the workflow: the runs they choose differ.
      const claim = (i: number) => (i % 2 ? a.claimRun({ owner: "wa", leaseMs: 60_000, runsAtOnce, versions: [versions.a, versions.beside] }) : b.claimRun({ owner: "wb", leaseMs: 60_000, runsAtOnce, versions: [versions.b, versions.beside] }));
      const claims = await Promise.all(Array.from({ length: 24 }, (_, i) => claim(i)));
      const taken = claims.flatMap((c) => (c ? [c.run.workflow] : []));
      expect(taken.filter((w) => w === "raced")).toHaveLength(3);
      expect(taken.filter((w) => w === "beside")).toHaveLength(4);
      expect((await a.listRuns({ status: "running", workflow: "raced" })).runs).toHaveLength(3);
      expect((await b.listRuns({ status: "queued", workflow: "raced" })).runs).toHaveLength(9);
    } finally {
      await a.close();
      if (b !== a) await b.close();
    }
  });
});
