import { spawnSync } from "node:child_process";
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { afterAll, describe, expect, it } from "vitest";
import { Operator, SqliteStore, createEngine, openStore, type Store } from "../../engine/index.js";
import { crashWorkflow } from "../support/durable-workflows.js";
import { kill, spawnWorker } from "../support/processes.js";

const dir = mkdtempSync(join(tmpdir(), "pitwall-backup-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** Every run of a store is whole: its events, checkpoints and state agree with its run record. */
async function expectWhole(store: Store): Promise<number> {
  const { runs } = await store.listRuns({ limit: 1000 });
  const operator = new Operator(store, { actor: "operator:test" });
  for (const run of runs) {
    const events = await store.readEvents({ runId: run.id });
    expect(events.map((e) => e.runSeq)).toEqual(Array.from({ length: run.eventCount }, (_, i) => i + 1));
    const checkpoints = await store.listCheckpoints(run.id);
    expect(checkpoints.map((c) => c.n)).toEqual(Array.from({ length: run.headN + 1 }, (_, i) => i));
    const state = (await operator.state(run.id)) as { trail: string[] };
    // The trail holds one entry per node that finished before the head checkpoint.
    const finished = events.filter((e) => e.type === "task.succeeded" && e.seq <= events.findLast((x) => x.type === "step.completed" || x.type === "run.created")!.seq);
    expect(state.trail).toHaveLength(finished.length);
  }
  return runs.length;
}

describe("SQLite store: backup", () => {
  it("copies a store that a worker process keeps writing to; each copy is a whole, private store of one moment", async () => {
    const file = join(dir, "busy.db");
    const store = (await openStore(`sqlite:${file}`)) as SqliteStore;
    const engine = createEngine({ store, workflows: [crashWorkflow()], worker: false });
    const worker = spawnWorker(file, "crash", 5000);
    try {
      for (let i = 0; i < 12; i++) await engine.start("crash-30", {});
      await worker.line((l) => "ready" in l);
      const copies: { file: string; events: number }[] = [];
      for (let i = 0; i < 3; i++) {
        // Wait for the worker to commit more, so that each copy is taken in the middle of writes.
        const seen = await store.lastEventSeq();
        while ((await store.lastEventSeq()) < seen + 40) await sleep(20);
        const copy = join(dir, `busy-copy-${i}.db`);
        const result = await store.backup(copy);
        expect(result).toEqual({ file: copy, bytes: statSync(copy).size, runs: 12 });
        copies.push({ file: copy, events: await store.lastEventSeq() });
      }
      await kill(worker);
      let previous = 0;
      for (const copy of copies) {
        expect(statSync(copy.file).mode & 0o777).toBe(0o600);
        const restored = await openStore(`sqlite:${copy.file}`);
        try {
          expect(await expectWhole(restored)).toBe(12);
          const last = await restored.lastEventSeq();
          expect(last).toBeGreaterThan(previous);
          expect(last).toBeLessThanOrEqual(copy.events);
          previous = last;
        } finally {
          await restored.close();
        }
      }
      expect(readdirSync(dir).filter((name) => name.includes(".partial-"))).toEqual([]);
    } finally {
      await kill(worker);
      await engine.close();
    }
  }, 60_000);

  it("refuses a file that exists (left as it was) and a folder that does not exist, on one line, leaving nothing behind", async () => {
    const file = join(dir, "quiet.db");
    const store = (await openStore(`sqlite:${file}`)) as SqliteStore;
    try {
      const taken = join(dir, "taken.db");
      writeFileSync(taken, "keep me");
      await expect(store.backup(taken)).rejects.toThrow(`backup ${taken} already exists: name a new file (nothing was written)`);
      expect(readFileSync(taken, "utf8")).toBe("keep me");
      const nowhere = join(dir, "missing", "copy.db");
      await expect(store.backup(nowhere)).rejects.toThrow(`backup ${nowhere} cannot be created: folder ${join(dir, "missing")} does not exist (nothing was written)`);
      expect(readdirSync(dir).filter((name) => name.includes(".partial-"))).toEqual([]);
    } finally {
      await store.close();
    }
  });

  it("removes the temporary copies of the same backup that a process killed while making them left behind", async () => {
    const folder = mkdtempSync(join(tmpdir(), "pitwall-backup-left-"));
    const store = (await openStore(`sqlite:${join(folder, "store.db")}`)) as SqliteStore;
    try {
      // A process that has exited, and one still running (this one), each with a copy under way.
      const gone = spawnSync(process.execPath, ["-e", ""]).pid!;
      const abandoned = `.copy.db.partial-${gone}-0bad`;
      const underWay = `.copy.db.partial-${process.pid}-0ok0`;
      const otherBackup = `.other.db.partial-${gone}-0bad`;
      for (const name of [abandoned, underWay, otherBackup]) writeFileSync(join(folder, name), "half a copy");
      await store.backup(join(folder, "copy.db"));
      expect(readdirSync(folder).filter((name) => name.includes(".partial-")).sort()).toEqual([underWay, otherBackup].sort());
    } finally {
      await store.close();
      rmSync(folder, { recursive: true, force: true });
    }
  });
});
