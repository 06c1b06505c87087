import { describe, expect, it } from "vitest";
import { z } from "zod";
import { actionRegistry, loadWorkflowText, runsAtOnceOf, unclaimedWhy, workflow, type Store, type WorkerRecord } from "../../engine/index.js";
import { engineHarness, sleep, until } from "../support/engine.js";
import { storeFactories } from "../support/stores.js";

const state = z.object({ done: z.boolean().default(false) });

/** Nodes that wait for a permit, handed out one at a time by the test. */
class Gate {
  private waiting: (() => void)[] = [];
  private permits = 0;

  pass(): Promise<void> {
    if (this.permits > 0) {
      this.permits--;
      return Promise.resolve();
    }
    return new Promise((resolve) => this.waiting.push(resolve));
  }

  release(n = 1): void {
    for (let i = 0; i < n; i++) {
      const next = this.waiting.shift();
      if (next) next();
      else this.permits++;
    }
  }
}

const gated = (name: string, gate: Gate, limits: { runsAtOnce?: number } = {}) =>
  workflow(name, { state, limits })
    .node("work", async () => {
      await gate.pass();
      return { done: true };
    }, { next: "END" })
    .compile();

const running = async (store: Store, workflow: string) => (await store.listRuns({ status: "running", workflow })).runs.length;

describe.each(storeFactories)("limits.runsAtOnce ($name store)", (factory) => {
  const harness = engineHarness(factory);

  it("never has more than runsAtOnce runs of a workflow running across two workers, takes another workflow's runs meanwhile, and runs them all in the end", async () => {
    const gate = new Gate();
    const free = new Gate();
    const limited = gated("at-once-limited", gate, { runsAtOnce: 2 });
    const other = gated("at-once-other", free);
    const first = await harness.engine([limited, other], { worker: { concurrency: 4 } });
    const store = first.store;
    await harness.engine([limited, other], { store, worker: { concurrency: 4 } });
    const runs = [];
    for (let i = 0; i < 6; i++) runs.push(await first.start(limited));
    const others = [await first.start(other), await first.start(other)];

    // Watch the store the whole time: never more than 2 of the limited workflow running.
    let most = 0;
    let watching = true;
    const watch = (async () => {
      while (watching) {
        most = Math.max(most, await running(store, "at-once-limited"));
        await sleep(15);
      }
    })();

    await until(async () => (await running(store, "at-once-limited")) === 2 && (await running(store, "at-once-other")) === 2, 10_000, "two of each running");
    // Six slots are free across the workers, and the four queued runs stay queued.
    await sleep(500);
    expect(await running(store, "at-once-limited")).toBe(2);
    const queued = (await store.listRuns({ status: "queued", workflow: "at-once-limited" })).runs;
    expect(queued).toHaveLength(4);
    // What `pitwall show` and `runs` say of them.
    const atOnce = await runsAtOnceOf(store, ["at-once-limited", "at-once-other"]);
    expect([...atOnce]).toEqual([["at-once-limited", { limit: 2, running: 2 }]]);
    expect(unclaimedWhy(queued[0]!, Date.now(), undefined, atOnce.get("at-once-limited"))).toBe("limit: 2 of at-once-limited running");
    free.release(2);
    for (const run of others) expect((await run.wait({ timeoutMs: 10_000 })).status).toBe("succeeded");

    // One ends, the next takes its place: two running until the last ones.
    for (let ended = 1; ended <= 4; ended++) {
      gate.release();
      await until(async () => (await store.listRuns({ status: "succeeded", workflow: "at-once-limited" })).runs.length === ended, 10_000, `${ended} ended`);
      await until(async () => (await running(store, "at-once-limited")) === 2, 10_000, "the next one claimed");
    }
    gate.release(2);
    for (const run of runs) expect((await run.wait({ timeoutMs: 10_000 })).status).toBe("succeeded");
    watching = false;
    await watch;
    expect(most).toBe(2);
  });

  it("holds every version of a workflow to its newest stored version's limit, counting their runs together", async () => {
    const gate = new Gate();
    const older = gated("at-once-versions", gate, { runsAtOnce: 1 });
    // The same name, another graph: another version, with room for two.
    const newer = workflow("at-once-versions", { state, limits: { runsAtOnce: 2 } })
      .node("work", async () => {
        await gate.pass();
        return { done: true };
      }, { next: "tidy" })
      .node("tidy", () => ({}), { next: "END" })
      .compile();
    expect(newer.version).not.toBe(older.version);
    const engine = await harness.engine([older, newer], { worker: { concurrency: 4 } });
    const store = engine.store;
    const runs = [await engine.start(older)];
    await sleep(5);
    runs.push(await engine.start(newer), await engine.start(older), await engine.start(newer));
    await until(async () => (await running(store, "at-once-versions")) === 2, 10_000, "two running");
    await sleep(500);
    expect(await running(store, "at-once-versions")).toBe(2);
    gate.release(4);
    for (const run of runs) expect((await run.wait({ timeoutMs: 10_000 })).status).toBe("succeeded");
  });

  it("holds sub-workflow runs to their own workflow's limit; a parent waiting on its child is not running", async () => {
    const gate = new Gate();
    const child = gated("at-once-child", gate, { runsAtOnce: 1 });
    const parent = workflow("at-once-parent", { state, limits: { runsAtOnce: 1 } }).subgraph("sub", child, { next: "END" }).compile();
    const engine = await harness.engine([parent], { worker: { concurrency: 4 } });
    const store = engine.store;
    const runs = [await engine.start(parent), await engine.start(parent)];
    // Both parents got to their child (each was running only until it started it), one child runs.
    await until(async () => (await store.listRuns({ workflow: "at-once-child" })).runs.length === 2, 10_000, "both children");
    await until(async () => (await running(store, "at-once-child")) === 1, 10_000, "one child running");
    await sleep(300);
    expect(await running(store, "at-once-child")).toBe(1);
    expect(await running(store, "at-once-parent")).toBe(0);
    gate.release(2);
    for (const run of runs) expect((await run.wait({ timeoutMs: 10_000 })).status).toBe("succeeded");
  });
});

