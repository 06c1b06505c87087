import { accessSync, closeSync, constants, openSync, statSync } from "node:fs";
import { dirname, resolve } from "node:path";
import Database from "better-sqlite3";
import { StoreError } from "../../errors.js";
import { storeFailure } from "./failure.js";
import { APPLICATION_ID, MIGRATIONS, SCHEMA_VERSION, TABLES } from "./schema.js";

/**
 * `process`: WAL with synchronous=NORMAL. A commit survives the process crashing at any moment;
 * the last commits before a power loss or OS crash may be lost (the file stays consistent).
 * `os`: WAL with synchronous=FULL. Every commit is on disk (fsync) before it returns.
 */
export type Durability = "process" | "os";

export interface ConnectOptions {
  durability: Durability;
  /** How long a write waits for another process's transaction before failing. */
  busyTimeoutMs: number;
}

/**
 * Opens (creating it, private to the user, if missing) a pitwall store file, checks that it is
 * one this pitwall can use, brings its schema up to date and applies the durability settings.
 * A file that fails a check is left exactly as it was.
 */
export function connect(file: string, options: ConnectOptions): Database.Database {
  prepareFile(file, options.busyTimeoutMs);
  let db: Database.Database | undefined;
  try {
    db = new Database(file, { fileMustExist: true, timeout: options.busyTimeoutMs });
    migrate(db, file);
    db.pragma(`synchronous = ${options.durability === "os" ? "FULL" : "NORMAL"}`);
    // A step touches a dozen pages; checkpointing the WAL (which syncs the database file) every
    // 8,192 pages instead of SQLite's 1,000 makes those syncs rarer per step. After a burst of
    // writes the WAL file is cut back to 16 MB instead of keeping its peak.
    db.pragma("wal_autocheckpoint = 8192");
    db.pragma(`journal_size_limit = ${16 * 1024 * 1024}`);
    return db;
  } catch (error) {
    db?.close();
    throw storeFailure(file, error, options.busyTimeoutMs);
  }
}

/** Creates a missing file with mode 0600; refuses a file or folder this process cannot write. */
function prepareFile(file: string, busyTimeoutMs: number): void {
  const dir = dirname(resolve(file));
  try {
    const stat = statOrUndefined(file);
    if (stat && !stat.isFile()) throw new StoreError(`store ${file} is not a file`);
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
 * Reads the file's identity and schema version before anything is written, then applies the
 * missing migrations in one transaction (another process may be doing the same: the version is
 * read again under the write lock).
 */
function migrate(db: Database.Database, file: string): void {
  const identity = () => ({
    app: db.pragma("application_id", { simple: true }) as number,
    version: db.pragma("user_version", { simple: true }) as number,
    objects: (db.prepare("SELECT count(*) AS n FROM sqlite_schema").get() as { n: number }).n,
  });
  const found = identity();
  const empty = found.app === 0 && found.version === 0 && found.objects === 0;
  if (!empty && found.app !== APPLICATION_ID) {
    throw new StoreError(`store ${file} is not a pitwall store (it is an SQLite database of another application); nothing was written`);
  }
  if (found.version > SCHEMA_VERSION) {
    throw new StoreError(
      `store ${file} was written by a newer pitwall (schema version ${found.version}; this pitwall knows up to ${SCHEMA_VERSION}): upgrade pitwall to use it; the file was not changed`,
    );
  }
  if (db.pragma("journal_mode", { simple: true }) !== "wal") db.pragma("journal_mode = WAL");
  if (found.version < SCHEMA_VERSION) {
    db.transaction(() => {
      const now = identity();
      for (let v = now.version; v < SCHEMA_VERSION; v++) db.exec(MIGRATIONS[v]!);
      db.pragma(`application_id = ${APPLICATION_ID}`);
      db.pragma(`user_version = ${SCHEMA_VERSION}`);
    }).immediate();
  }
  const tables = new Set((db.prepare("SELECT name FROM sqlite_schema WHERE type = 'table'").all() as { name: string }[]).map((r) => r.name));
  for (const table of TABLES) {
    if (!tables.has(table)) throw new StoreError(`store ${file} is corrupt (its table ${table} is missing); restore it from a backup`);
    // Reading one row of each table reaches its root page: a damaged file is caught at open.
    db.prepare(`SELECT * FROM ${table} LIMIT 1`).get();
  }
}
