import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Redis } from "ioredis";
import { StoreError, openStore, type CommandRecord, type NewEvent, type Store } from "../../engine/index.js";
import { newId } from "../../engine/ids.js";
import { newRun } from "../../engine/runtime/new-run.js";
import { EventTail } from "../../engine/store/redis/event-tail.js";
import { RedisServer } from "../support/redis-server.js";
import { TcpProxy } from "../support/tcp-proxy.js";

const WF = { name: "faults", version: "v-faults" };

function log(runId: string): NewEvent {
  return { runId, taskId: null, traceId: "t", spanId: null, type: "node.log", actor: "engine", payload: { node: "x", level: "info", message: "hi" }, time: Date.now() };
}

describe("Redis store: connection faults", () => {
  const server = new RedisServer({ appendonly: true, appendfsync: "always" });
  beforeAll(() => server.start());
  afterAll(() => server.dispose());

  it("says in one line which Redis it cannot reach, without the password", async () => {
    const closed = new RedisServer();
    await closed.start();
    const url = `redis://ann:s3cret@127.0.0.1:${closed.port}/0`;
    await closed.dispose();
    const error = await openStore(url).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(StoreError);
    const message = (error as Error).message;
    expect(message).toContain(`redis://ann:***@127.0.0.1:${closed.port}/0`);
    expect(message).toMatch(/ECONNREFUSED/);
    expect(message).not.toContain("s3cret");
    expect(message).not.toContain("\n");
  });

  it("refuses bad URLs with a clear message", async () => {
    await expect(openStore(`${server.url}/zero`)).rejects.toThrow(/database must be a number/);
    await expect(openStore(`${server.url}?retention=-1`)).rejects.toThrow(/retention must be a whole number/);
  });

  describe("a reply lost on the way back (the command is sent again after reconnecting)", () => {
    let proxy: TcpProxy;
    let store: Store;
    beforeAll(async () => {
      proxy = new TcpProxy(server.port);
      const port = await proxy.start();
      store = await openStore(`redis://127.0.0.1:${port}/0?prefix=lost:`);
    });
    afterAll(async () => {
      await store.close();
      await proxy.stop();
    });

    it("applies each write once: create, claim, commit, command", async () => {
      const runId = newId("run");
      proxy.loseNextReply();
      await store.createRun(newRun({ id: runId, workflow: WF, state: {}, actor: "test" }));
      proxy.loseNextReply();
      const claim = await store.claimRun({ owner: "w1", leaseMs: 60_000 });
      expect(claim).toMatchObject({ run: { id: runId }, recovered: false });
      proxy.loseNextReply();
      await store.commit({ id: newId("c"), runId, fence: claim!.fence, events: [log(runId), log(runId)] });
      const command: CommandRecord = {
        id: newId("cmd"),
        runId,
        type: "kill",
        args: {},
        actor: "operator:ann",
        reason: null,
        createdAt: Date.now(),
        status: "pending",
        result: null,
        answeredAt: null,
      };
      proxy.loseNextReply();
      await store.submitCommand(command, { ...log(runId), type: "operator.requested", payload: { commandId: command.id, command: "kill", args: {} } });
      proxy.loseNextReply();
      await store.answerCommand({ id: command.id, status: "refused", result: {}, answeredAt: Date.now() }, { ...log(runId), type: "operator.refused", payload: { commandId: command.id, command: "kill", reason: "no" } });
      expect(proxy.cuts).toBe(5);
      const types = (await store.readEvents({ runId })).map((e) => `${e.runSeq}:${e.type}`);
      expect(types).toEqual(["1:run.created", "2:run.claimed", "3:node.log", "4:node.log", "5:operator.requested", "6:operator.refused"]);
      expect((await store.getRun(runId))?.fence).toBe(claim!.fence);
      expect(await store.claimRun({ owner: "w2", leaseMs: 60_000 })).toBeUndefined();
    });
  });

  it("keeps a subscription and its writers going when Redis is killed and restarted", async () => {
    const writer = await openStore(`${server.url}?prefix=restart:`);
    const reader = await openStore(`${server.url}?prefix=restart:`);
    const runId = newId("run");
    await writer.createRun(newRun({ id: runId, workflow: WF, state: {}, actor: "test" }));
    const claim = (await writer.claimRun({ owner: "w1", leaseMs: 60_000 }))!;
    const controller = new AbortController();
    const seen: number[] = [];
    const done = (async () => {
      for await (const e of reader.subscribe({ runId, after: 0, signal: controller.signal })) {
        seen.push(e.runSeq);
        if (seen.length === 4) controller.abort();
      }
    })();
    await writer.commit({ id: newId("c"), runId, fence: claim.fence, events: [log(runId)] });
    await server.crashAndRestart(200);
    await writer.commit({ id: newId("c"), runId, fence: claim.fence, events: [log(runId)] });
    await done;
    expect(seen).toEqual([1, 2, 3, 4]);
    await Promise.all([writer.close(), reader.close()]);
  });

  it("keeps trying when the event tail cannot connect at first", async () => {
    const raw = new Redis({ port: server.port });
    let attempts = 0;
    const open = async () => {
      if (++attempts < 3) throw new Error("connect ECONNREFUSED");
      return new Redis({ port: server.port });
    };
    const tail = new EventTail(open, "tail-test:events", async () => Number((await raw.get("tail-test:seq")) ?? 0));
    const woken = tail.waitPast(0);
    await raw.multi().set("tail-test:seq", 1).xadd("tail-test:events", "1-0", "e", "{}").exec();
    await woken;
    expect(attempts).toBe(3);
    await tail.close();
    raw.disconnect();
  });
});
