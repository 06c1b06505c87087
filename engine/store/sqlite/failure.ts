import { StoreError, errorMessage, isPitwallError } from "../../errors.js";
import { writersOwn } from "../rules.js";

/**
 * Turns what SQLite (or the file system) reports into one line that names the store file and
 * says what is wrong with it. Pitwall's own errors pass through unchanged. `waitedMs`, when the
 * caller measured it, is how long the failed work took: a lock refused sooner than the busy
 * timeout was refused without being waited out, and is not called "still busy after" it.
 */
export function storeFailure(file: string, error: unknown, busyTimeoutMs: number, waitedMs?: number): Error {
  if (isPitwallError(error) || writersOwn(error)) return error as Error;
  const code = (error as { code?: unknown })?.code;
  const detail = errorMessage(error).split("\n")[0];
  const waitedOut = busyTimeoutMs > 0 && (waitedMs === undefined || waitedMs >= busyTimeoutMs);
  const why = typeof code === "string" ? explain(code, detail, waitedOut ? busyTimeoutMs : undefined) : undefined;
  const transient = typeof code === "string" && /^SQLITE_(BUSY|LOCKED)/.test(code);
  const notWritable = typeof code === "string" && /^(SQLITE_READONLY|SQLITE_PERM|EACCES|EPERM|EROFS)/.test(code);
  const damaged = typeof code === "string" && /^SQLITE_(CORRUPT|NOTADB)/.test(code);
  if (why) return new StoreError(`store ${file} ${why}`, { cause: error, transient, notWritable, damaged });
  // Rows are only ever written as JSON by the store: one that does not parse was damaged on disk.
  if (error instanceof SyntaxError) return new StoreError(`store ${file} is corrupt (a stored record is unreadable: ${detail}); restore it from a backup`, { cause: error });
  if (error instanceof TypeError && /not open/.test(detail ?? "")) return new StoreError(`store ${file} is closed`, { cause: error });
  return new StoreError(`store ${file}: ${detail}`, { cause: error });
}

/** `busyForMs`: how long the lock was waited for, undefined when it was refused without waiting. */
function explain(code: string, detail: string | undefined, busyForMs: number | undefined): string | undefined {
  const family = code.replace(/^(SQLITE_[A-Z]+)_.*$/, "$1");
  switch (family) {
    case "SQLITE_BUSY":
    case "SQLITE_LOCKED":
      return `is locked by another process (${busyForMs === undefined ? "refused at once, without waiting" : `still busy after ${busyForMs} ms`})`;
    case "SQLITE_NOTADB":
      return "is not a pitwall store (not an SQLite database, or its header is damaged)";
    case "SQLITE_CORRUPT":
      return `is corrupt (${detail}); restore it from a backup`;
    case "SQLITE_READONLY":
    case "SQLITE_PERM":
    case "EACCES":
    case "EPERM":
    case "EROFS":
      return "is read-only: pitwall needs to write to its store (and to create the -wal and -shm files beside it)";
    case "SQLITE_FULL":
    case "ENOSPC":
      return "cannot grow: the disk is full";
    case "SQLITE_CANTOPEN":
      return `cannot be opened (${detail})`;
    case "SQLITE_IOERR":
      return `could not be read or written (${code})`;
    default:
      return undefined;
  }
}

