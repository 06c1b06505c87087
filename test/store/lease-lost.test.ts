import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { Operator, createEngine, leaseRanOut, openStore, type Store } from "../../engine/index.js";
import { slowWorkflow } from "../support/durable-workflows.js";
import { until } from "../support/engine.js";
import { kill, spawnWorker, type Child } from "../support/processes.js";
import { RedisServer } from "../support/redis-server.js";

const LEASE_MS = 300;

/** Where each test's store is: a SQLite file of its own, or a prefix of its own on one redis-server. */
const BACKENDS = [
  {
    name: "SQLite",
    setup: () => {
      const dir = mkdtempSync(join(tmpdir(), "pitwall-lease-lost-"));
      return { started: Promise.resolve(), url: (test: string) => `sqlite:${join(dir, `${test}.db`)}`, dispose: async () => rmSync(dir, { recursive: true, force: true }) };
    },
  },
  {
    name: "Redis",
    setup: () => {
      const server = new RedisServer();
      const started = server.start();
      return { started, url: (test: string) => `${server.url}/0?prefix=${test}:`, dispose: () => server.dispose() };
    },
  },
];

describe.each(BACKENDS)("$name: a worker stopped past its lease (SIGSTOP), resumed after the store moved on (SIGCONT)", (backend) => {
  const where = backend.setup();
  beforeAll(() => where.started);
  afterAll(() => where.dispose());

  let store: Store | undefined;
  const children: Child[] = [];
  afterEach(async () => {
    for (const child of children.splice(0)) {
      child.process.kill("SIGCONT");
      await kill(child);
    }
    await store?.close();
    store = undefined;
  });

  /** A run of `slow` whose node runs in a worker process, stopped until its lease has run out. */
  async function stoppedPastLease(test: string) {
    const url = where.url(test);
    store = await openStore(url);
    const engine = createEngine({ store, workflows: [slowWorkflow()], worker: false });
    const stale = spawnWorker(url, "slow", LEASE_MS);
    children.push(stale);
    const { id: runId } = await engine.start("slow", {});
    await stale.line((l) => "started" in l);
    stale.process.kill("SIGSTOP");
    const s = store;
    await until(async () => leaseRanOut((await s.getRun(runId))!, Date.now()), 10_000, "the stopped worker's lease to run out");
    return { url, store: s, runId, stale };
  }

  /** Another worker process takes the run over and finishes it. */
  async function finishedElsewhere(url: string, s: Store, runId: string): Promise<string> {
    const other = spawnWorker(url, "slow", LEASE_MS, "drain");
    children.push(other);
    const otherId = (await other.line((l) => "ready" in l)).ready as string;
    expect(await other.exited, other.stderr()).toBe(0);
    expect((await s.getRun(runId))?.status).toBe("succeeded");
    return otherId;
  }

  /** What the resumed worker says of the run's end here. */
  async function resumedEnd(stale: Child): Promise<{ why: string; leaseLost?: boolean; status: string }> {
    stale.process.kill("SIGCONT");
    const line = await stale.line((l) => "end" in l);
    return line.end as { why: string; leaseLost?: boolean; status: string };
  }

  /**
   * A notice says what became of the run, that this worker's work is thrown away and, when its
   * lease timer saw the stop (it lasted longer than a lease since the timer last fired), that.
   */
  const notice = (what: string) => new RegExp(`^lease lost: ${what.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")}; this worker's attempt was discarded(\\. This process's event loop was held for \\d+\\.\\d s .*)?$`);

  it("says who took the run over and that it runs there now", async () => {
    const { store: s, runId, stale } = await stoppedPastLease("running");
    // Claimed by another worker, which holds it and has not finished it.
    await until(() => s.claimRun({ owner: "taker", leaseMs: 60_000, runId }), 10_000, "the run to be taken over");
    const end = await resumedEnd(stale);
    expect(end.leaseLost).toBe(true);
    expect(end.why).toMatch(notice(`run ${runId} was taken over by worker taker, which is running it now`));
  });

  it("says who took the run over and that it has since succeeded", async () => {
    const { url, store: s, runId, stale } = await stoppedPastLease("finished");
    const otherId = await finishedElsewhere(url, s, runId);
    const end = await resumedEnd(stale);
    expect(end.why).toMatch(notice(`run ${runId} was taken over by worker ${otherId} and has since succeeded`));
    expect((await s.getRun(runId))?.status).toBe("succeeded");
  });

  it("says who canceled the run meanwhile", async () => {
    const { store: s, runId, stale } = await stoppedPastLease("canceled");
    // Nobody holds the run: the operator's process applies the cancel itself.
    await new Operator(s, { actor: "operator:ann" }).cancel(runId, { reason: "not needed any more" });
    const end = await resumedEnd(stale);
    expect(end.why).toMatch(notice(`run ${runId} has since been canceled by operator:ann`));
    expect((await s.getRun(runId))?.status).toBe("canceled");
  });

  it("says the run has since been deleted", async () => {
    const { url, store: s, runId, stale } = await stoppedPastLease("deleted");
    await finishedElsewhere(url, s, runId);
    expect(await s.deleteRun(runId)).toEqual([runId]);
    const end = await resumedEnd(stale);
    expect(end.why).toMatch(notice(`run ${runId} has since been deleted from the store`));
  });
});
