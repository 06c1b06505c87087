import type { Store } from "../store/store.js";

/** One move of a run onto another version of its workflow (`Operator.upgrade`), as its accepted `upgrade` command records it. */
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

/**
 * A run's moves from version to version, oldest first: none for a run never moved. Read from its
 * commands, not its events: a long run has many more of those, and `show` asks for every run.
 */
export async function runUpgrades(store: Store, runId: string): Promise<RunUpgrade[]> {
  const commands = await store.listCommands({ runId, status: "accepted" });
  return commands
    .filter((command) => command.type === "upgrade" && command.result !== null)
    .sort((a, b) => a.createdAt - b.createdAt)
    .map((command) => {
      const { from, to, checkpointId } = command.result as { from: string; to: string; checkpointId?: string };
      return { from, to, at: command.createdAt, actor: command.actor, ...(command.reason ? { reason: command.reason } : {}), ...(checkpointId !== undefined ? { checkpointId } : {}) };
    });
}
