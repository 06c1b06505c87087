import { errorMessage } from "../errors.js";
import { pruneRuns } from "../operator/prune.js";
import type { Store } from "../store/store.js";
import type { WorkerNotice } from "./notices.js";
import { repeatUntil } from "./periodic.js";

/** When a worker first prunes after it starts, then how often at most. */
const FIRST_MS = 5_000;
const EVERY_MS = 10 * 60_000;

/**
 * Deletes the top-level runs that ended more than `retainMs` ago, with their child runs and
 * everything of theirs (`pruneRuns`, what `pitwall prune` runs), soon after the worker starts and
 * then every ten minutes (or every `retainMs`, when shorter). Several workers pruning at once
 * each delete what the others have not.
 */
export function startRetention(store: Store, retainMs: number, signal: AbortSignal, notify: (notice: WorkerNotice) => void): void {
  repeatUntil(signal, Math.min(FIRST_MS, retainMs), Math.min(EVERY_MS, retainMs), async () => {
    try {
      const result = await pruneRuns(store, { endedBefore: Date.now() - retainMs });
      if (result.runs.length > 0) {
        const children = result.childRuns > 0 ? ` and ${result.childRuns} child run${result.childRuns === 1 ? "" : "s"}` : "";
        notify({ level: "info", kind: "pruned", message: `retention: deleted ${result.runs.length} run${result.runs.length === 1 ? "" : "s"}${children} that ended more than ${span(retainMs)} ago` });
      }
    } catch (error) {
      notify({ level: "warn", kind: "pruned", message: `retention: deleting the runs that ended more than ${span(retainMs)} ago failed: ${errorMessage(error)}; trying again later` });
    }
  });
}

/** 30d, 12h, 90m, 45s: a retention as it was given. */
function span(ms: number): string {
  for (const [unit, size] of [["d", 86_400_000], ["h", 3_600_000], ["m", 60_000]] as const) if (ms % size === 0) return `${ms / size}${unit}`;
  return `${ms / 1000}s`;
}
