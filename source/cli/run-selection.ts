import { RUN_STATUSES, type RunSelection, type RunStatus } from "../../engine/index.js";
import { UsageError } from "./errors.js";
import { listFlag, tagFlags } from "./inputs.js";

/** The flags that select runs, as `runs` and `batch` take them. */
export const SELECTION_FLAGS = {
  status: { type: "string", isMultiple: true },
  workflow: { type: "string", isMultiple: true },
  version: { type: "string", isMultiple: true },
  orphaned: { type: "boolean" },
  descendantsOf: { type: "string" },
  tag: { type: "string", isMultiple: true },
} as const;

export const SELECTION_USAGE = "[--status S ...] [--orphaned] [--workflow NAME ...] [--version PREFIX ...] [--tag NAME=VALUE ...] [--descendants-of RUN]";

/** The start of a version as listings print it: too short a prefix would name versions by chance. */
const VERSION_PREFIX = /^[0-9a-f]{4,16}$/i;

/** The selection the flags give, checked: a status that is none, --orphaned beside another status, a version prefix that is none. */
export function selectionOf(flags: { status?: string[] | undefined; workflow?: string[] | undefined; version?: string[] | undefined; orphaned?: boolean | undefined; descendantsOf?: string | undefined; tag?: string[] | undefined }): RunSelection {
  const statuses = listFlag("status", flags.status);
  for (const s of statuses) {
    if (!RUN_STATUSES.includes(s as RunStatus)) throw new UsageError(`--status ${s}: not a run status (${RUN_STATUSES.join(", ")})`);
  }
  if (flags.orphaned && statuses.some((st) => st !== "running")) throw new UsageError("--orphaned lists running runs only: leave out --status, or give --status running");
  const versions = listFlag("version", flags.version);
  for (const v of versions) {
    if (!VERSION_PREFIX.test(v)) throw new UsageError(`--version ${v}: give the start of a version, 4 to 16 hex characters (as runs prints it: 1a2b3c4d)`);
  }
  const tags = tagFlags(flags.tag);
  return {
    status: statuses as RunStatus[],
    workflows: listFlag("workflow", flags.workflow),
    ...(versions.length > 0 ? { versions: versions.map((v) => v.toLowerCase()) } : {}),
    ...(tags ? { tags } : {}),
    ...(flags.orphaned ? { orphaned: true } : {}),
    ...(flags.descendantsOf !== undefined ? { descendantsOf: flags.descendantsOf } : {}),
  };
}
