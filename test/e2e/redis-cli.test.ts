import { createServer, type AddressInfo } from "node:net";
import { Redis } from "ioredis";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { openStore, type InterruptRecord, type RunRecord } from "../../engine/index.js";
import { newRun } from "../../engine/runtime/new-run.js";
import { actionsOf, cliHarness, workflowOf } from "../support/cli.js";
import { addReadmeUser, readmeAcl } from "../support/redis-acl.js";
import { until } from "../support/engine.js";
import { RedisServer } from "../support/redis-server.js";

const SECRET = "hunter2-do-not-print";

describe("pitwall against Redis: unreachable, or gone while a command runs", () => {
  const cli = cliHarness();
  const server = new RedisServer();
  beforeAll(() => server.start());
  afterAll(() => server.dispose());

  it("an unreachable Redis is one line naming the URL without its password, exit 1", async () => {
    const closed = new RedisServer();
    await closed.start();
    const port = closed.port;
    await closed.dispose();
    const url = `redis://app:${SECRET}@127.0.0.1:${port}/0`;
    const results = await Promise.all([cli.run(["runs", "--store", url]), cli.run(["show", "run-x", "--store", url, "--debug"])]);
    for (const r of results) {
      expect(r.code).toBe(1);
      expect(r.stderr).not.toContain(SECRET);
    }
    expect(results[0]!.stderr).toBe(`pitwall runs: cannot connect to Redis at redis://app:***@127.0.0.1:${port}/0: connect ECONNREFUSED 127.0.0.1:${port}\n`);
  });

  it("backup refuses a Redis store on one line, without its password, exit 2", async () => {
    const url = server.url.replace("redis://", `redis://default:${SECRET}@`);
    const r = await cli.run(["backup", "copy.db", "--store", `${url}/0?prefix=backup:`]);
    expect(r.code, r.stderr).toBe(2);
    expect(r.stderr).toMatch(/^pitwall backup: backup copies SQLite stores, and redis:\/\/default:\*\*\*@127\.0\.0\.1:\d+\/0\S* is not one: back up Redis with its own persistence \(BGSAVE, or the append-only file\)\n$/);
    expect(r.stderr).not.toContain(SECRET);
  });

  it("--durability os (or PITWALL_DURABILITY) reaches the store: a Redis without an append-only file refuses it", async () => {
    const [flag, env] = await Promise.all([
      cli.run(["worker", "--once", "--durability", "os", "--store", `${server.url}/0?prefix=durable:`]),
      cli.run(["worker", "--once", "--store", `${server.url}/0?prefix=durable:`], { PITWALL_DURABILITY: "os" }),
    ]);
    for (const result of [flag, env]) {
      expect([result.code, result.stderr.trim().split("\n").at(-1)]).toEqual([1, `pitwall worker: Redis at ${server.url}/0?prefix=durable: has no append-only file (appendonly no): durability "os" needs appendonly yes`]);
    }
  });

  it("runs and worker warn, on stderr, of a store that is full or nearly so", async () => {
    const raw = new Redis({ port: server.port, lazyConnect: true });
    await raw.connect();
    const url = `${server.url}/0?prefix=room:`;
    await (await openStore(url)).close();
    try {
      const setRoom = async (headroom: number) => {
        const used = Number(/^used_memory:(\d+)/m.exec(await raw.info("memory"))![1]);
        await raw.config("SET", "maxmemory", String(used + headroom));
      };
      // Half a megabyte left of a few is nearly full, not full: commits still go through.
      await setRoom(512 * 1024);
      const runs = await cli.run(["runs", "--json", "--store", url]);
      expect(runs.stdout).toBe("[]\n");
      expect(runs.stderr).toMatch(
        /^warning: the store is nearly full \(\d+\.\d kB left of \d+\.\d MB in the memory limit \(maxmemory\) of Redis at redis:\/\/127\.0\.0\.1:\d+\/0\?prefix=room:\): at the limit, commits will be refused\n$/,
      );
      await setRoom(-64 * 1024);
      const worker = await cli.run(["worker", "--once", "--store", url]);
      expect(worker.stderr).toMatch(/^\S+Z WARN  the store is full \(0 B left of .+\): workers cannot commit until room is made$/m);
      await raw.config("SET", "maxmemory", "0");
      expect((await cli.run(["runs", "--store", url])).stderr).toBe("no runs\n");
    } finally {
      await raw.config("SET", "maxmemory", "0");
      raw.disconnect();
    }
  });

  it("a Redis that stopped answering (SIGSTOP) is one line saying so, exit 1, before the server is resumed", async () => {
    const frozen = new RedisServer();
    await frozen.start();
    const url = `${frozen.url}/0`;
    await (await openStore(url)).close();
    frozen.pause();
    try {
      const results = Promise.all([cli.run(["runs", "--store", url]), cli.run(["show", "run-x", "--json", "--store", url])]);
      // Generous: the bound is the connect timeout (3 s); the server stays stopped until they end, or this.
      const ended = await Promise.race([results, new Promise<undefined>((resolve) => setTimeout(() => resolve(undefined), 20_000))]);
      expect(ended, "both commands to end while the server is stopped").toBeDefined();
      const [runs, show] = ended!;
      const silence = `cannot connect to Redis at ${url}: no answer within 3 s (is the server stopped or frozen, or the network dropping packets?)`;
      expect([runs.code, runs.stderr]).toEqual([1, `pitwall runs: ${silence}\n`]);
      // It may answer later: scripts can tell (and try again).
      expect([show.code, JSON.parse(show.stderr)]).toEqual([1, { error: expect.objectContaining({ message: silence, transient: true }) }]);
    } finally {
      frozen.resume();
      await frozen.dispose();
    }
  });

  // No TLS server name is sent for an IP address (Node would warn about it on stderr). The
  // server's certificate is signed by a CA the URL does not name: the handshake fails at once.
  it("a rediss:// URL naming an IP address fails with one line too", async () => {
    const tls = new RedisServer({ tls: true });
    await tls.start();
    try {
      const r = await cli.run(["runs", "--store", `rediss://app:${SECRET}@127.0.0.1:${tls.port}/0`]);
      expect(r.code).toBe(1);
      expect(r.stderr.trimEnd().split("\n")).toEqual([expect.stringMatching(/^pitwall runs: cannot connect to Redis at rediss:\/\/app:\*\*\*@127\.0\.0\.1:\d+\/0: self[- ]signed certificate in certificate chain: name the CA/)]);
    } finally {
      await tls.dispose();
    }
  });

  // Closing does not wait for a server that has gone away, even after a subscription was followed.
  it("closing a Redis store that was followed, after its server has gone away, returns at once", async () => {
    const gone = new RedisServer();
    await gone.start();
    const store = await openStore(`${gone.url}/0?prefix=close:`);
    const stop = new AbortController();
    let seen = 0;
    const following = (async () => {
      for await (const _ of store.subscribe({ after: 0, signal: stop.signal })) seen++;
    })().catch(() => undefined);
    // Followed: it has handed on the event of a run created while it ran.
    await store.createRun(newRun({ id: "run-followed", workflow: { name: "wf", version: "v1" }, state: {}, actor: "test" }));
    await until(() => seen > 0, 15_000, "the subscription handing on the run's event");
    await gone.dispose();
    stop.abort();
    await following;
    const closed = await Promise.race([store.close().then(() => true), new Promise((resolve) => setTimeout(() => resolve(false), 3000))]);
    expect(closed).toBe(true);
  });

  it("refuses a database the server lacks, an unknown URL parameter and a store that is not there, instead of using another", async () => {
    const [db, param, missing] = await Promise.all([
      cli.run(["worker", "--once", "--store", `${server.url}/99`]),
      cli.run(["runs", "--store", `${server.url}/0?prefx=app:`]),
      cli.run(["runs", "--store", `${server.url}/0?prefix=typo:`]),
    ]);
    expect([db.code, db.stderr]).toEqual([1, expect.stringMatching(new RegExp(`^pitwall worker: Redis at ${server.url}/99 has no database 99 \\(.*out of range.*\\)\n$`))]);
    expect([param.code, param.stderr]).toEqual([2, `pitwall runs: store URL ${server.url}/0?prefx=app: unknown parameter "prefx" (known: prefix, retention, connect_timeout, command_timeout, tls_ca, tls_cert, tls_key)\n`]);
    expect([missing.code, missing.stderr]).toEqual([
      1,
      `pitwall runs: there is no pitwall store under prefix "typo:" at ${server.url}/0?prefix=typo: (a mistyped --store, prefix or database?); nothing was written\n`,
    ]);
    const raw = new Redis({ port: server.port, lazyConnect: true });
    await raw.connect();
    try {
      expect(await raw.keys("typo:*")).toEqual([]);
    } finally {
      raw.disconnect();
    }
  });

  it("masks a password that holds an @ whole", async () => {
    const r = await cli.run(["runs", "--store", `redis://app:top@secret%2342@127.0.0.1:1/0`]);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain("redis://app:***@127.0.0.1:1/0");
    expect(r.stderr).not.toContain("secret");
  });

  it("refuses a URL parameter given twice instead of using one of them", async () => {
    const url = `${server.url}/0?prefix=a:&retention=5&prefix=b:`;
    const r = await cli.run(["runs", "--store", url]);
    expect([r.code, r.stderr]).toEqual([2, `pitwall runs: store URL ${url} "prefix" is given more than once: give each parameter once\n`]);
  });

  it("on a Redis out of memory (noeviction), start says so in one line, transient, without Redis's script internals or a doubled colon", async () => {
    const raw = await adminOf(server);
    const url = `${server.url}/3?prefix=fleet:`;
    await (await openStore(url)).close();
    try {
      await headroom(raw, -64 * 1024);
      const [text, json] = await Promise.all([
        cli.run(["start", workflowOf("travel-planner"), "--input", '{"destination":"Porto","nights":3}', "--store", url]),
        cli.run(["start", workflowOf("travel-planner"), "--input", '{"destination":"Porto","nights":3}', "--store", url, "--json"]),
      ]);
      const message = new RegExp(`^Redis at ${escape(url)} is out of memory \\(maxmemory \\d+\\.\\d MB, policy noeviction\\): delete old runs \\(pitwall prune\\) or raise maxmemory$`);
      expect(text.code).toBe(1);
      expect(text.stderr.trimEnd().split("\n")).toEqual([expect.stringMatching(new RegExp(`^pitwall start: ${message.source.slice(1)}`))]);
      expect(JSON.parse(json.stderr)).toEqual({ error: { command: "start", code: "STORE", message: expect.stringMatching(message), exitCode: 1, transient: true } });
    } finally {
      await raw.config("SET", "maxmemory", "0");
      raw.disconnect();
    }
  });

  it("refuses to write to a Redis that evicts keys at its limit (allkeys-*), naming the policy and the fix; readers warn and read", async () => {
    const raw = await adminOf(server);
    const url = `${server.url}/0?prefix=evict:`;
    await (await openStore(url)).close();
    try {
      await raw.config("SET", "maxmemory-policy", "allkeys-lru");
      const limit = await headroom(raw, 100 * 2 ** 20);
      const policy = `maxmemory-policy allkeys-lru, maxmemory ${(limit / 2 ** 20).toFixed(1)} MB`;
      const [worker, start, runs] = await Promise.all([
        cli.run(["worker", "--once", "--store", url]),
        cli.run(["start", workflowOf("travel-planner"), "--input", '{"destination":"Porto","nights":3}', "--store", url]),
        cli.run(["runs", "--store", url]),
      ]);
      const refusal = `Redis at ${url} deletes keys when it is full (${policy}), which would lose runs' records silently: set maxmemory-policy noeviction; pitwall writes nothing to it until then`;
      expect([worker.code, worker.stderr]).toEqual([1, `pitwall worker: ${refusal}\n`]);
      expect([start.code, start.stderr]).toEqual([1, `pitwall start: ${refusal}\n`]);
      expect([runs.code, runs.stderr]).toEqual([0, `warning: Redis at ${url} deletes keys when it is full (${policy}): runs' records may be missing; set maxmemory-policy noeviction\nno runs\n`]);
    } finally {
      await raw.config("SET", "maxmemory-policy", "noeviction");
      await raw.config("SET", "maxmemory", "0");
      raw.disconnect();
    }
  });

  it("works as a user with only the README's permissions; a user short of one is told which grant, in one line, without ioredis's words", async () => {
    await addReadmeUser(server.port, "app", SECRET, "acl:*");
    const url = `redis://app:${SECRET}@127.0.0.1:${server.port}/0?prefix=acl:`;
    const { runId } = await cli.json<{ runId: string }>(["start", workflowOf("travel-planner"), "--input", '{"destination":"Porto","nights":3}', "--store", url]);
    const worker = ["worker", "--once", "--actions", actionsOf("travel-planner"), "--store", url];
    expect((await cli.run(worker)).code).toBe(0);
    const [ask] = await cli.json<InterruptRecord[]>(["interrupts", "--run", runId, "--store", url]);
    expect((await cli.run(["resolve", ask!.id, "--approve", "--store", url])).code).toBe(0);
    expect((await cli.run(worker)).code).toBe(0);
    expect((await cli.json<RunRecord>(["show", runId, "--store", url])).status).toBe("succeeded");
    expect((await cli.json<{ runs: string[] }>(["prune", "--ended-before", "0m", "--store", url])).runs).toEqual([runId]);

    const raw = await adminOf(server);
    try {
      await raw.call("ACL", "SETUSER", "noinfo", ...readmeAcl("noinfo", SECRET, "acl:*").slice(1), "-info");
    } finally {
      raw.disconnect();
    }
    const at = (user: string, prefix: string) => `redis://${user}:***@127.0.0.1:${server.port}/0?prefix=${prefix}`;
    const [noInfo, otherKeys] = await Promise.all([
      cli.run(["runs", "--store", `redis://noinfo:${SECRET}@127.0.0.1:${server.port}/0?prefix=acl:`]),
      cli.run(["start", workflowOf("travel-planner"), "--store", url.replace("prefix=acl:", "prefix=other:")]),
    ]);
    expect([noInfo.code, noInfo.stderr]).toEqual([1, `pitwall runs: Redis user "noinfo" at ${at("noinfo", "acl:")} lacks permission for INFO: grant +info (see README: Redis permissions)\n`]);
    expect([otherKeys.code, otherKeys.stderr]).toEqual([1, `pitwall start: Redis user "app" at ${at("app", "other:")} may not use the keys under "other:": grant ~other:* (see README: Redis permissions)\n`]);
  });

  it("says once, in its own words, that the URL gives a password the server does not ask for", async () => {
    const r = await cli.run(["runs", "--store", `redis://:${SECRET}@127.0.0.1:${server.port}/0?prefix=acl:`]);
    expect([r.code, r.stderr]).toEqual([
      0,
      `warning: Redis at redis://***@127.0.0.1:${server.port}/0?prefix=acl: asks for no password, so the one in the URL is ignored: remove it, or give the server one (requirepass, or ACL SETUSER)\nno runs\n`,
    ]);
  });

  it("Ctrl-C while the store is still being opened (a Redis that does not answer) ends events --follow and worker at once, exit 130", async () => {
    let connections = 0;
    const silent = createServer(() => connections++);
    await new Promise<void>((resolve) => silent.listen(0, "127.0.0.1", resolve));
    try {
      // A connect timeout far beyond the bound below: Ctrl-C, not the timeout, must end them.
      const url = `redis://127.0.0.1:${(silent.address() as AddressInfo).port}/0?connect_timeout=30`;
      const commands = [cli.spawn(["events", "--follow", "--store", url]), cli.spawn(["worker", "--store", url])];
      // Both are connecting (they would wait 30 s, the connect timeout, for an answer).
      await until(() => connections === commands.length, 15_000, "both commands connecting");
      const interruptedAt = Date.now();
      for (const command of commands) command.child.kill("SIGINT");
      const results = await Promise.all(commands.map((command) => command.exited));
      expect(Date.now() - interruptedAt).toBeLessThan(2_500);
      expect(results.map((r) => [r.code, r.stderr])).toEqual([
        [130, ""],
        [130, ""],
      ]);
    } finally {
      silent.close();
    }
  });

  // Last: it kills the file's server.
  it("Ctrl-C ends events --follow at once when Redis has gone away, cleanly", async () => {
    // A command timeout far beyond the bound below: Ctrl-C, not the timeout, must end it.
    const url = `${server.url}/0?prefix=gone:&command_timeout=30`;
    await (await openStore(url)).close();
    const follower = cli.spawn(["events", "--follow", "--after", "0", "--store", url]);
    // It is attached once it prints the event of a run created after it started.
    const { runId } = await cli.json<{ runId: string }>(["start", workflowOf("travel-planner"), "--input", '{"destination":"Porto","nights":3}', "--store", url]);
    await follower.waitForLine((line) => line.includes(runId) && line.includes("run.created"));
    await server.stop("SIGKILL");
    const stoppedAt = Date.now();
    follower.child.kill("SIGINT");
    const result = await follower.exited;
    // At once: not after a read waiting for the server (30 s), nor a timer left by its connection (2 s).
    expect(Date.now() - stoppedAt).toBeLessThan(2_000);
    expect(result.code).toBe(0);
    expect(result.stderr).toBe("");
  });

});

/** A connection to the server as its default user, to change its settings. */
async function adminOf(server: RedisServer): Promise<Redis> {
  const raw = new Redis({ port: server.port, lazyConnect: true });
  await raw.connect();
  return raw;
}

/** Sets maxmemory `bytes` above what the server uses now (below it when negative); returns the limit. */
async function headroom(raw: Redis, bytes: number): Promise<number> {
  const limit = Number(/^used_memory:(\d+)/m.exec(await raw.info("memory"))![1]) + bytes;
  await raw.config("SET", "maxmemory", String(limit));
  return limit;
}

function escape(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
}
