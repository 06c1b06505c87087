import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, afterEach, expect, it } from "vitest";
import { MemoryStore, openStore, type Store } from "../../engine/index.js";
import { newRun } from "../../engine/runtime/new-run.js";
import { newTaskRecord } from "../../engine/runtime/transitions.js";
import { storeWorkflow } from "../../engine/operator/workflows.js";
import { slowWorkflow } from "./fixtures.js";
import { ConsoleData } from "../../source/console/data.js";
import { LiveFeed } from "../../source/console/live.js";
import { until } from "../support/engine.js";
import { openConsole, type ConsoleHarness } from "./harness.js";

let ui: ConsoleHarness | undefined;
afterEach(() => {
  ui?.unmount();
  ui = undefined;
});
const dir = mkdtempSync(join(tmpdir(), "pitwall-console-orphans-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

async function runningRun(store: Store, id: string, owner: string, leaseMs: number) {
  await store.createRun(newRun({ id, workflow: { name: "wf", version: "v1" }, state: {}, actor: "test" }));
  return (await store.claimRun({ owner, leaseMs, runId: id }))!;
}

it("marks a running run whose lease ran out: its worker is gone or stalled", async () => {
  const store = new MemoryStore();
  await runningRun(store, "run-orphan", "vanished", 1);
  await runningRun(store, "run-alive", "busy", 60_000);
  await sleep(5);
  ui = await openConsole({ store });
  await ui.waitFor("run-orphan");
  expect(ui.lines().find((l) => l.includes("run-orphan"))).toMatch(/⚠ run-orphan +wf +0 lease ran out /);
  expect(ui.lines().find((l) => l.includes("run-alive"))).not.toContain("lease ran out");
});

it("shows an orphaned run as such at any width: its row's status, the header's count, its run view's first words", async () => {
  const store = await openStore(`sqlite:${join(dir, "orphans.db")}`);
  try {
    // Its worker was running many nodes with long names: what it was doing fills the NOW column.
    const { fence } = await runningRun(store, "run-orphan", "vanished", 1);
    const nodes = Array.from({ length: 8 }, (_, i) => `summarize-the-customer-history-${i}`);
    await store.commit({ id: "c-1", runId: "run-orphan", fence, run: { current: nodes } });
    await runningRun(store, "run-alive", "busy", 60_000);
    await sleep(5);
    ui = await openConsole({ store, columns: 80 });
    await ui.waitFor("run-orphan");
    // Narrow: the status is a glyph, and it is not the running one; the header counts it apart.
    expect(ui.lines().find((l) => l.includes("run-orphan"))).toMatch(/^.⚠ run-orphan /);
    // The counts are read after the first page of runs is drawn.
    expect((await ui.waitFor((f) => /●1 /.test(f.split("\n")[0]!))).split("\n")[0]).toMatch(/⚠ 1 orphaned .*●1 /);
    // Wide: the status says the word, before the NOW column that ends cut.
    await ui.resize(130, 24);
    await ui.waitFor("⚠ 1 orphaned");
    expect(ui.lines().find((l) => l.includes("run-orphan"))).toMatch(/^.⚠ orphaned +run-orphan .* lease ran out · summarize/);
    expect(ui.lines().find((l) => l.includes("run-alive"))).toMatch(/^.● running +run-alive /);
    expect(ui.lines()[0]).toMatch(/⚠ 1 orphaned .*● 1 running /);
    // At 40 columns the badge stays when counts give way.
    await ui.resize(40, 20);
    expect((await ui.waitFor((f) => !f.split("\n")[0]!.includes("operator:"))).split("\n")[0]).toContain("⚠ 1 orphaned");
    await ui.resize(60, 20);
    while (!(ui.lines().find((l) => l.startsWith("›")) ?? "").includes("run-orphan")) await ui.press("j");
    await ui.press("enter");
    const view = await ui.waitFor("1 Graph");
    expect(view.split("\n")[1]).toMatch(/^ ⚠ orphaned {2}run-orphan/);
    expect(view.split("\n")[2]).toMatch(/^ lease ran out · summarize/);
  } finally {
    ui?.unmount();
    ui = undefined;
    await store.close();
  }
});

it("tells a lease renewed without an event from a worker that is gone, and drops the mark when another worker takes the run over", async () => {
  const store = new MemoryStore();
  const { fence } = await runningRun(store, "run-1", "alive", 150);
  const feed = new LiveFeed(store);
  const data = new ConsoleData(store, feed, 20_000, 30);
  feed.start(await store.lastEventSeq());
  await data.start();
  try {
    // Renewals write no event: the console's copy of the lease runs out while the worker lives.
    const deadline = Date.now() + 800;
    while (Date.now() < deadline) {
      await store.renewLease("run-1", "alive", fence, 150);
      await sleep(40);
      expect(data.snapshot().orphans.has("run-1")).toBe(false);
    }
    await until(() => data.snapshot().orphans.has("run-1"), 5_000, "the run marked once its worker stops renewing");
    await store.claimRun({ owner: "rescuer", leaseMs: 60_000, runId: "run-1" });
    await until(() => !data.snapshot().orphans.has("run-1"), 5_000, "the mark dropped after the takeover");
    expect(data.snapshot().runs.get("run-1")?.owner).toBe("rescuer");
  } finally {
    data.stop();
    await feed.stop();
  }
});

it("retries a node its lost worker left running (R), saying so before it sends anything", async () => {
  const store = new MemoryStore();
  const wf = slowWorkflow();
  await storeWorkflow(store, wf);
  const init = newRun({ id: "run-lost", workflow: wf, state: wf.initialState({}), actor: "test" });
  await store.createRun(init);
  const { fence } = (await store.claimRun({ owner: "vanished", leaseMs: 1, runId: "run-lost" }))!;
  const startedAt = Date.now();
  const task = newTaskRecord({ id: "run-lost:1:crunch", runId: "run-lost", step: 1, node: "crunch", index: null, createdAt: startedAt });
  const attempts = [{ n: 1, worker: "vanished", startedAt, endedAt: null, outcome: null }];
  await store.commit({ id: "c-lost", runId: "run-lost", fence, tasks: [{ ...task, status: "running", worker: "vanished", startedAt, attempts }] });
  await sleep(5);
  ui = await openConsole({ store, initial: { kind: "run", runId: "run-lost" } });
  await ui.waitFor("lease ran out");
  // Kill says there is no process left to stop.
  await ui.press("ctrl-k");
  await ui.waitFor("Its worker was lost: nothing runs it any more.");
  await ui.press("esc");
  await ui.waitFor("kill canceled; nothing sent");
  await ui.press("R");
  await ui.waitFor("Retry crunch (task run-lost:1:crunch, left running by a lost worker)?");
  await ui.press("tab", "enter");
  await ui.waitFor("retrying; will run again: crunch");
  expect((await store.listTasks("run-lost", { step: 1 }))[0]).toMatchObject({ status: "pending", attempts: [{ outcome: "failed", error: "worker lost" }] });
});
