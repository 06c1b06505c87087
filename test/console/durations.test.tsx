import { expect, it } from "vitest";
import { Operator, type RunFilter, type RunRecord, type Store } from "../../engine/index.js";
import { newRun } from "../../engine/runtime/new-run.js";
import { fixture } from "./fixtures.js";
import { openConsole, type ConsoleHarness } from "./harness.js";
import { sqliteFixtures } from "./sqlite-fixture.js";

const sqlite = sqliteFixtures("durations");
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** The DUR column of a run's row (the last but one column at 120 wide: before the pending count). */
const durOf = (ui: ConsoleHarness, runId: string) => {
  const line = ui.lines().find((l) => l.includes(runId));
  return line?.match(/ (\d+ms|[\d.]+s|\d+m)(?: +\d+)? *$/)?.[1];
};
const ms = (text: string | undefined) => (text === undefined ? NaN : text.endsWith("ms") ? Number(text.slice(0, -2)) : text.endsWith("m") ? Number(text.slice(0, -1)) * 60_000 : Number(text.slice(0, -1)) * 1000);

it("counts a paused run's time to its pause, not to an operator's later edit, and sorts by longest as DUR shows", async () => {
  const { fx } = await sqlite.open();
  // Paused at its approval after some work (well under a second on a quiet machine).
  const startedAt = Date.now();
  const paused = await (await fx.engine.start("travel-planner", {})).wait({ timeoutMs: 10_000 });
  const pausedAfter = Date.now() - startedAt;
  // At most that, and DUR's rounding (1.05 s shows as 1.1s); counted to the edit, over 1.7 s more.
  const toPause = pausedAfter + 50;
  await sleep(400);
  // Started later, and running on: it has run longer than the paused run ever did.
  const running = await fx.engine.start("quiet", {});
  await sleep(Math.max(1_300, pausedAfter + 1_000));
  await new Operator(fx.store, { actor: "alice" }).updateState(paused.id, [{ op: "replace", path: "/budget", value: 100 }]);
  const ui = sqlite.console(await openConsole({ store: fx.store, columns: 120 }));
  await ui.waitFor(running.id);
  expect(ms(durOf(ui, paused.id))).toBeLessThanOrEqual(toPause);
  await ui.press("s", "s", "s", "s");
  await ui.waitFor("by longest");
  const order = ui.lines().filter((l) => l.includes(paused.id) || l.includes(running.id));
  expect(order[0]).toContain(running.id);
  expect(ms(durOf(ui, running.id))).toBeGreaterThan(ms(durOf(ui, paused.id)));
  // The run's own header says the same.
  while (!(ui.lines().find((l) => l.startsWith("›")) ?? "").includes(paused.id)) await ui.press("j");
  await ui.press("enter");
  const frame = await ui.waitFor("1 Graph");
  expect(ms(frame.match(/ran (\S+)/)?.[1])).toBeLessThanOrEqual(toPause);
});

/**
 * The store as the console sees it, counting the reads of `pausedId`'s run.paused event; `asOlder`:
 * answering as if an earlier release had paused that run (no pause time of its own) and its
 * run.paused event had been trimmed since.
 */
function pauseReadsCounted(store: Store, pausedId: string, asOlder: boolean): { store: Store; reads: () => number } {
  let reads = 0;
  const older = (run: RunRecord | undefined) => (asOlder && run?.id === pausedId ? { ...run, pausedAt: null } : run);
  const counted = new Proxy(store, {
    get(target, key, receiver) {
      if (key === "getRun") return async (id: string) => older(await target.getRun(id));
      if (key === "listRuns") return async (filter: RunFilter) => {
        const page = await target.listRuns(filter);
        return { ...page, runs: page.runs.map((run) => older(run)!) };
      };
      if (key !== "readEvents") return Reflect.get(target, key, receiver) as unknown;
      return async (query: { runId?: string; types?: string[] }) => {
        if (query.runId !== pausedId || !query.types?.includes("run.paused")) return target.readEvents(query as never);
        reads++;
        return asOlder ? [] : target.readEvents(query as never);
      };
    },
  });
  return { store: counted, reads: () => reads };
}

