import type Database from "better-sqlite3";

/** Checkpoints that erase deleted runs from the WAL: at most one this often while deletions come fast (a prune). */
const ERASE_EVERY_MS = 1_000;
/** A checkpoint kept from completing (a reader of an older snapshot) is tried again this often, this many times. */
const RETRY_MS = 1_000;
const RETRIES = 30;

/**
 * Deleted runs leave the file: their rows are overwritten with zeros as they are deleted (SQLite's
 * `secure_delete`, on only for deletions: other writes pay nothing for it), and soon after, a
 * `wal_checkpoint(TRUNCATE)` copies the zeroed pages into the database file and empties the WAL,
 * whose older frames still hold the rows as they were.
 */
export class Erasure {
  private lastCheckpoint = 0;
  private timer: NodeJS.Timeout | undefined;
  private retries = 0;

  constructor(private readonly db: Database.Database) {}

  /** Runs `deletion` (inside a write transaction) with deleted content overwritten. */
  overwriting<T>(deletion: () => T): T {
    const before = this.db.pragma("secure_delete", { simple: true }) as number;
    this.db.pragma("secure_delete = ON");
    try {
      return deletion();
    } finally {
      this.db.pragma(`secure_delete = ${before}`);
    }
  }

  /** After a deletion committed: checkpoints at once, or within a second when one was just made. */
  deleted(): void {
    this.retries = 0;
    if (this.timer) return;
    const wait = this.lastCheckpoint + ERASE_EVERY_MS - Date.now();
    if (wait <= 0) this.checkpoint();
    else this.schedule(wait);
  }

  /** A checkpoint still owed is made now (before the store closes, at the end of a prune). */
  now(): void {
    if (!this.timer) return;
    clearTimeout(this.timer);
    this.timer = undefined;
    this.checkpoint(false);
  }

  private schedule(ms: number): void {
    this.timer = setTimeout(() => {
      this.timer = undefined;
      this.checkpoint();
    }, ms);
    this.timer.unref();
  }

  private checkpoint(retry = true): void {
    this.lastCheckpoint = Date.now();
    let busy = true;
    try {
      const [result] = this.db.pragma("wal_checkpoint(TRUNCATE)") as { busy: number }[];
      busy = result?.busy !== 0;
    } catch {
      // Locked past the busy timeout, or closed: tried again below, as when busy.
    }
    if (busy && retry && this.db.open && this.retries++ < RETRIES) this.schedule(RETRY_MS);
  }
}
