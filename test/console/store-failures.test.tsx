import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Redis } from "ioredis";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { SqliteStore, type RunRecord } from "../../engine/index.js";
import { RedisStore } from "../../engine/store/redis/redis-store.js";
import { until } from "../support/engine.js";
import { RedisServer } from "../support/redis-server.js";
import { fixtureOn, settle, type Fixture } from "./fixtures.js";
import { closeAll, openConsole, type ConsoleHarness } from "./harness.js";

let fx: { close(): Promise<unknown> } | undefined;
let ui: ConsoleHarness | undefined;
afterEach(async () => ([ui, fx] = await closeAll(ui, fx)));

/** Two paused trips on the fixture's store. */
async function twoPausedTrips(f: Fixture<RedisStore | SqliteStore>): Promise<RunRecord[]> {
  return [await settle(f.engine, "travel-planner", { city: "Oslo" }), await settle(f.engine, "travel-planner", { city: "Rome" })];
}

/** Two paused trips, and the console on the interrupt queue. */
async function queueOfTwo(f: Fixture<RedisStore | SqliteStore>): Promise<ConsoleHarness> {
  await twoPausedTrips(f);
  const opened = await openConsole({ store: f.store });
  await opened.waitFor("⚑ 2 pending");
  await opened.press("i");
  await opened.waitFor("2 pending, oldest first");
  return opened;
}

/** The runs list once read (its title shows before the first read is done): the task-queue run listed. */
const listed = /Runs 1\b[\s\S]*task-queue/;

/** The footer's rows under the row of keys (which ends with `q quit`), as one text: a message wrapped over rows reads whole. */
const footer = (frame: string) => frame.slice(frame.lastIndexOf("q quit") + "q quit".length).replace(/\s*\n\s*/g, " ");

