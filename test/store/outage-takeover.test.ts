import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { z } from "zod";
import { createEngine, openStore, workflow, type CompiledWorkflow, type EventRecord, type Store } from "../../engine/index.js";
import { until } from "../support/engine.js";
import { Fleet, owners, waitFor } from "../support/fleet.js";
import { NoticeLog } from "../support/notices.js";
import { RedisServer } from "../support/redis-server.js";
import { slow } from "../support/slow-workflow.js";
import { TcpProxy } from "../support/tcp-proxy.js";

const SLOW = fileURLToPath(new URL("../support/slow-workflow.ts", import.meta.url));
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** The run's claims: who claimed it, and whether as a take-over. */
async function claims(store: Store, runId: string): Promise<{ worker: string; recovered: boolean }[]> {
  const events = (await store.readEvents({ runId, types: ["run.claimed"] })) as EventRecord<"run.claimed">[];
  return events.map((e) => ({ worker: e.payload.worker, recovered: e.payload.recovered }));
}

describe("an outage of the store longer than the lease", () => {
  const server = new RedisServer();
  beforeAll(() => server.start());
  afterAll(() => server.dispose());

  /**
   * Two workers on one Redis store, each through a proxy of its own that can cut it off: the first
   * starts a run of `wf` (and claims it); `second()` starts the other worker. `notices` are each
   * worker's, in the order of `ids`.
   */
  async function twoWorkers(prefix: string, wf: CompiledWorkflow, leaseMs: number, ids: [string, string]) {
    const proxies = [new TcpProxy(server.port), new TcpProxy(server.port)] as const;
    const ports = await Promise.all(proxies.map((p) => p.start()));
    const [a, b] = await Promise.all(ports.map((port) => openStore(`redis://127.0.0.1:${port}/0?prefix=${prefix}:`)));
    const notices = [new NoticeLog(), new NoticeLog()] as const;
    const engines = [createEngine({ store: a!, workflows: [wf], worker: { id: ids[0], leaseMs, pollMs: 100, killGraceMs: 100, onNotice: notices[0].listen } })];
    return {
      store: a!,
      proxies,
      notices,
      run: await engines[0]!.start(wf, {}),
      second: () => engines.push(createEngine({ store: b!, workflows: [wf], worker: { id: ids[1], leaseMs, pollMs: 100, onNotice: notices[1].listen } })),
      async close() {
        for (const proxy of proxies) proxy.restore();
        await Promise.all(engines.map((e) => e.close()));
        await Promise.all([a!.close(), b!.close()]);
        await Promise.all(proxies.map((p) => p.stop()));
      },
    };
  }

  it("on Redis: the worker that reconnects first takes over none of the runs whose owner was cut off too; the owner renews and commits", async () => {
    const leaseMs = 3_000;
    let starts = 0;
    let release: () => void = () => {};
    const gate = new Promise<void>((resolve) => (release = resolve));
    const wf = workflow("outage", { state: z.object({ done: z.boolean().default(false) }) })
      .node("work", async () => {
        starts++;
        await gate;
        return { done: true };
      })
      .compile();
    const fleet = await twoWorkers("outage", wf, leaseMs, ["owner", "other"]);
    try {
      await until(() => starts === 1, 10_000, "the node to start");
      fleet.second();
      await sleep(300);
      // Both cut off; the node finishes meanwhile, its commit waiting for the store.
      for (const proxy of fleet.proxies) proxy.cut();
      await sleep(200);
      release();
      await sleep(leaseMs + 1_000);
      // The other worker reconnects first; the owner a moment later.
      fleet.proxies[1].restore();
      await until(() => fleet.notices[1].of("takeovers-held").length > 0, 10_000, "the other worker to regain the store");
      await sleep(300);
      fleet.proxies[0].restore();

      await until(async () => (await fleet.store.getRun(fleet.run.id))?.status === "succeeded", 20_000, "the run to succeed");
      expect(starts).toBe(1);
      expect(await claims(fleet.store, fleet.run.id)).toEqual([{ worker: "owner", recovered: false }]);
      const held = (runs: string) => new RegExp(`^the store answers again after \\d+\\.\\d s without an answer \\(the store or the network was down, or this process was held or stopped\\), longer than the 3 s lease: this worker renews the leases of its ${runs}, and for 3 s takes over no run whose lease ran out meanwhile`);
      expect(fleet.notices[1].of("takeovers-held")[0]?.message).toMatch(held("0 runs"));
      // The owner says it renews the lease of the run it holds.
      expect(fleet.notices[0].of("takeovers-held")[0]?.message).toMatch(held("1 run"));
    } finally {
      await fleet.close();
    }
  }, 60_000);

  it("on Redis: a run whose worker did not come back is still taken over, a lease later", async () => {
    const leaseMs = 1_000;
    let starts = 0;
    const wf = workflow("outage-dead", { state: z.object({ done: z.boolean().default(false) }) })
      .node("work", async () => {
        starts++;
        // The first worker's attempt never ends: its worker is cut off for good.
        if (starts === 1) await new Promise(() => {});
        return { done: true };
      })
      .compile();
    const fleet = await twoWorkers("outage-dead", wf, leaseMs, ["lost", "other"]);
    try {
      await until(() => starts === 1, 10_000, "the node to start");
      fleet.second();
      for (const proxy of fleet.proxies) proxy.cut();
      await sleep(leaseMs + 1_000);
      fleet.proxies[1].restore();
      const regained = Date.now();
      const runId = fleet.run.id;
      await until(() => fleet.notices[1].of("took-over").length > 0, 20_000, "the other worker to take the run over");
      expect(Date.now() - regained).toBeGreaterThanOrEqual(leaseMs - 100);
      expect(fleet.notices[1].of("took-over")).toEqual([{ level: "warn", kind: "took-over", runId, from: "lost", message: `took over run ${runId} from worker lost (lease expired): work will run again` }]);
      fleet.proxies[0].restore();
      await until(async () => (await fleet.store.getRun(runId))?.status === "succeeded", 20_000, "the run to succeed on the other worker");
      expect((await claims(fleet.store, runId)).at(-1)).toEqual({ worker: "other", recovered: true });
    } finally {
      await fleet.close();
    }
  }, 60_000);
});

