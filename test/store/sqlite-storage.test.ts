import { mkdtempSync, rmSync, statfsSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { z } from "zod";
import { createEngine, openStore, workflow } from "../../engine/index.js";

const dir = mkdtempSync(join(tmpdir(), "pitwall-storage-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const ITEM = "y".repeat(200);

/** One node looping `steps` times, appending 200 bytes per step; the first step stores an artifact. */
function appender(steps: number) {
  return workflow(`appender-${steps}`, { state: z.object({ items: z.array(z.string()).default([]), n: z.number().default(0) }), reducers: { items: "append" } })
    .node(
      "work",
      async (s, ctx) => {
        if (s.n === 0) await ctx.artifact(`report of ${steps} steps`, "text/plain");
        return { items: [ITEM], n: s.n + 1 };
      },
      { route: (s) => (s.n >= steps ? "done" : "again"), routes: { again: "work", done: "END" } },
    )
    .compile();
}

describe("SQLite store: storage figures per run", () => {
  it("counts each run's own checkpoints, events and artifacts, growing linearly with its steps", async () => {
    const store = await openStore(`sqlite:${join(dir, "storage.db")}`);
    const short = appender(128);
    const long = appender(256);
    const engine = createEngine({ store, workflows: [short, long] });
    try {
      // One after the other: the commits of runs running together are deflated together, and
      // the share of each run's documents then depends on whom it ran with.
      const a = await engine.start(short, {});
      expect((await a.wait({ until: "end" })).status).toBe("succeeded");
      const b = await engine.start(long, {});
      expect((await b.wait({ until: "end" })).status).toBe("succeeded");
      const sa = await store.runStorage(a.id);
      const sb = await store.runStorage(b.id);
      expect(sa.artifacts).toBe("report of 128 steps".length);
      expect(sb.artifacts).toBe("report of 256 steps".length);
      expect(sa.total).toBe(sa.checkpoints + sa.events + sa.artifacts);
      // Snapshots come every 64 steps: runs of 128 and 256 steps compare like with like.
      // Each step stores its 200 appended bytes once in a delta (plus once more in a snapshot segment).
      expect(sa.checkpoints).toBeGreaterThan(128 * 200);
      expect(sa.checkpoints).toBeLessThan(128 * 200 * 4);
      for (const part of ["checkpoints", "events"] as const) {
        const growth = sb[part] / sa[part];
        expect(growth, part).toBeGreaterThan(1.8);
        expect(growth, part).toBeLessThan(2.2);
      }
    } finally {
      await engine.close();
      await store.close();
    }
  });

  it("tells the room left on the file system of the store's folder", async () => {
    const store = await openStore(`sqlite:${join(dir, "room.db")}`);
    try {
      const room = (await store.room())!;
      const fs = statfsSync(dir);
      expect(room.where).toBe(`the file system of ${dir}`);
      expect(room.totalBytes).toBe(fs.blocks * fs.bsize);
      // Other processes write to the same file system meanwhile.
      expect(Math.abs(room.freeBytes - fs.bavail * fs.bsize)).toBeLessThan(64 * 2 ** 20);
      expect(room.state).toBe(fs.bavail * fs.bsize < 2 ** 20 ? "full" : fs.bavail * fs.bsize < 256 * 2 ** 20 ? "low" : "ok");
    } finally {
      await store.close();
    }
  });
});
