import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { afterAll, describe, expect, it } from "vitest";
import { createEngine, openStore, readState, type RunRecord, type Store } from "../../engine/index.js";
import { TIMER_SECONDS, timerWorkflow } from "../support/durable-workflows.js";
import { kill, spawnWorker } from "../support/processes.js";

const dir = mkdtempSync(join(tmpdir(), "pitwall-timer-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

async function until(store: Store, runId: string, done: (run: RunRecord) => boolean, timeoutMs = 15_000): Promise<RunRecord> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const run = await store.getRun(runId);
    if (run && done(run)) return run;
    if (Date.now() > deadline) throw new Error(`run ${runId} is still ${run?.status} after ${timeoutMs} ms`);
    await sleep(25);
  }
}

describe("SQLite store: durable timers", () => {
  it("wakes a parked run on time although every process was restarted in between", async () => {
    const file = join(dir, "timer.db");
    let store = await openStore(`sqlite:${file}`);
    const { id: runId } = await createEngine({ store, workflows: [timerWorkflow()], worker: false }).start("timer", {});
    const first = spawnWorker(file, "timer", 1000);
    let wakeAt: number;
    try {
      const parked = await until(store, runId, (r) => r.status === "queued" && r.wakeAt !== null);
      wakeAt = parked.wakeAt!;
      expect(wakeAt - parked.createdAt).toBeGreaterThanOrEqual(TIMER_SECONDS * 1000 - 100);
    } finally {
      await kill(first);
    }
    await store.close();
    expect(Date.now()).toBeLessThan(wakeAt);

    // Nothing holds the run now but the file. A fresh worker must wait for the time, then finish it.
    const second = spawnWorker(file, "timer", 1000, "drain");
    expect(await second.exited, second.stderr()).toBe(0);
    store = await openStore(`sqlite:${file}`);
    try {
      const run = await store.getRun(runId);
      expect(run?.status).toBe("succeeded");
      const events = await store.readEvents({ runId });
      const released = events.find((e) => e.type === "run.released");
      expect(released?.payload).toMatchObject({ status: "queued", wakeAt });
      const wokenBy = events.filter((e) => e.type === "run.claimed" && e.seq > released!.seq).map((e) => e.actor);
      expect(wokenBy).toEqual([`worker:child-${second.process.pid}`]);
      const state = (await readState(store, runId, run!.headN)) as { trail: string[] };
      const ranAt = Number(state.trail[1]!.replace("after at ", ""));
      expect(ranAt).toBeGreaterThanOrEqual(wakeAt);
      // On time: woken by its timer, not by a later sweep (a loaded machine may add a second or two).
      expect(ranAt - wakeAt).toBeLessThan(5000);
    } finally {
      await store.close();
    }
  }, 60_000);
});
