import { afterEach, describe, expect, it, vi } from "vitest";
import { z } from "zod";
import { MemoryStore, StoreError, Worker, WorkflowRegistry, actionRegistry, createEngine, workflow, type Store, type WorkerNotice } from "../../engine/index.js";
import { until } from "../support/engine.js";

const wf = workflow("tick", { state: z.object({ n: z.number().default(0) }) }).node("a", (s) => ({ n: s.n + 1 }), { next: "END" }).compile();

/** A store whose claimRun fails (as SQLite does on a file it cannot grow) while `failing` is set. */
function failingClaims(store: Store): { store: Store; failing: { on: boolean } } {
  const failing = { on: true };
  const wrapped = new Proxy(store, {
    get(target, prop, receiver) {
      if (prop === "claimRun") {
        return async (...args: Parameters<Store["claimRun"]>) => {
          if (failing.on) throw new StoreError("store ./f4.db could not be read or written (SQLITE_IOERR_WRITE)");
          return target.claimRun(...args);
        };
      }
      const value: unknown = Reflect.get(target, prop, receiver);
      return typeof value === "function" ? value.bind(target) : value;
    },
  });
  return { store: wrapped, failing };
}

describe("a worker whose store keeps failing its claims", () => {
  afterEach(() => vi.useRealTimers());

  it("says so once, again once a minute with how long, and once when claiming works again (then runs the run)", async () => {
    vi.useFakeTimers({ toFake: ["setTimeout", "clearTimeout", "setInterval", "clearInterval", "Date"] });
    const memory = new MemoryStore();
    const run = await createEngine({ store: memory, workflows: [wf], worker: false }).start(wf);
    const { store, failing } = failingClaims(memory);
    const said: string[] = [];
    const worker = new Worker(store, new WorkflowRegistry(store, actionRegistry({}), [wf]), { pollMs: 1_000, onError: (m) => said.push(m) });
    worker.start();
    const claiming = () => said.filter((m) => m.startsWith("claiming"));

    await vi.advanceTimersByTimeAsync(30_000);
    expect(claiming()).toEqual(["claiming failed: store ./f4.db could not be read or written (SQLITE_IOERR_WRITE); trying again (said again each minute it goes on)"]);
    await vi.advanceTimersByTimeAsync(31_000);
    expect(claiming().slice(1)).toEqual(["claiming still failing after 1 min: store ./f4.db could not be read or written (SQLITE_IOERR_WRITE)"]);

    failing.on = false;
    await vi.advanceTimersByTimeAsync(5_000);
    expect(claiming().slice(2)).toEqual([expect.stringMatching(/^claiming works again, after failing for 1 min [0-6] s$/)]);
    expect((await memory.getRun(run.id))?.status).toBe("succeeded");
    await worker.stop();
    expect(claiming()).toHaveLength(3);
  });

  it("with no listener at all, writes its warnings to stderr (never information), naming itself", async () => {
    const warned = vi.spyOn(console, "warn").mockImplementation(() => {});
    try {
      const memory = new MemoryStore();
      const run = await createEngine({ store: memory, workflows: [wf], worker: false }).start(wf);
      const { store, failing } = failingClaims(memory);
      const worker = new Worker(store, new WorkflowRegistry(store, actionRegistry({}), [wf]), { pollMs: 20, id: "w-quiet" });
      worker.start();
      await until(() => warned.mock.calls.length > 0, 5_000, "the warning");
      failing.on = false;
      await until(async () => (await memory.getRun(run.id))?.status === "succeeded", 5_000, "the run");
      await worker.stop();
      expect(warned.mock.calls).toEqual([["pitwall worker w-quiet: claiming failed: store ./f4.db could not be read or written (SQLITE_IOERR_WRITE); trying again (said again each minute it goes on)"]]);
    } finally {
      warned.mockRestore();
    }
  });

  it("tells onNotice that the store fails as a warning, and that it works again as information, not an error", async () => {
    const memory = new MemoryStore();
    const run = await createEngine({ store: memory, workflows: [wf], worker: false }).start(wf);
    const { store, failing } = failingClaims(memory);
    const notices: WorkerNotice[] = [];
    const worker = new Worker(store, new WorkflowRegistry(store, actionRegistry({}), [wf]), { pollMs: 20, onNotice: (n) => notices.push(n) });
    worker.start();
    await until(() => notices.length > 0, 5_000, "the failure");
    failing.on = false;
    await until(async () => (await memory.getRun(run.id))?.status === "succeeded", 5_000, "the run");
    await worker.stop();
    expect(notices.map((n) => [n.level, n.kind])).toEqual([
      ["warn", "store-failing"],
      ["info", "store-recovered"],
    ]);
  });

  it("claims for several free slots at once, and a claim that fails among them leaves none of the others' runs stranded", async () => {
    const memory = new MemoryStore();
    const engine = createEngine({ store: memory, workflows: [wf], worker: false });
    const runs = await Promise.all(Array.from({ length: 6 }, () => engine.start(wf)));
    let calls = 0;
    const atOnce: number[] = [];
    let pending = 0;
    const store = new Proxy(memory, {
      get(target, prop, receiver) {
        if (prop === "claimRun") {
          return async (...args: Parameters<Store["claimRun"]>) => {
            calls++;
            const call = calls;
            atOnce.push(++pending);
            try {
              await new Promise((r) => setImmediate(r));
              // The second claim fails; the third, made at once with it, takes a run.
              if (call === 2) throw new StoreError("store ./f4.db could not be read or written (SQLITE_IOERR_WRITE)");
              return await target.claimRun(...args);
            } finally {
              pending--;
            }
          };
        }
        const value: unknown = Reflect.get(target, prop, receiver);
        return typeof value === "function" ? value.bind(target) : value;
      },
    });
    // A lease far longer than the test: a run claimed and then dropped would stay running.
    const worker = new Worker(store, new WorkflowRegistry(store, actionRegistry({}), [wf]), { concurrency: 8, pollMs: 20, leaseMs: 600_000, onError: () => {} });
    worker.start();
    await until(async () => (await Promise.all(runs.map((r) => memory.getRun(r.id)))).every((r) => r?.status === "succeeded"), 5_000, "every run");
    await worker.stop();
    expect(Math.max(...atOnce)).toBeGreaterThan(1);
  });
});
