import { randomBytes } from "node:crypto";
import { closeSync, fsyncSync, linkSync, openSync, readdirSync, statSync, unlinkSync } from "node:fs";
import { basename, dirname, join, resolve } from "node:path";
import Database from "better-sqlite3";
import { StoreError, ValidationError, errorMessage } from "../../errors.js";
import { pidGone } from "../../local-process.js";
import { statOrUndefined } from "./connect.js";
import { APPLICATION_ID } from "./schema.js";
import type { BackupResult } from "./store-types.js";

/**
 * Writes a consistent copy of the open store `db` to `file`, which must not exist yet, while other
 * processes go on writing. `VACUUM INTO` reads the store in one read transaction (a snapshot that
 * writers in WAL mode are not held up by) and writes the pages compacted. The copy is made under
 * a temporary name in the same folder, synced, checked and then linked to `file`, so that `file`
 * is either a whole, checked store or absent; it is private to its owner like a store file.
 */
export function backupStore(db: Database.Database, file: string): BackupResult {
  const target = resolve(file);
  const folder = dirname(target);
  const prefix = `.${basename(target)}.partial-`;
  const partial = join(folder, `${prefix}${process.pid}-${randomBytes(4).toString("hex")}`);
  // A name that cannot be used is a mistake in what was asked (exit 2), not a store failure.
  if (statOrUndefined(target)) throw new ValidationError(`backup ${file} already exists: name a new file (nothing was written)`);
  if (!statOrUndefined(folder)?.isDirectory()) throw new ValidationError(`backup ${file} cannot be created: folder ${folder} does not exist (nothing was written)`);
  try {
    removeAbandoned(folder, prefix);
    closeSync(openSync(partial, "wx", 0o600));
    db.prepare("VACUUM INTO ?").run(partial);
    syncFile(partial);
    const runs = checkCopy(partial);
    linkSync(partial, target);
    syncFile(folder);
    return { file, bytes: statSync(target).size, runs };
  } catch (error) {
    throw backupFailure(file, folder, error);
  } finally {
    // VACUUM INTO writes a rollback journal beside the copy; a copy that failed may leave it.
    for (const path of [partial, `${partial}-journal`]) removeIfPresent(path);
  }
}

/** Reads the copy back: a damaged one is never given the backup's name. */
function checkCopy(path: string): number {
  const copy = new Database(path, { readonly: true, fileMustExist: true });
  try {
    const check = copy.pragma("quick_check", { simple: true });
    if (check !== "ok") throw new StoreError(`was not kept: the copy failed its integrity check (${String(check)})`);
    if (copy.pragma("application_id", { simple: true }) !== APPLICATION_ID) throw new StoreError("was not kept: the copy is not a pitwall store");
    return copy.prepare("SELECT count(*) FROM runs").pluck().get() as number;
  } finally {
    copy.close();
  }
}

/** A problem of the backup file (or its folder) names it; one of the store passes through. */
function backupFailure(file: string, folder: string, error: unknown): Error {
  const code = (error as { code?: unknown })?.code;
  const why =
    code === "EEXIST"
      ? "already exists: name a new file"
      : code === "ENOSPC" || code === "SQLITE_FULL"
        ? "cannot be written: the disk is full"
        : typeof code === "string" && /^(EACCES|EPERM|EROFS|SQLITE_CANTOPEN|SQLITE_READONLY)/.test(code)
          ? `cannot be written: folder ${folder} is not writable`
          : typeof code === "string" && /^E[A-Z]+$/.test(code)
            ? `cannot be written (${errorMessage(error)})`
            : error instanceof StoreError
              ? error.message
              : undefined;
  if (why) return new StoreError(`backup ${file} ${why} (nothing was written)`, { cause: error });
  return error instanceof Error ? error : new Error(String(error));
}

function syncFile(path: string): void {
  const fd = openSync(path, "r");
  try {
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
}

/**
 * Temporary copies of the same backup left by processes that died while making them (killed,
 * out of memory): named after their process, which is no longer running.
 */
function removeAbandoned(folder: string, prefix: string): void {
  for (const name of readdirSync(folder)) {
    if (!name.startsWith(prefix)) continue;
    const pid = Number(name.slice(prefix.length).split("-")[0]);
    if (Number.isInteger(pid) && pid > 0 && pidGone(pid)) removeIfPresent(join(folder, name));
  }
}

/** Best effort: where the temporary copy could not be made, there is none to remove. */
function removeIfPresent(path: string): void {
  try {
    unlinkSync(path);
  } catch {
    // nothing there, or a folder this process cannot write to (so it wrote nothing there)
  }
}
