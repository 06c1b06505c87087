import type { Store } from "../store/store.js";

/** One move of a run onto another version of its workflow (`Operator.upgrade`), as its `run.upgraded` event records it. */
export interface RunUpgrade {
  from: string;
  to: string;
  /** When it was made (epoch ms). */
  at: number;
  actor: string;
  reason?: string;
  /** The `update` checkpoint that fitted the run's state to the new version's schema, when one was written. */
  checkpointId?: string;
}

/** A run's moves from version to version, oldest first: none for a run never moved. */
export async function runUpgrades(store: Store, runId: string): Promise<RunUpgrade[]> {
  const events = await store.readEvents({ runId, types: ["run.upgraded"] });
  return events.flatMap((event) => {
    if (event.type !== "run.upgraded") return [];
    const { from, to, reason, checkpointId } = event.payload;
    return [{ from, to, at: event.time, actor: event.actor, ...(reason !== undefined ? { reason } : {}), ...(checkpointId !== undefined ? { checkpointId } : {}) }];
  });
}
