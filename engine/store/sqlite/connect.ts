import { accessSync, closeSync, constants, openSync, statSync } from "node:fs";
import { dirname, resolve } from "node:path";
import Database from "better-sqlite3";
import { StoreError } from "../../errors.js";
import { storeFailure } from "./failure.js";
import { APPLICATION_ID, MIGRATIONS, applyMigration, READABLE_FROM_VERSION, SCHEMA_VERSION, TABLES } from "./schema.js";
import type { Durability } from "./store-types.js";


export interface ConnectOptions {
  durability: Durability;
  /** How long a write waits for another process's transaction before failing. */
  busyTimeoutMs: number;
  /** Opens an existing store read-only, changing nothing (connectReadOnly). */
  readOnly: boolean;
  /** Creates the file when it is missing (else a missing file is an error naming it). */
  create: boolean;
}

/**
 * Opens (creating it, private to the user, if missing) a pitwall store file, checks that it is
 * one this pitwall can use, brings its schema up to date and applies the durability settings.
 * A file that fails a check is left exactly as it was.
 */
export function connect(file: string, options: ConnectOptions): Database.Database {
  if (options.readOnly) return connectReadOnly(file, options.busyTimeoutMs);
  prepareFile(file, options.busyTimeoutMs, options.create);
  const started = Date.now();
  let db: Database.Database | undefined;
  try {
    db = new Database(file, { fileMustExist: true, timeout: options.busyTimeoutMs });
    whileBusy(options.busyTimeoutMs, () => migrate(db!, file));
    db.pragma(`synchronous = ${options.durability === "os" ? "FULL" : "NORMAL"}`);
    // A step touches a dozen pages; checkpointing the WAL (which syncs the database file) every
    // 8,192 pages instead of SQLite's 1,000 makes those syncs rarer per step. After a burst of
    // writes the WAL file is cut back to 16 MB instead of keeping its peak.
    db.pragma("wal_autocheckpoint = 8192");
    db.pragma(`journal_size_limit = ${16 * 1024 * 1024}`);
    // What an update or a deletion frees inside a page is overwritten with zeros (at no cost in
    // I/O): an old version of a record does not linger in the file after its run is deleted.
    // Deletions overwrite the pages they free too (erasure.ts).
    db.pragma("secure_delete = FAST");
    return db;
  } catch (error) {
    db?.close();
    throw storeFailure(file, error, options.busyTimeoutMs, Date.now() - started);
  }
}

/**
 * Opens an existing store for reading only: nothing is created, upgraded or written, so a file
 * or folder this process may not write (a copy kept read-only, another user's store) works. A
 * store of an older version is read as it is when its tables are the current ones.
 */
function connectReadOnly(file: string, busyTimeoutMs: number): Database.Database {
  const started = Date.now();
  let db: Database.Database | undefined;
  try {
    const stat = statOrUndefined(file);
    if (!stat) throw new StoreError(`store ${file} does not exist (opened read-only, so none was created)`);
    if (!stat.isFile()) throw new StoreError(`store ${file} is not a file`);
    try {
      accessSync(file, constants.R_OK);
    } catch {
      throw new StoreError(`store ${file} cannot be read: permission denied`);
    }
    db = new Database(file, { readonly: true, fileMustExist: true, timeout: busyTimeoutMs });
    const found = checkIdentity(db, file);
    if (found.version < READABLE_FROM_VERSION) {
      throw new StoreError(
        found.version === 0
          ? `store ${file} is empty: no pitwall store was created in it yet`
          : `store ${file} has schema version ${found.version}, older than this pitwall reads without upgrading it (${READABLE_FROM_VERSION}): it is upgraded when opened to write (a worker, or a command that writes); opened read-only, it was not changed`,
      );
    }
    checkTables(db, file);
    return db;
  } catch (error) {
    db?.close();
    const code = String((error as { code?: unknown })?.code ?? "");
    // SQLite keeps a WAL store's shared index in a -shm file beside it, created by the first
    // process to open it: in a folder nobody may write, a store nobody has open cannot be read.
    if (code.startsWith("SQLITE_READONLY") || code === "SQLITE_CANTOPEN") {
      const why = statOrUndefined(`${file}-shm`)
        ? `this user may not open its -shm file (${file}-shm, which the processes sharing the store use)`
        : "SQLite needs to create its -shm file beside it, and the folder is read-only";
      throw new StoreError(`store ${file} cannot be read where it is: ${why}; copy the file to a folder you can write`, { cause: error });
    }
    throw storeFailure(file, error, busyTimeoutMs, Date.now() - started);
  }
}