describe("the console while Redis is down", () => {
  const server = new RedisServer();
  let prefix = 0;
  beforeAll(() => server.start());
  afterAll(() => server.dispose());
  afterEach(async () => {
    // The console and its worker first: a worker would find the restarted server empty, and stop for good.
    [ui, fx] = await closeAll(ui, fx);
    // The next test finds the server up again.
    await server.stop("SIGKILL");
    await server.start();
  });
  const open = async () => {
    const f = fixtureOn(await RedisStore.open(server.url, { prefix: `down${prefix++}:`, commandTimeoutMs: 1_500 }));
    fx = f;
    return f;
  };
  /** The fixture's worker says, as the console does, that the store cannot be reached, naming it. */
  const workerSaysDown = (f: ReturnType<typeof fixtureOn>) =>
    until(() => f.notices.of("store-failing").some((n) => n.message.startsWith(`claiming failed: Redis at ${server.url} cannot be reached: the connection is down`)), 10_000, "the worker to say Redis cannot be reached");

  it("says in the footer that an approval failed, naming the store, and goes on (the process does not die)", async () => {
    const f = await open();
    ui = await queueOfTwo(f);
    await ui.press("enter");
    await ui.waitFor("Interrupt 1 of 2");
    await server.stop("SIGKILL");
    await ui.press("a");
    const frame = await ui.waitFor(/approve failed: Redis at \S+ (cannot be reached|did not answer)/);
    expect(frame).toContain("Book this trip?"); // still the panel: nothing was sent
    // The console still takes keys.
    await ui.press("esc");
    await ui.waitFor("2 pending, oldest first");
    await workerSaysDown(f);
  });

  it("counts a bulk approval that met a dead connection as failed on the store, not as answered meanwhile, and sends no more", async () => {
    const f = await open();
    ui = await queueOfTwo(f);
    await ui.press("*");
    await ui.waitFor("2 marked");
    await server.stop("SIGKILL");
    await ui.press("a");
    await ui.waitFor("Approve 2 interrupts?");
    await ui.press("tab", "enter");
    const frame = await ui.waitFor((f) => footer(f).includes("✗ approved 0 of 2; the store failed on int-"));
    expect(footer(frame)).toMatch(/✗ approved 0 of 2; the store failed on int-\S+, which may not have been approved: Redis at \S+ (cannot be reached|did not answer).*; 1 not sent/);
    expect(frame).not.toContain("answered meanwhile");
    await workerSaysDown(f);
  });

  it("says in the footer that a frozen store does not answer, naming it, and clears that when it answers again", async () => {
    const f = await open();
    await settle(f.engine, "task-queue");
    ui = await openConsole({ store: f.store, heartbeatMs: 200, answerMs: 100 });
    await ui.waitFor(listed);
    server.pause();
    try {
      await ui.waitFor((f) => footer(f).includes(`⚠ store not answering: no answer from ${server.url} within 0.1 s`));
    } finally {
      server.resume();
    }
    await ui.waitFor((f) => !footer(f).includes("⚠"));
  });

  it("with the default bounds, says a stopped server (SIGSTOP) does not answer, naming it, keeps the list, and goes live again once it answers", async () => {
    const f = fixtureOn(await RedisStore.open(server.url, { prefix: `down${prefix++}:` }));
    fx = f;
    await settle(f.engine, "task-queue");
    ui = await openConsole({ store: f.store });
    await ui.waitFor(listed);
    const silence = `Redis at ${server.url} did not answer within 3 s (is the server stopped or frozen, or the network dropping packets?)`;
    server.pause();
    try {
      // Generous: the bounds are a question every 2 s and the store's 3 s command timeout.
      const frame = await ui.waitFor((f) => footer(f).includes(`⚠ store not answering: ${silence}; what is shown may be out of date`), 20_000);
      expect(frame).toMatch(listed);
      // The worker says the same of the store, in the same words.
      await until(() => f.notices.of("store-failing").some((n) => n.message.includes(silence)), 20_000, "the worker to say Redis does not answer");
    } finally {
      server.resume();
    }
    await ui.waitFor((f) => !footer(f).includes("⚠"), 20_000);
    await settle(f.engine, "task-queue");
    await ui.waitFor("Runs 2", 20_000);
  });

  it("names the refused connection in the footer once the store's answer fails", async () => {
    const f = await open();
    await settle(f.engine, "task-queue");
    ui = await openConsole({ store: f.store, heartbeatMs: 200, answerMs: 100 });
    await ui.waitFor(listed);
    await server.stop("SIGKILL");
    // Whether "no answer within 0.1 s" shows first depends on when the next question is asked.
    await ui.waitFor((f) => footer(f).includes(`⚠ store not answering: Redis at ${server.url} cannot be reached: the connection is down`));
    await workerSaysDown(f);
  });

  it("says the store is gone after Redis lost its data (flushed), as workers do, and drops the interrupts it no longer holds", async () => {
    const f = await open();
    await twoPausedTrips(f);
    ui = await openConsole({ store: f.store, heartbeatMs: 200 });
    await ui.waitFor("⚑ 2 pending");
    const admin = new Redis(server.port, "127.0.0.1");
    try {
      await admin.flushall();
    } finally {
      admin.disconnect();
    }
    await ui.waitFor((f) => footer(f).includes(`⚠ the pitwall store at ${server.url} is gone (its keys or file were deleted`));
    // What it showed is read again: the runs and interrupts the store no longer holds are dropped.
    await ui.waitFor((f) => f.includes("Runs 0") && !f.includes("pending"));
    await ui.press("i");
    await ui.waitFor("nothing is waiting for an operator");
    // Its worker, told the same, stopped for good.
    await until(() => f.notices.of("store-gone").length > 0, 10_000, "the worker to say the store is gone");
    expect(f.notices.of("store-gone")).toEqual([{ level: "error", kind: "store-gone", message: expect.stringContaining(`stopped: the pitwall store at ${server.url} is gone (its keys were deleted`) }]);
  });
});

describe("the console on a SQLite store deleted under it", () => {
  let dir: string;
  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), "pitwall-deleted-"));
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it("shows an action's failure and the store's problem both, each whole (wrapped), not one in place of the other", async () => {
    const file = join(dir, "gone.db");
    const f = fixtureOn(new SqliteStore(file));
    await twoPausedTrips(f);
    await f.close();
    // The console in a process of its own: its own connection to the file.
    const store = new SqliteStore(file);
    fx = store;
    ui = await openConsole({ store, heartbeatMs: 100 });
    await ui.waitFor("⚑ 2 pending");
    await ui.press("i");
    await ui.waitFor("2 pending, oldest first");
    await ui.press("enter");
    await ui.waitFor("Interrupt 1 of 2");
    rmSync(file);
    await ui.waitFor("⚠ store gone: store");
    await ui.press("a");
    const frame = await ui.waitFor(/✗ approve int-\S+ failed: store/);
    const text = footer(frame);
    // The whole of both messages, wrapped over rows: nothing cut at the screen's edge.
    expect(text).toMatch(/✗ approve int-\S+ failed: store \S+gone\.db was deleted while this process had it open: what it reads and writes is no longer that store; restart this process/);
    expect(text).toMatch(/⚠ store gone: store \S+gone\.db was deleted while this process had it open: what it reads and writes is no longer that store; restart this process/);
    expect(ui.lines().length).toBeLessThanOrEqual(23);
  });
});
