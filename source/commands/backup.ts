import { SqliteStore, describeStoreUrl } from "../../engine/index.js";
import { defineCommand, isMemoryStore } from "../cli/command.js";
import { EXIT, UsageError } from "../cli/errors.js";
import { bytes } from "../cli/format.js";
import { plural } from "../text/plain.js";

export const backup = defineCommand({
  name: "backup",
  usage: "backup <file>",
  summary: "write a consistent copy of a SQLite store to a new file, while workers keep running",
  details: `The copy is a snapshot of one moment, compacted, checked and private to you (mode 0600);
<file> must not exist. The copy is made under a temporary name beside it (.<file>.partial-...)
and renamed when whole, so <file> is never half-written (a backup killed midway can leave the
temporary file). To restore, stop every pitwall process of the store, delete the store's -wal
and -shm files and put the copy in its place.
--json prints { "file", "bytes", "runs" }.`,
  flags: {},
  args: { min: 1, max: 1 },
  readsOnly: true,
  async run({ args, out, store, global }) {
    if (args[0]!.trim() === "") throw new UsageError("backup needs the name of a new file for the copy");
    // Told from the URL, before connecting: a Redis store is refused whether it answers or not.
    if (/^rediss?:\/\//i.test(global.store)) {
      throw new UsageError(`backup copies SQLite stores, and ${describeStoreUrl(global.store)} is not one: back up Redis with its own persistence (BGSAVE, or the append-only file)`);
    }
    if (isMemoryStore(global.store)) throw new UsageError("backup copies SQLite stores, and memory: is not one");
    const opened = await store();
    if (!(opened instanceof SqliteStore)) throw new UsageError(`backup copies SQLite stores, and ${opened.description} is not one`);
    const result = await opened.backup(args[0]!);
    if (out.json) out.value(result);
    else out.line(`backed up ${opened.file} to ${result.file}: ${bytes(result.bytes)}, ${plural(result.runs, "run")}`);
    return EXIT.ok;
  },
});
