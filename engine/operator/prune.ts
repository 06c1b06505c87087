import { ConflictError, NotFoundError } from "../errors.js";
import { TERMINAL_RUN_STATUSES, type RunRecord, type RunStatus } from "../store/records.js";
import { checkDeletion } from "../store/rules.js";
import type { Store } from "../store/store.js";
import { runTree } from "./descendants.js";

export interface PruneOptions {
  /** Runs that ended before this time (ms since the epoch) are deleted. */
  endedBefore: number;
  /** Only runs of this workflow. */
  workflow?: string;
  /** Only runs that ended so (default: succeeded, failed and canceled). */
  statuses?: readonly RunStatus[];
  /** List what would be deleted, deleting nothing. */
  dryRun?: boolean;
}

/** What a prune reports of a run: enough to list it, not its whole record. */
export type PrunedRun = Pick<RunRecord, "id" | "workflow" | "status" | "endedAt" | "updatedAt">;

export interface PruneResult {
  /** The top-level runs deleted (or that would be), each with its child runs, newest first. */
  runs: PrunedRun[];
  /** How many child runs went with them (or would). */
  childRuns: number;
  /** Runs that matched but were kept, and why (a child run that has not ended yet). */
  kept: { runId: string; why: string }[];
}

/**
 * Deletes the top-level runs that ended before a time, with their child runs (`Store.deleteRun`),
 * so that a store does not keep every run forever. A run whose child runs have not all ended is
 * kept and reported. Runs are read a page at a time and each page is deleted before the next is
 * read, so a prune of millions of runs holds one page of records, and one that is stopped has
 * deleted what it reported so far.
 */
export async function pruneRuns(store: Store, options: PruneOptions): Promise<PruneResult> {
  const statuses = options.statuses ?? TERMINAL_RUN_STATUSES;
  const result: PruneResult = { runs: [], childRuns: 0, kept: [] };
  let cursor: string | undefined;
  do {
    // Deleting the runs of a page does not move the cursor: it is the last run's place in the order.
    const page = await store.listRuns({ status: [...statuses], parentRunId: null, limit: 500, ...(options.workflow ? { workflow: options.workflow } : {}), ...(cursor ? { cursor } : {}) });
    for (const run of page.runs) {
      if ((run.endedAt ?? run.updatedAt) >= options.endedBefore) continue;
      const pruned: PrunedRun = { id: run.id, workflow: run.workflow, status: run.status, endedAt: run.endedAt, updatedAt: run.updatedAt };
      if (options.dryRun) {
        // The same rule the deletion would apply, so that the dry run lists what a prune deletes.
        const tree = await runTree(store, run);
        try {
          checkDeletion(run, tree);
          result.runs.push(pruned);
          result.childRuns += tree.length - 1;
        } catch (error) {
          if (!(error instanceof ConflictError)) throw error;
          result.kept.push({ runId: run.id, why: error.message });
        }
        continue;
      }
      try {
        const deleted = await store.deleteRun(run.id);
        result.runs.push(pruned);
        result.childRuns += deleted.length - 1;
      } catch (error) {
        // Another process deleted it first: it is gone all the same.
        if (error instanceof NotFoundError) continue;
        if (!(error instanceof ConflictError)) throw error;
        result.kept.push({ runId: run.id, why: error.message });
      }
    }
    cursor = page.nextCursor;
  } while (cursor);
  await store.eraseDeleted?.();
  return result;
}
