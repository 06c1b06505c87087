import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { spawnSync } from "node:child_process";
import { createServer } from "node:net";
import { Redis } from "ioredis";
import { StoreError, openStore, type NewEvent, type Store } from "../../engine/index.js";
import { newId } from "../../engine/ids.js";
import { newRun } from "../../engine/runtime/new-run.js";
import { EventTail } from "../../engine/store/redis/event-tail.js";
import { RedisStore } from "../../engine/store/redis/redis-store.js";
import { childScript } from "../support/processes.js";
import { pendingCommand } from "../support/records.js";
import { RedisServer } from "../support/redis-server.js";
import { TcpProxy } from "../support/tcp-proxy.js";

const WF = { name: "faults", version: "v-faults" };

/** Runs `test/support/children/store-probe.ts` on a URL in a process of its own. */
function probe(url: string, env: Record<string, string> = {}) {
  const result = spawnSync(process.execPath, [childScript("store-probe"), url], { encoding: "utf8", env: { ...process.env, ...env }, timeout: 30_000 });
  return { status: result.status, stdout: result.stdout.trim(), stderr: result.stderr.trim() };
}

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
    // Refused now, it may answer later (a server restarting): scripts can tell from --json.
    expect((error as StoreError).transient).toBe(true);
    expect(message).not.toContain("s3cret");
    expect(message).not.toContain("\n");
    // A process that cannot reach its store says so in one line and exits non-zero.
    expect(probe(url)).toEqual({ status: 1, stdout: "", stderr: message });
  });

  describe("over TLS", () => {
    const secure = new RedisServer({ tls: true });
    beforeAll(() => secure.start());
    afterAll(() => secure.dispose());

    it("works with rediss:// once the server's CA is trusted, and says why not before", () => {
      expect(probe(secure.url, { NODE_EXTRA_CA_CERTS: secure.caFile })).toEqual({ status: 0, stdout: "ok", stderr: "" });
      const untrusted = probe(secure.url);
      expect(untrusted.status).toBe(1);
      expect(untrusted.stderr).toMatch(new RegExp(`^cannot connect to Redis at rediss://localhost:${secure.port}: self[- ]signed certificate`));
      expect(untrusted.stderr).not.toContain("\n");
    });
  });

  it("gives up on a server that accepts connections but never answers", async () => {
    const silent = createServer(() => undefined);
    await new Promise<void>((resolve) => silent.listen(0, "127.0.0.1", resolve));
    const { port } = silent.address() as { port: number };
    const started = Date.now();
    const error = await RedisStore.open(`redis://127.0.0.1:${port}`, { connectTimeoutMs: 300 }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(StoreError);
    expect((error as Error).message).toBe(`cannot connect to Redis at redis://127.0.0.1:${port}: no answer within 0.3 s (is the server stopped or frozen, or the network dropping packets?)`);
    // It may answer later (a server resumed): scripts can tell from --json.
    expect((error as StoreError).transient).toBe(true);
    expect(Date.now() - started).toBeLessThan(2_000);
    silent.close();
  });

  it("fails a command, in one line, when the server stops answering but keeps the connection open, and goes on once it answers", async () => {
    const url = `${server.url}/0?prefix=frozen:&command_timeout=0.4`;
    const store = await RedisStore.open(url);
    try {
      server.pause();
      const error = await store.getRun("run-any").catch((e: unknown) => e);
      expect([error instanceof StoreError && error.transient, (error as Error).message]).toEqual([true, `Redis at ${url} did not answer within 0.4 s (is the server stopped or frozen, or the network dropping packets?)`]);
      server.resume();
      expect(await store.getRun("run-any")).toBeUndefined();
    } finally {
      server.resume();
      await store.close();
    }
  });

  it("reads a reply that came while this process's event loop was held past the command timeout, instead of blaming the server", async () => {
    const store = await RedisStore.open(`${server.url}/0?prefix=held:&command_timeout=0.3`);
    try {
      const answer = store.getRun("run-any").then(
        (run) => ({ run }),
        (error: Error) => ({ error: error.message }),
      );
      // Computing without awaiting (as a node may): the timeout expires before the socket is read again.
      const until = Date.now() + 1_000;
      while (Date.now() < until);
      expect(await answer).toEqual({ run: undefined });
    } finally {
      await store.close();
    }
  });

  it("closing a store whose server has gone away fails, at once, the reads still waiting for it", async () => {
    const gone = new RedisServer();
    await gone.start();
    // A command timeout far beyond the bound below: closing, not the timeout, must end the wait.
    const store = await openStore(`${gone.url}/0?prefix=gone:&command_timeout=30`);
    await gone.stop("SIGKILL");
    // Waits for the server to come back, until the command timeout.
    const waiting = store.getRun("run-any").then(
      () => "answered",
      (error: Error) => error.message,
    );
    const closedAt = Date.now();
    await store.close();
    expect(await waiting).toMatch(/closed/i);
    expect(Date.now() - closedAt).toBeLessThan(3_000);
    await gone.dispose();
  });

  it("says the store is gone, and writes nothing, once the server has lost its keys (restarted without its data, flushed)", async () => {
    const url = `${server.url}/3?prefix=emptied:`;
    const store = await RedisStore.open(url);
    const raw = new Redis(server.port, "127.0.0.1", { db: 3, lazyConnect: true });
    try {
      await raw.connect();
      const init = newRun({ id: "run-emptied", workflow: WF, state: {}, actor: "test" });
      await store.createRun(init);
      const claim = await store.claimRun({ owner: "w", leaseMs: 5_000 });
      expect(claim?.run.id).toBe("run-emptied");
      await raw.flushdb();
      const gone = `the pitwall store at ${server.url}/3?prefix=emptied: is gone (its keys were deleted: the server restarted without its data, or was flushed); nothing was written: restore it, or start over on a new store`;
      for (const write of [() => store.claimRun({ owner: "w", leaseMs: 5_000 }), () => store.commit({ id: newId("c"), runId: "run-emptied", fence: claim!.fence, events: [log("run-emptied")] }), () => store.createRun(newRun({ id: "run-new", workflow: WF, state: {}, actor: "test" }))]) {
        const error = await write().catch((e: unknown) => e);
        expect([error instanceof StoreError && error.gone, (error as Error).message]).toEqual([true, gone]);
      }
      expect(await raw.dbsize()).toBe(0);
    } finally {
      raw.disconnect();
      await store.close();
    }
  });

  it("refuses bad URLs with a clear message", async () => {
    await expect(openStore(`${server.url}/zero`)).rejects.toThrow(/database must be a number/);
    await expect(openStore(`${server.url}?retention=-1`)).rejects.toThrow(/retention must be a whole number/);
    for (const [name, value] of [["command_timeout", "0"], ["connect_timeout", "soon"], ["command_timeout", ""]]) {
      await expect(openStore(`${server.url}?${name}=${value}`)).rejects.toThrow(`store URL ${server.url}?${name}=${value}: ${name} must be a number of seconds above 0, not "${value}"`);
    }
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
      const command = pendingCommand(runId, "kill");
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
