import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { afterAll, describe, expect, it } from "vitest";
import { createEngine, openStore, type EventRecord, type Store } from "../../engine/index.js";
import { crashWorkflow } from "../support/durable-workflows.js";
import { kill, spawnWorker } from "../support/processes.js";

const KILLS = 50;
const LEASE_MS = 400;
/** Runs kept waiting for work, so that every kill lands on a worker in the middle of something. */
const IN_FLIGHT = 3;
const NODES = 30;

const dir = mkdtempSync(join(tmpdir(), "pitwall-crash-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** The state of the same workflow run once, in memory, without any crash. */
async function referenceState() {
  const engine = createEngine({ workflows: [crashWorkflow()] });
  try {
    const run = await engine.start("crash-30", {});
    expect((await run.wait({ until: "end" })).status).toBe("succeeded");
    return await run.state();
  } finally {
    await engine.close();
  }
}

describe("SQLite store: worker processes killed with SIGKILL", () => {
  it(`finishes every run exactly once after ${KILLS} kills at random moments`, async () => {
    const file = join(dir, "crash.db");
    const workflow = crashWorkflow();
    const expected = await referenceState();
    const store: Store = await openStore(`sqlite:${file}`);
    const engine = createEngine({ store, workflows: [workflow], worker: false });
    const runIds: string[] = [];
    try {
      for (let k = 0; k < KILLS; k++) {
        const open = (await store.listRuns({ status: ["queued", "running"] })).runs.length;
        for (let i = open; i < IN_FLIGHT; i++) runIds.push((await engine.start(workflow, {})).id);
        const child = spawnWorker(file, "crash", LEASE_MS);
        await child.line((l) => "ready" in l);
        await sleep(Math.random() * 500);
        await kill(child);
      }
      const last = spawnWorker(file, "crash", LEASE_MS, "drain");
      expect(await last.exited, last.stderr()).toBe(0);

      const events = await store.readEvents();
      const seqs = events.map((e) => e.seq);
      expect(seqs).toEqual([...new Set(seqs)].sort((a, b) => a - b));
      for (const runId of runIds) {
        const run = await store.getRun(runId);
        expect(run?.status, `run ${runId}`).toBe("succeeded");
        const mine = events.filter((e) => e.runId === runId);
        expect(mine.map((e) => e.runSeq)).toEqual(mine.map((_, i) => i + 1));
        expect(run?.eventCount).toBe(mine.length);
        const successes = countBy(mine.filter((e) => e.type === "task.succeeded"), (e) => e.taskId!);
        expect(successes.size).toBe(NODES);
        expect([...successes.values()].every((n) => n === 1), `run ${runId}: a task succeeded twice`).toBe(true);
        const tasks = await store.listTasks(runId);
        expect(tasks.map((t) => t.status)).toEqual(Array(NODES).fill("succeeded"));
        expect(await engine.run(runId).state()).toEqual(expected);
      }
      // The kills did hit work in progress: runs were taken over and running tasks were lost.
      const takeovers = events.filter((e) => e.type === "run.claimed" && (e.payload as { recovered: boolean }).recovered);
      const lost = events.filter((e) => e.type === "task.failed" && (e.payload as { code?: string }).code === "WORKER_LOST");
      expect(takeovers.length).toBeGreaterThanOrEqual(KILLS / 5);
      expect(lost.length).toBeGreaterThan(0);
      console.log(`${runIds.length} runs, ${takeovers.length} take-overs, ${lost.length} tasks lost mid-run and retried`);
    } finally {
      await engine.close();
      await store.close();
    }
  }, 240_000);
});

function countBy(events: EventRecord[], key: (e: EventRecord) => string): Map<string, number> {
  const counts = new Map<string, number>();
  for (const e of events) counts.set(key(e), (counts.get(key(e)) ?? 0) + 1);
  return counts;
}
