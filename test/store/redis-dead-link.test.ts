import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { z } from "zod";
import { Operator, StoreError, createEngine, openStore, workflow, type EventRecord } from "../../engine/index.js";
import { sleep, until } from "../support/engine.js";
import { NoticeLog } from "../support/notices.js";
import { RedisServer } from "../support/redis-server.js";
import { TcpProxy } from "../support/tcp-proxy.js";

const wf = workflow("dead-link", { state: z.object({ done: z.boolean().default(false) }) })
  .node("work", async () => ({ done: true }))
  .compile();

describe("Redis store: connections the network silently drops (black-holed, never reset)", () => {
  const server = new RedisServer();
  beforeAll(() => server.start());
  afterAll(() => server.dispose());

  it("a worker and a live subscription behind them go on once the network heals, without being restarted", async () => {
    const proxy = new TcpProxy(server.port);
    const port = await proxy.start();
    const url = `redis://127.0.0.1:${port}/0?prefix=hole:&command_timeout=0.5`;
    const behind = await openStore(url);
    const direct = await openStore(`${server.url}/0?prefix=hole:`);
    const notices = new NoticeLog();
    const worker = createEngine({ store: behind, workflows: [wf], worker: { id: "behind-the-hole", pollMs: 100, onNotice: notices.listen } });
    const starter = createEngine({ store: direct, workflows: [wf], worker: false });
    const heard: EventRecord[] = [];
    const stop = new AbortController();
    const following = (async () => {
      for await (const event of behind.subscribe({ signal: stop.signal })) heard.push(event);
    })();
    const ran = async (runId: string) => (await direct.getRun(runId))?.status === "succeeded" && heard.some((e) => e.runId === runId && e.type === "run.succeeded");
    try {
      const before = await starter.start(wf, {});
      await until(() => ran(before.id), 10_000, "the worker to run the first run, and the subscription to hear it");
      // Idle again: the subscription waits on the event tail's blocking read.
      await sleep(500);

      proxy.blackHole();
      // Said as a silence, also while the client reconnects through the black hole.
      const silence = `Redis at ${url} did not answer within 0.5 s (is the server stopped or frozen, or the network dropping packets?)`;
      for (let i = 0; i < 2; i++) {
        const error = await behind.getRun("run-any").catch((e: unknown) => e);
        expect([error instanceof StoreError && error.transient, (error as Error).message]).toEqual([true, silence]);
      }
      proxy.heal();

      const after = await starter.start(wf, {});
      // Generous: the bounds are the command timeout and the tail's blocking read (5 s) past it.
      await until(() => ran(after.id), 20_000, "the worker to run a run started after the heal, and the subscription to hear it");
      expect(await behind.getRun(after.id)).toMatchObject({ status: "succeeded" });
      expect(notices.of("store-failing").some((n) => n.message.includes(silence))).toBe(true);
      expect(notices.of("store-recovered").length).toBeGreaterThan(0);
      // The claims it sent into the black hole and gave up on, sent again on the new connection,
      // left no run claimed by nobody who knows (to be taken over a lease later).
      expect(notices.of("took-over")).toEqual([]);
    } finally {
      notices.end();
      stop.abort();
      await following.catch(() => undefined);
      await worker.close();
      await Promise.all([behind.close(), direct.close()]);
      await proxy.stop();
    }
  });

  /**
   * A store behind a proxy that black-holes the replies (requests still reach the server) while
   * `owner` claims a run (60 s lease unless given): the claim fails, and is applied all the same.
   */
  async function lostClaim(prefix: string, leaseMs = 60_000) {
    const proxy = new TcpProxy(server.port);
    const port = await proxy.start();
    const behind = await openStore(`redis://127.0.0.1:${port}/0?prefix=${prefix}:&command_timeout=0.3`);
    const direct = await openStore(`${server.url}/0?prefix=${prefix}:`);
    const { id: runId } = await createEngine({ store: direct, workflows: [wf], worker: false }).start(wf, {});
    proxy.blackHole({ requestsPass: true });
    await expect(behind.claimRun({ owner: "w1", leaseMs })).rejects.toThrow(/did not answer within 0\.3 s/);
    // The server applied it: the run is w1's, and w1 does not know.
    await until(async () => (await direct.getRun(runId))?.owner === "w1", 5_000, "the claim to be applied");
    return {
      proxy,
      behind,
      direct,
      runId,
      /** w1's next claim that the store answers, once the network has healed. */
      nextClaim: async () => {
        proxy.heal();
        const answered = await until(() => behind.claimRun({ owner: "w1", leaseMs: 60_000 }).then((claim) => ({ claim }), () => undefined), 10_000, "w1's next claim to be answered");
        return answered.claim;
      },
      async close() {
        await Promise.all([behind.close(), direct.close()]);
        await proxy.stop();
      },
    };
  }

  it("hands the run of a claim that failed but was applied (its reply lost) to the owner's next claim", async () => {
    const lost = await lostClaim("lost-claim");
    try {
      const { fence } = (await lost.direct.getRun(lost.runId))!;
      const claim = await lost.nextClaim();
      expect([claim?.run.id, claim?.fence]).toEqual([lost.runId, fence]);
    } finally {
      await lost.close();
    }
  });

  it("does not hand it over once it has moved on meanwhile (canceled after its lease ran out)", async () => {
    const lost = await lostClaim("lost-cancel", 300);
    try {
      await until(async () => ((await lost.direct.getRun(lost.runId))?.leaseUntil ?? Infinity) < Date.now(), 5_000, "the lease to run out");
      await new Operator(lost.direct, { actor: "operator:ann" }).cancel(lost.runId, { reason: "not needed" });
      expect(await lost.nextClaim()).toBeUndefined();
      expect((await lost.direct.getRun(lost.runId))?.status).toBe("canceled");
    } finally {
      await lost.close();
    }
  });
});
