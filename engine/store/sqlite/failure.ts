import { StoreError, errorMessage, isPitwallError } from "../../errors.js";
import { writersOwn } from "../rules.js";

/**
 * Turns what SQLite (or the file system) reports into one line that names the store file and
 * says what is wrong with it. Pitwall's own errors pass through unchanged.
 */
export function storeFailure(file: string, error: unknown, busyTimeoutMs: number): Error {
  if (isPitwallError(error) || writersOwn(error)) return error as Error;
  const code = (error as { code?: unknown })?.code;
  const detail = errorMessage(error).split("\n")[0];
  const why = typeof code === "string" ? explain(code, detail, busyTimeoutMs) : undefined;
  const transient = typeof code === "string" && /^SQLITE_(BUSY|LOCKED)/.test(code);
  const notWritable = typeof code === "string" && /^(SQLITE_READONLY|SQLITE_PERM|EACCES|EPERM|EROFS)/.test(code);
  const damaged = typeof code === "string" && /^SQLITE_(CORRUPT|NOTADB)/.test(code);
  if (why) return new StoreError(`store ${file} ${why}`, { cause: error, transient, notWritable, damaged });
  // Rows are only ever written as JSON by the store: one that does not parse was damaged on disk.
  if (error instanceof SyntaxError) return new StoreError(`store ${file} is corrupt (a stored record is unreadable: ${detail}); restore it from a backup`, { cause: error });
  if (error instanceof TypeError && /not open/.test(detail ?? "")) return new StoreError(`store ${file} is closed`, { cause: error });
  return new StoreError(`store ${file}: ${detail}`, { cause: error });
}

function explain(code: string, detail: string | undefined, busyTimeoutMs: number): string | undefined {
  const family = code.replace(/^(SQLITE_[A-Z]+)_.*$/, "$1");
  switch (family) {
    case "SQLITE_BUSY":
    case "SQLITE_LOCKED":
      return `is locked by another process (still busy after ${busyTimeoutMs} ms)`;
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

