import { renameSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { openStore } from "../../engine/index.js";
import { lockHolder } from "../support/lock-holder.js";
import { kill, spawnScript } from "../support/processes.js";
import { storeFiles } from "../support/sqlite-files.js";

const STORES = 100;
const EVERY_MS = 40;

const { dir, fresh } = storeFiles("pitwall-create-race-");

/**
 * The first processes to open a new store race to create it: one switches the empty file to WAL
 * and commits the tables with pitwall's identity while the others read that identity. A reader
 * whose reads straddled that commit saw tables without the identity ("another application's
 * database"); a writer that tried to switch the file to WAL while another process was writing to
 * it was told at once that it was locked. Each store is a window of a few milliseconds, so every
 * process opens a hundred new stores on one schedule; for every other one, a process has begun
 * writing to the new file just before (as one switching it to WAL does).
 */
describe("SQLite: processes creating a new store at once", { timeout: 120_000 }, () => {
  it("all find a pitwall store: none calls it another application's, none is refused as locked", async () => {
    const open = (mode: "write" | "read" | "hold") => spawnScript("open-new-stores", [dir, String(STORES), String(EVERY_MS), mode]);
    const openers = [open("write"), open("write"), open("write"), open("read"), open("read"), open("hold")];
    try {
      await Promise.all(openers.map((child) => child.line((l) => l.ready === true)));
      // Written whole (renamed into place), for the openers to begin at the same moment.
      writeFileSync(join(dir, "start-at.tmp"), String(Date.now() + 200));
      renameSync(join(dir, "start-at.tmp"), join(dir, "start-at"));
      const results = await Promise.all(openers.map((child) => child.line((l) => Array.isArray(l.failures), 100_000)));
      expect(results).toEqual(openers.map(() => ({ opened: STORES, failures: [] })));
    } finally {
      await Promise.all(openers.map(kill));
    }
  });
});

/**
 * While a process creating a store switches the new file to WAL it holds a write lock on it, and
 * SQLite refuses another process's switch at once, without its busy timeout: opening asks again
 * until the busy timeout has passed. Given no time to wait, it does not claim to have waited.
 */
describe("SQLite: creating a store in a new file another process is writing to", () => {
  it("is refused after the busy timeout, saying so; with a timeout of 0, refused at once, saying that", async () => {
    const file = fresh("held");
    const holder = await lockHolder(file, "new");
    const failure = (busyTimeoutMs: number) => openStore(`sqlite:${file}`, { busyTimeoutMs }).then(() => undefined, (e: unknown) => e as Error);
    try {
      const started = Date.now();
      expect((await failure(300))?.message).toBe(`store ${file} is locked by another process (still busy after 300 ms)`);
      expect(Date.now() - started).toBeGreaterThanOrEqual(300);
      expect((await failure(0))?.message).toBe(`store ${file} is locked by another process (refused at once, without waiting)`);
    } finally {
      await kill(holder);
    }
    expect(statSync(file).size).toBe(0);
  });
});
