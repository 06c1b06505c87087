import { NotFoundError } from "../errors.js";
import { derivedId } from "../ids.js";
import type { RunRecord } from "../store/records.js";
import { checkDeletion } from "../store/rules.js";
import type { Store } from "../store/store.js";

/** A run and the runs below it (its child runs, theirs...). */
export async function runTree(store: Store, root: RunRecord): Promise<RunRecord[]> {
  const tree = [root];
  for (let i = 0; i < tree.length; i++) {
    let cursor: string | undefined;
    do {
      const page = await store.listRuns({ parentRunId: tree[i]!.id, limit: 500, ...(cursor ? { cursor } : {}) });
      tree.push(...page.runs);
      cursor = page.nextCursor;
    } while (cursor);
  }
  return tree;
}

/**
 * The runs made from a run: its forks and the runs that went on from it (`start --from`), of it
 * and of its child runs, and theirs in turn, in the order found (a run before the runs made from
 * it). Each is found through the fork command recorded on the run it came from (a fork's id is
 * derived from its command's) and checked by its own `forkOf` link; one deleted already is left out.
 */
export async function runDescendants(store: Store, runId: string): Promise<RunRecord[]> {
  const root = await store.getRun(runId);
  if (!root) throw new NotFoundError("run", runId);
  const found: RunRecord[] = [];
  const seen = new Set([runId]);
  for (let i = -1; i < found.length; i++) {
    for (const source of await runTree(store, i < 0 ? root : found[i]!)) {
      for (const command of await store.listCommands({ runId: source.id })) {
        if (command.type !== "fork") continue;
        const id = derivedId("run", command.id);
        if (seen.has(id)) continue;
        seen.add(id);
        const fork = await store.getRun(id);
        if (fork?.forkOf?.runId === source.id) found.push(fork);
      }
    }
  }
  return found;
}

/**
 * Deletes a run with everything made from it (`runDescendants`), each with its child runs. Every
 * one is checked first, as `Store.deleteRun` would: one that has not ended (or has a child run
 * that has not) is refused with a ConflictError naming it, and nothing is deleted. Returns the
 * ids deleted, the run first.
 */
export async function deleteWithDescendants(store: Store, runId: string): Promise<string[]> {
  const root = await store.getRun(runId);
  if (!root) throw new NotFoundError("run", runId);
  const runs = [root, ...(await runDescendants(store, runId))];
  for (const run of runs) checkDeletion(run, await runTree(store, run));
  const deleted: string[] = [];
  for (const run of runs) deleted.push(...(await store.deleteRun(run.id)));
  await store.eraseDeleted?.();
  return deleted;
}
