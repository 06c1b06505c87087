import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { z } from "zod";
import { StoreError, createEngine, openStore, workflow, type EventRecord } from "../../engine/index.js";
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
      await sleep(300);

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
    } finally {
      notices.end();
      stop.abort();
      await following.catch(() => undefined);
      await worker.close();
      await Promise.all([behind.close(), direct.close()]);
      await proxy.stop();
    }
  });
});
