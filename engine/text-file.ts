import { readFileSync, statSync } from "node:fs";

/**
 * The most a file read as text (a workflow, an input, a config, a model script, a certificate)
 * may hold: enough for any of them, and far below what would exhaust the process's memory.
 */
export const MAX_TEXT_FILE_BYTES = 64 * 1024 * 1024;

/**
 * A file's text (a byte-order mark, which some Windows editors write and JSON does not allow,
 * dropped). A device (`/dev/zero`, `/dev/urandom`) or a file past MAX_TEXT_FILE_BYTES is refused
 * before reading: either would be read until the process ran out of memory. Pipes are read
 * (`@-`, `<(cmd)`). The errors read well through `fileProblem`.
 */
export function readTextFile(file: string | number): string {
  if (typeof file === "string") {
    const stats = statSync(file);
    if (stats.isDirectory()) throw Object.assign(new Error("it is a folder, not a file"), { code: "EISDIR" });
    if (stats.isCharacterDevice() || stats.isBlockDevice()) throw new Error("it is a device, not a file");
    if (stats.size > MAX_TEXT_FILE_BYTES) {
      throw new Error(`it holds ${(stats.size / 1024 / 1024).toFixed(1)} MiB; files read as text may hold at most ${MAX_TEXT_FILE_BYTES / 1024 / 1024} MiB`);
    }
  }
  return readFileSync(file, "utf8").replace(/^\uFEFF/, "");
}
