import { Redis } from "ioredis";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { openStore } from "../../engine/index.js";
import { cliHarness } from "../support/cli.js";
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

  // No TLS server name is sent for an IP address (Node would warn about it on stderr).
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
      await setRoom(100 * 2 ** 20);
      const runs = await cli.run(["runs", "--json", "--store", url]);
      expect(runs.stdout).toBe("[]\n");
      expect(runs.stderr).toMatch(/^warning: the store is nearly full \(\d+\.\d MB left of \d+\.\d MB in the memory limit \(maxmemory\) of Redis at redis:\/\/127\.0\.0\.1:\d+\/0\?prefix=room:\)\n$/);
      await setRoom(256 * 1024);
      const worker = await cli.run(["worker", "--once", "--store", url]);
      expect(worker.stderr).toMatch(/^warning: the store is full \(.+\): workers cannot commit until room is made$/m);
      await raw.config("SET", "maxmemory", "0");
      expect((await cli.run(["runs", "--store", url])).stderr).toBe("no runs\n");
    } finally {
      await raw.config("SET", "maxmemory", "0");
      raw.disconnect();
    }
  });

  it("a rediss:// URL naming an IP address fails with one line too", async () => {
    const r = await cli.run(["runs", "--store", `rediss://app:${SECRET}@127.0.0.1:${server.port}/0`]);
    expect(r.code).toBe(1);
    expect(r.stderr.trimEnd().split("\n")).toEqual([expect.stringMatching(/^pitwall runs: cannot connect to Redis at rediss:\/\/app:\*\*\*@127\.0\.0\.1/)]);
  });

  // Closing does not wait for a server that has gone away, even after a subscription was followed.
  it("closing a Redis store that was followed, after its server has gone away, returns at once", async () => {
    const gone = new RedisServer();
    await gone.start();
    const store = await openStore(`${gone.url}/0?prefix=close:`);
    const stop = new AbortController();
    const following = (async () => {
      for await (const _ of store.subscribe({ after: 0, signal: stop.signal }));
    })().catch(() => undefined);
    await new Promise((resolve) => setTimeout(resolve, 300));
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
    expect([param.code, param.stderr]).toEqual([2, `pitwall runs: store URL ${server.url}/0?prefx=app:: unknown parameter "prefx" (known: prefix, retention)\n`]);
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

  it("Ctrl-C ends events --follow at once when Redis has gone away, cleanly", async () => {
    await (await openStore(`${server.url}/0?prefix=gone:`)).close();
    const follower = cli.spawn(["events", "--follow", "--store", `${server.url}/0?prefix=gone:`]);
    // Following from now: it is attached once it has read the last sequence number.
    await new Promise((resolve) => setTimeout(resolve, 1500));
    await server.stop("SIGKILL");
    const stoppedAt = Date.now();
    follower.child.kill("SIGINT");
    const result = await follower.exited;
    expect(Date.now() - stoppedAt).toBeLessThan(3_000);
    expect(result.code).toBe(0);
    expect(result.stderr).toBe("");
  });

});