describe("limits.runsAtOnce in a definition", () => {
  const actions = actionRegistry({ t: { go: () => ({}) } });
  const text = (runsAtOnce: unknown) => JSON.stringify({ name: "w", state: {}, start: "a", limits: { runsAtOnce }, nodes: { a: { action: "t.go", next: "END" } } });

  it("takes a whole number of at least 1, from JSON and from the builder", () => {
    expect(loadWorkflowText(text(3), actions).definition.limits.runsAtOnce).toBe(3);
    for (const bad of [0, -1, 1.5, "2"]) expect(() => loadWorkflowText(text(bad), actions)).toThrow(/\$\.limits\.runsAtOnce/);
    expect(() => workflow("w", { state, limits: { runsAtOnce: 0 } }).node("a", () => ({}), { next: "END" }).compile()).toThrow(/limits\.runsAtOnce/);
  });
});

describe("why a queued run held back by its workflow's limit waits", () => {
  const now = 1_800_000_000_000;
  const run = { status: "queued" as const, waitingOn: null, wakeAt: null, updatedAt: now - 60_000, workflow: "order", version: "v2" };
  const worker = (id: string, versions: string[], seenAgoMs: number): WorkerRecord => ({
    id,
    instance: id,
    host: "h",
    pid: 1,
    startedAt: now - 600_000,
    lastSeen: now - seenAgoMs,
    stoppedAt: null,
    heartbeatMs: 5_000,
    leaseMs: 15_000,
    concurrency: 4,
    running: 1,
    workflows: versions.map((version) => ({ name: "order", version })),
    only: null,
    actions: [],
  });
  const full = { limit: 1, running: 1 };

  it("says the limit at once, and the workers' want first once no live worker could take it when a place is free", () => {
    expect(unclaimedWhy({ ...run, updatedAt: now - 1_000 }, now, [], full)).toBe("limit: 1 of order running");
    expect(unclaimedWhy(run, now, [worker("w1", ["v2"], 1_000)], full)).toBe("limit: 1 of order running");
    expect(unclaimedWhy(run, now, [worker("w1", ["v2"], 120_000)], full)).toMatch(/^no worker has taken it: no worker runs on this store/);
    expect(unclaimedWhy(run, now, [worker("w1", ["v1"], 1_000)], full)).toMatch(/^no worker has taken it: the one live worker cannot run workflow order in version v2/);
  });
});
