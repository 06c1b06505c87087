import type { RunRecord, TaskRecord } from "../store/records.js";
import type { Store } from "../store/store.js";

/**
 * The run below `runId` — a sub-workflow's run, or one of theirs — that has not ended and has a
 * node waiting for a signal `name` now, the nearest first: where a signal sent to `runId` that
 * none of its own nodes waits for was most likely meant to go. Undefined when none has.
 */
export async function signalWaiterBelow(store: Store, runId: string, name: string): Promise<RunRecord | undefined> {
  const parents = [runId];
  for (let i = 0; i < parents.length; i++) {
    let cursor: string | undefined;
    do {
      const page = await store.listRuns({ parentRunId: parents[i]!, status: ["queued", "running", "paused"], limit: 500, ...(cursor ? { cursor } : {}) });
      for (const child of page.runs) {
        if (waitsFor(await store.listTasks(child.id), name)) return child;
        parents.push(child.id);
      }
      cursor = page.nextCursor;
    } while (cursor);
  }
  return undefined;
}

/** Whether a task of these waits for a signal `name` (as `prepareSignal` finds the one a signal lets go on). */
function waitsFor(tasks: readonly TaskRecord[], name: string): boolean {
  return tasks.some((t) => t.status === "interrupted" && t.waitingFor?.kind === "signal" && t.waitingFor.name === name);
}
