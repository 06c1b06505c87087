// Opens new stores on a schedule, in a process of its own, so that several of them open each store
// at the same moment:
//   node open-new-stores.js <folder> <count> <every ms> write|read|hold
// Prints {"ready":true}, then waits for <folder>/start-at to hold the time (epoch ms) to begin at.
// Store i is <folder>/store-<i>.db, taken up at that time + i × every:
//   write: opens it to write (creating it);
//   read: opens it read-only over and over until it finds the store another process creates;
//   hold: every other store, creates the empty file just before and begins a write transaction
//         in it for a few ms, as a process switching it to WAL does.
// Prints {"opened":<stores opened or held>,"failures":[<each other error's message>]}.
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import Database from "better-sqlite3";
import { errorMessage, openStore } from "../../../engine/index.js";

const [folder, count, every, mode] = process.argv.slice(2);
/** What a reader is told before a writer has created the store. */
const NOT_YET = / does not exist \(opened read-only|is empty: no pitwall store was created/;
const GIVE_UP_MS = 20_000;
const LEAD_MS = 3;
const HOLD_MS = 10;

console.log(JSON.stringify({ ready: true }));
const startAt = join(folder!, "start-at");
while (!existsSync(startAt)) await sleep(10);
const first = Number(readFileSync(startAt, "utf8"));

let opened = 0;
const failures: string[] = [];
for (let i = 0; i < Number(count); i++) {
  const at = first + i * Number(every);
  const file = join(folder!, `store-${i}.db`);
  if (mode === "hold") {
    await until(at - LEAD_MS);
    if (i % 2 === 0) hold(file);
    opened++;
    continue;
  }
  await until(at);
  const giveUpAt = Date.now() + GIVE_UP_MS;
  for (;;) {
    try {
      await (await openStore(`sqlite:${file}`, { readOnly: mode === "read" })).close();
      opened++;
      break;
    } catch (error) {
      const message = errorMessage(error);
      if (mode === "read" && NOT_YET.test(message) && Date.now() < giveUpAt) continue;
      failures.push(message);
      break;
    }
  }
}
console.log(JSON.stringify({ opened, failures }));

/** Holds a write lock (RESERVED) on a new empty file: writers may still read it, not switch it to WAL. */
function hold(file: string): void {
  writeFileSync(file, "", { flag: "a", mode: 0o600 });
  const db = new Database(file, { timeout: 5_000 });
  db.exec("BEGIN IMMEDIATE");
  const until = Date.now() + LEAD_MS + HOLD_MS;
  while (Date.now() < until);
  db.exec("COMMIT");
  db.close();
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/** Sleeps until a few ms before `at`, then spins: processes woken by timers alone start milliseconds apart. */
async function until(at: number): Promise<void> {
  if (at - Date.now() > 3) await sleep(at - Date.now() - 3);
  while (Date.now() < at);
}