/** Creates a missing file with mode 0600; refuses a file or folder this process cannot write. */
function prepareFile(file: string, busyTimeoutMs: number, create: boolean): void {
  const dir = dirname(resolve(file));
  try {
    const stat = statOrUndefined(file);
    if (stat && !stat.isFile()) throw new StoreError(`store ${file} is not a file`);
    if (!stat && !create) throw new StoreError(`store ${file} does not exist (none was created)`);
    if (stat) {
      try {
        accessSync(file, constants.R_OK);
      } catch {
        throw new StoreError(`store ${file} cannot be read: permission denied`);
      }
    }
    if (!stat) {
      if (!statOrUndefined(dir)?.isDirectory()) throw new StoreError(`store ${file} cannot be created: folder ${dir} does not exist`);
      try {
        closeSync(openSync(file, "wx", 0o600));
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code !== "EEXIST") throw error;
      }
    }
    accessSync(file, constants.R_OK | constants.W_OK);
    accessSync(dir, constants.W_OK);
  } catch (error) {
    throw storeFailure(file, error, busyTimeoutMs);
  }
}

/** The file's stat, or undefined when there is no such file (other errors are thrown). */
export function statOrUndefined(path: string) {
  try {
    return statSync(path);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return undefined;
    throw error;
  }
}

/**
 * Runs `work` again while SQLite answers "busy" without waiting (a new store that several
 * processes open at once: switching it to WAL, or a read lock in the way of the first write, is
 * refused at once rather than after the busy timeout), for up to `budgetMs`.
 */
function whileBusy(budgetMs: number, work: () => void): void {
  const until = Date.now() + budgetMs;
  const pause = new Int32Array(new SharedArrayBuffer(4));
  for (;;) {
    try {
      return work();
    } catch (error) {
      const code = String((error as { code?: unknown })?.code ?? "");
      if (!code.startsWith("SQLITE_BUSY") || Date.now() >= until) throw error;
      Atomics.wait(pause, 0, 0, 10 + Math.floor(Math.random() * 40));
    }
  }
}

/**
 * Reads the file's identity and schema version before anything is written, then applies the
 * missing migrations in one transaction (another process may be doing the same: the version is
 * read again under the write lock).
 */
function migrate(db: Database.Database, file: string): void {
  const found = checkIdentity(db, file);
  if (db.pragma("journal_mode", { simple: true }) !== "wal") db.pragma("journal_mode = WAL");
  if (found.version < SCHEMA_VERSION) {
    db.transaction(() => {
      const now = identity(db);
      for (let v = now.version; v < SCHEMA_VERSION; v++) applyMigration(db, MIGRATIONS[v]!);
      db.pragma(`application_id = ${APPLICATION_ID}`);
      db.pragma(`user_version = ${SCHEMA_VERSION}`);
    }).immediate();
  }
  checkTables(db, file);
}

function identity(db: Database.Database): { app: number; version: number; objects: number } {
  return {
    app: db.pragma("application_id", { simple: true }) as number,
    version: db.pragma("user_version", { simple: true }) as number,
    objects: (db.prepare("SELECT count(*) AS n FROM sqlite_schema").get() as { n: number }).n,
  };
}

/** Refuses a database of another application or of a newer pitwall; an empty one (version 0) passes. */
function checkIdentity(db: Database.Database, file: string): { version: number } {
  // In one read transaction: another process creating the store commits its identity and its
  // tables together, and reads spread over its commit saw an id of 0 beside tables ("another
  // application").
  const found = db.transaction(() => identity(db))();
  const empty = found.app === 0 && found.version === 0 && found.objects === 0;
  if (!empty && found.app !== APPLICATION_ID) {
    throw new StoreError(`store ${file} is not a pitwall store (it is an SQLite database of another application); nothing was written`);
  }
  if (found.version > SCHEMA_VERSION) {
    throw new StoreError(
      `store ${file} was written by a newer pitwall (schema version ${found.version}; this pitwall knows up to ${SCHEMA_VERSION}): upgrade pitwall to use it; the file was not changed`,
    );
  }
  return found;
}

/** Every table is there and its root page reads: a damaged file is caught at open. */
function checkTables(db: Database.Database, file: string): void {
  const tables = new Set((db.prepare("SELECT name FROM sqlite_schema WHERE type = 'table'").all() as { name: string }[]).map((r) => r.name));
  for (const table of TABLES) {
    if (!tables.has(table)) throw new StoreError(`store ${file} is corrupt (its table ${table} is missing); restore it from a backup`);
    db.prepare(`SELECT * FROM ${table} LIMIT 1`).get();
  }
}