/**
 * A console open on a store with a run paused at its approval and a run whose events make the
 * console list the runs again, several times: how many times it read the paused run's run.paused
 * event (`asOlder`: as `pauseReadsCounted` says).
 */
async function pauseReadsOverRefreshes(asOlder: boolean): Promise<number> {
  const { fx } = await sqlite.open();
  const paused = await (await fx.engine.start("travel-planner", {})).wait({ timeoutMs: 10_000 });
  expect((await fx.store.getRun(paused.id))!.pausedAt).toEqual(expect.any(Number));
  const running = await fx.engine.start("quiet", {});
  const { store, reads } = pauseReadsCounted(fx.store, paused.id, asOlder);
  const ui = sqlite.console(await openConsole({ store, columns: 120 }));
  await ui.waitFor(paused.id);
  await sleep(1_500);
  expect(ui.frame()).toContain(running.id);
  return reads();
}

it("reads the pause of a paused run whose run.paused event is gone once, not at every refresh", async () => {
  expect(await pauseReadsOverRefreshes(true)).toBe(1);
});

it("reads no event for a paused run that keeps its own pause time", async () => {
  expect(await pauseReadsOverRefreshes(false)).toBe(0);
});

it("counts a timer down by the second on a run over a minute old, in the runs list and the run's header", async () => {
  const fx = fixture();
  try {
    const init = newRun({ id: "run-sleeper", workflow: { name: "nobody-runs-this", version: "v-none" }, state: {}, actor: "test" });
    init.run.createdAt = init.run.updatedAt = Date.now() - 5 * 60_000;
    init.run.wakeAt = Date.now() + 40_000;
    await fx.store.createRun(init);
    const ui = await openConsole({ store: fx.store });
    try {
      const countdown = async () => Number(/wakes in (\d+)s/.exec(await ui.waitFor(/wakes in \d+s/))![1]);
      // Three different seconds within about two: it ticks each second, not every 15.
      const first = await countdown();
      await ui.waitFor(`wakes in ${first - 1}s`, 2_000);
      await ui.waitFor(`wakes in ${first - 2}s`, 2_000);
      await ui.press("enter");
      await ui.waitFor("1 Graph");
      const inHeader = await countdown();
      await ui.waitFor(`wakes in ${inHeader - 1}s`, 2_000);
    } finally {
      ui.unmount();
    }
  } finally {
    await fx.close();
  }
});

it("says how long a node ran as its attempts' time, not the wait between them, and the wall time apart", async () => {
  const fx = fixture();
  try {
    const failed = await (await fx.engine.start("failing", {})).wait({ timeoutMs: 10_000 });
    await sleep(1_200);
    const op = new Operator(fx.store, { actor: "alice" });
    await op.retry(failed.id, "call");
    await fx.engine.run(failed.id).wait({ until: "end", timeoutMs: 10_000 });
    const [task] = await fx.store.listTasks(failed.id);
    const times = task!.attempts.map((a) => a.endedAt! - a.startedAt);
    expect(times).toHaveLength(2);
    const ui = await openConsole({ store: fx.store, columns: 160, initial: { kind: "run", runId: failed.id } });
    try {
      const frame = await ui.waitFor(" call · step ");
      const [, ran, last, wall] = / call · step \d+: failed, 2 attempts, ran (\S+) \(last (\S+); (\S+) from first start to last end\)/.exec(frame) ?? [];
      expect(ms(ran)).toBeLessThan(1_000);
      expect(ms(ran)).toBeGreaterThanOrEqual(times[0]! + times[1]!);
      expect(ms(last)).toBe(times[1]);
      expect(ms(wall)).toBeGreaterThanOrEqual(1_200);
    } finally {
      ui.unmount();
    }
  } finally {
    await fx.close();
  }
});
