import { spawnChild, type Child } from "./processes.js";

/**
 * Another process holding a store file's lock until killed: `write` (BEGIN IMMEDIATE and a write
 * in a store: writers wait), `exclusive` (everyone waits), or `new` (BEGIN IMMEDIATE on a file it
 * creates empty, as a process creating a store does while it switches the file to WAL).
 */
export async function lockHolder(file: string, lock: "write" | "exclusive" | "new"): Promise<Child> {
  const take = {
    write: `db.exec("BEGIN IMMEDIATE"); db.prepare("DELETE FROM meta WHERE key = 'nothing'").run();`,
    exclusive: `db.pragma("locking_mode = EXCLUSIVE"); db.exec("BEGIN EXCLUSIVE");`,
    new: `db.exec("BEGIN IMMEDIATE");`,
  }[lock];
  const holder = spawnChild(process.execPath, ["-e", `const db = new (require("better-sqlite3"))(${JSON.stringify(file)}); ${take} console.log('{"locked":true}'); setTimeout(() => {}, 60000);`]);
  await holder.line((l) => l.locked === true);
  return holder;
}
