import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { afterAll, describe, expect, it } from "vitest";
import { StaleFenceError, createEngine, openStore } from "../../engine/index.js";
import { newRun } from "../../engine/runtime/new-run.js";
import { slowWorkflow } from "../support/durable-workflows.js";
import { kill, spawnScript, spawnWorker } from "../support/processes.js";

const LEASE_MS = 300;

const dir = mkdtempSync(join(tmpdir(), "pitwall-fence-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe("SQLite store: a worker stopped past its lease", () => {
  it("is taken over by exactly one of several processes claiming at the same moment", async () => {
    const file = join(dir, "single-flight.db");
    const store = await openStore(`sqlite:${file}`);
    try {
      const { id: runId } = await createEngine({ store, workflows: [slowWorkflow()], worker: false }).start("slow", {});
      const first = await store.claimRun({ owner: "gone", leaseMs: 50, runId });
      const claimers = Array.from({ length: 4 }, () =>
        spawnScript("claim-once", [file, runId]),
      );
      await Promise.all(claimers.map((c) => c.line((l) => l.ready === true)));
      await new Promise((resolve) => setTimeout(resolve, 100)); // the lease of 50 ms has run out
      for (const c of claimers) c.process.kill("SIGUSR1");
      const results = await Promise.all(claimers.map((c) => c.line((l) => "fence" in l)));
      const winners = results.filter((r) => r.fence !== null);
      expect(winners).toEqual([{ fence: first!.fence + 1, recovered: true }]);
      const claims = await store.readEvents({ runId, types: ["run.claimed"] });
      expect(claims.map((e) => (e.payload as { recovered: boolean }).recovered)).toEqual([false, true]);
      expect((await store.getRun(runId))?.recoveries).toBe(1);
    } finally {
      await store.close();
    }
  }, 30_000);


  it("cannot commit after it resumes, and nothing it sends is recorded", async () => {
    const file = join(dir, "fence.db");
    const store = await openStore(`sqlite:${file}`);
    const engine = createEngine({ store, workflows: [slowWorkflow()], worker: false });
    const first = spawnWorker(file, "slow", LEASE_MS);
    try {
      const { id: runId } = await engine.start("slow", {});
      const firstId = ((await first.line((l) => "ready" in l)).ready as string);
      await first.line((l) => "started" in l);
      first.process.kill("SIGSTOP");
      await sleep(LEASE_MS * 3);

      const second = spawnWorker(file, "slow", LEASE_MS, "drain");
      const secondId = (await second.line((l) => "ready" in l)).ready as string;
      expect(await second.exited, second.stderr()).toBe(0);
      expect((await store.getRun(runId))?.status).toBe("succeeded");
      const settled = await store.readEvents({ runId });

      first.process.kill("SIGCONT");
      const end = await first.line((l) => "end" in l);
      expect((end.end as { why: string }).why).toMatch(/lease lost/);
      await sleep(200);
      expect(await store.readEvents({ runId })).toEqual(settled);

      const takeover = settled.find((e) => e.type === "run.claimed" && e.actor === `worker:${secondId}`)!;
      expect(takeover.payload).toMatchObject({ recovered: true });
      const fromFirst = settled.filter((e) => e.actor === `worker:${firstId}`);
      expect(fromFirst.length).toBeGreaterThan(0);
      expect(fromFirst.every((e) => e.seq < takeover.seq)).toBe(true);
      const slowSuccesses = settled.filter((e) => e.type === "task.succeeded" && (e.payload as { node: string }).node === "slow");
      expect(slowSuccesses.map((e) => e.actor)).toEqual([`worker:${secondId}`]);
      expect(await engine.run(runId).state()).toEqual({ trail: ["before", `slow by ${second.process.pid}`, "after"] });
    } finally {
      first.process.kill("SIGCONT");
      await kill(first);
      await engine.close();
      await store.close();
    }
  }, 60_000);

  it("is refused its next commit when another process took its run over between two of its commits", async () => {
    const file = join(dir, "between-commits.db");
    const store = await openStore(`sqlite:${file}`);
    const claimer = spawnScript("claim-once", [file, "run-between"]);
    try {
      await store.createRun(newRun({ id: "run-between", workflow: { name: "wf", version: "v1" }, state: {}, actor: "test" }));
      const mine = (await store.claimRun({ owner: "stopped", leaseMs: 50, runId: "run-between" }))!;
      await store.commit({ id: "c-1", runId: "run-between", fence: mine.fence, run: { current: ["a"] } });
      await claimer.line((l) => l.ready === true);
      await sleep(100); // the lease of 50 ms has run out
      claimer.process.kill("SIGUSR1");
      expect(await claimer.line((l) => "fence" in l)).toEqual({ fence: mine.fence + 1, recovered: true });
      await expect(store.commit({ id: "c-2", runId: "run-between", fence: mine.fence, run: { status: "succeeded", owner: null, leaseUntil: null } })).rejects.toBeInstanceOf(
        StaleFenceError,
      );
      expect(await store.getRun("run-between")).toMatchObject({ status: "running", owner: `claimer-${claimer.process.pid}`, fence: mine.fence + 1 });
    } finally {
      await kill(claimer);
      await store.close();
    }
  }, 30_000);
});

describe("SQLite store: claims", () => {
  it("skips a run another process claimed after this one looked, for the next in order; no run is claimed twice", async () => {
    const file = join(dir, "look-ahead.db");
    const [mine, theirs] = [await openStore(`sqlite:${file}`), await openStore(`sqlite:${file}`)];
    try {
      for (let i = 0; i < 5; i++) {
        await mine.createRun(newRun({ id: `run-${i}`, workflow: { name: "wf", version: "v1" }, state: {}, actor: "test" }));
        await sleep(2);
      }
      const claim = (store: typeof mine, owner: string) => store.claimRun({ owner, leaseMs: 60_000 });
      // This process looks once and finds all five; the other takes the second meanwhile.
      const claims = [await claim(mine, "mine"), await claim(theirs, "theirs"), await claim(mine, "mine"), await claim(mine, "mine"), await claim(mine, "mine")];
      expect(claims.map((c) => [c?.run.id, c?.run.owner])).toEqual([
        ["run-0", "mine"],
        ["run-1", "theirs"],
        ["run-2", "mine"],
        ["run-3", "mine"],
        ["run-4", "mine"],
      ]);
      expect(await claim(mine, "mine")).toBeUndefined();
      expect((await mine.getRun("run-1"))?.owner).toBe("theirs");
    } finally {
      await mine.close();
      await theirs.close();
    }
  });
});
