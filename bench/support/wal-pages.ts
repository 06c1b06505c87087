import { readFileSync } from "node:fs";
import Database from "better-sqlite3";

/**
 * The pages a store's commits wrote, counted in its WAL file: each commit appends a frame (a
 * page) for every page it changed, and the number of pages, unlike a time, does not move with
 * the machine's load. What a layout change saves in I/O shows here on a machine too noisy for
 * the times to show it.
 */
export interface WalPages {
  /** Frames appended: pages written, a page once per commit that changed it. */
  frames: number;
  /** Commits (frames that end a transaction). */
  commits: number;
  /** Frames by table or index, most first. */
  byName: { name: string; frames: number }[];
}

/**
 * Empties the WAL of the store at `file` into the database file, so that the frames read by
 * `readWalPages` afterwards are those of the commits made in between. `db` is a connection of
 * the caller's to the same file, kept open until then.
 */
export function resetWal(db: Database.Database): void {
  const [result] = db.pragma("wal_checkpoint(TRUNCATE)") as { busy: number }[];
  if (result?.busy) throw new Error("the WAL could not be reset: a reader or writer was busy");
}

/**
 * The frames in the WAL since `resetWal`. They are all there while the WAL held fewer pages than
 * the store's automatic checkpoint takes (8,192): past that, SQLite starts the WAL over and the
 * frames before are gone, which is refused rather than miscounted.
 */
export function readWalPages(db: Database.Database, file: string): WalPages {
  const wal = readFileSync(`${file}-wal`);
  // The WAL header (32 bytes) gives the page size and the salts of the frames written since the
  // WAL last started over; each frame is a 24-byte header (page number, the database size after
  // the commit in the frames that end one, the salts) and the page.
  const pageSize = wal.readUInt32BE(8);
  const salts = wal.subarray(16, 24);
  const pages: number[] = [];
  let commits = 0;
  for (let at = 32; at + 24 + pageSize <= wal.length; at += 24 + pageSize) {
    if (!wal.subarray(at + 8, at + 16).equals(salts)) throw new Error(`the WAL of ${file} started over since it was reset: its frames before are gone`);
    pages.push(wal.readUInt32BE(at));
    if (wal.readUInt32BE(at + 4) !== 0) commits++;
  }
  const owner = new Map((db.prepare("SELECT pageno, name FROM dbstat").raw().all() as [number, string][]).map(([page, name]) => [page, name]));
  const counts = new Map<string, number>();
  for (const page of pages) {
    // Freed pages and those of the freelist belong to no table.
    const name = owner.get(page) ?? "(free pages)";
    counts.set(name, (counts.get(name) ?? 0) + 1);
  }
  return { frames: pages.length, commits, byName: [...counts].map(([name, frames]) => ({ name, frames })).sort((a, b) => b.frames - a.frames) };
}
