import type { RunStatus } from "../records.js";
import { checkDeletion } from "../rules.js";
import { refusal } from "./replies.js";
import type { ScriptWriter } from "./script-writer.js";

/** Entries a deleted run's purge handles per script call: at most about 3 ms of the server's time, measured. */
const PURGE_BATCH = 1000;

/**
 * Deletes an ended top-level run with its child runs (`Store.deleteRun`): the `deleteRun` script
 * takes them from every reader at once, and what grows with a run's length is purged a batch at a
 * time, so that no script holds the server for long (lua/delete-run.ts).
 */
export async function deleteRun(w: ScriptWriter, runId: string): Promise<string[]> {
  const reply = await w.write("deleteRun", w.args().add(runId));
  const [status, ...rest] = reply;
  if (status === "ok") {
    // Also the purges of deletions whose process stopped before they were done.
    const ids = [...new Set([...(rest[0] as string[]), ...(await w.client.hkeys(w.keys.global("purging")))])];
    for (const id of ids) while ((await w.write("purgeRun", w.args().add(id, PURGE_BATCH)))[0] === "more");
    return rest[0] as string[];
  }
  if (status === "child") checkDeletion({ id: runId, parentRunId: String(rest[0]) }, []);
  if (status === "live") checkDeletion({ id: runId, parentRunId: null }, [{ id: String(rest[0]), status: rest[1] as RunStatus }]);
  throw refusal(reply);
}