describe("every worker of a SQLite store suspended for longer than the lease (a machine asleep)", () => {
  let dir = "";
  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), "pitwall-suspended-"));
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it("the worker resumed first takes over nothing of the other's; the owner renews and finishes its node once", async () => {
    const log = join(dir, "starts.log");
    writeFileSync(log, "");
    process.env.PITWALL_TEST_STARTS = log;
    const url = `sqlite:${join(dir, "store.db")}`;
    const fleet = await Fleet.start(url, 2, { leaseMs: 1_000, workflowModule: SLOW });
    const store = await openStore(url);
    try {
      const run = await createEngine({ store, worker: false }).start(slow, {});
      await waitFor(() => readFileSync(log, "utf8").includes("start"), 20_000, "the node to start");
      const ownerId = [...(await owners(store)).keys()][0]!;
      const owner = fleet.worker(ownerId);
      const other = fleet.workers.find((w) => w.id !== ownerId)!;
      for (const w of fleet.workers) w.process.kill("SIGSTOP");
      await sleep(2_500);
      other.process.kill("SIGCONT");
      await sleep(300);
      owner.process.kill("SIGCONT");
      await waitFor(async () => (await store.getRun(run.id))?.status === "succeeded", 20_000, "the run to succeed");
      expect(readFileSync(log, "utf8").trim().split("\n")).toEqual(["start"]);
      expect(await claims(store, run.id)).toEqual([{ worker: ownerId, recovered: false }]);
    } finally {
      delete process.env.PITWALL_TEST_STARTS;
      await fleet.stop();
      await store.close();
    }
  }, 60_000);
});
