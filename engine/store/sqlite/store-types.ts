/**
 * Types of the SQLite store's public API, apart from the modules that use better-sqlite3: a
 * program that embeds pitwall type-checks against them without better-sqlite3's own types.
 */

/**
 * `process`: WAL with synchronous=NORMAL. A commit survives the process crashing at any moment;
 * the last commits before a power loss or OS crash may be lost (the file stays consistent).
 * `os`: WAL with synchronous=FULL. Every commit is on disk (fsync) before it returns.
 */
export type Durability = "process" | "os";

/** What `SqliteStore.backup` wrote. */
export interface BackupResult {
  /** The backup file, as it was named. */
  file: string;
  bytes: number;
  runs: number;
}
