import { RUN_STATUSES, type RunSelection, type RunStatus } from "../../engine/index.js";
import { UsageError } from "./errors.js";
import { listFlag, tagFlags } from "./inputs.js";

/** The flags that select runs, as `runs` and `batch` take them. */
export const SELECTION_FLAGS = {
  status: { type: "string", isMultiple: true },
  workflow: { type: "string", isMultiple: true },
  orphaned: { type: "boolean" },
  descendantsOf: { type: "string" },
  tag: { type: "string", isMultiple: true },
} as const;

export const SELECTION_USAGE = "[--status S ...] [--orphaned] [--workflow NAME ...] [--tag NAME=VALUE ...] [--descendants-of RUN]";

/** The selection the flags give, checked: a status that is none, --orphaned beside another status. */
export function selectionOf(flags: { status?: string[] | undefined; workflow?: string[] | undefined; orphaned?: boolean | undefined; descendantsOf?: string | undefined; tag?: string[] | undefined }): RunSelection {
  const statuses = listFlag("status", flags.status);
  for (const s of statuses) {
    if (!RUN_STATUSES.includes(s as RunStatus)) throw new UsageError(`--status ${s}: not a run status (${RUN_STATUSES.join(", ")})`);
  }
  if (flags.orphaned && statuses.some((st) => st !== "running")) throw new UsageError("--orphaned lists running runs only: leave out --status, or give --status running");
  const tags = tagFlags(flags.tag);
  return {
    status: statuses as RunStatus[],
    workflows: listFlag("workflow", flags.workflow),
    ...(tags ? { tags } : {}),
    ...(flags.orphaned ? { orphaned: true } : {}),
    ...(flags.descendantsOf !== undefined ? { descendantsOf: flags.descendantsOf } : {}),
  };
}
