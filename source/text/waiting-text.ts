import type { RunRecord, RunsAtOnce } from "../../engine/index.js";
import { plural } from "./plain.js";

/** Whether `unclaimedWhy`'s words say the run waits for a place under its workflow's `limits.runsAtOnce`. */
export function waitsForSlot(unclaimed: string, atOnce: RunsAtOnce | undefined): atOnce is RunsAtOnce {
  // unclaimedWhy names the workers' want instead of the limit when no live worker could take the run.
  return atOnce !== undefined && atOnce.running >= atOnce.limit && unclaimed.startsWith("limit: ");
}

/**
 * What a queued run no worker has taken waits for, from `unclaimedWhy`'s words: a place under its
 * workflow's `limits.runsAtOnce`, or a worker (`show`'s `waiting` row; `start --wait`'s note).
 */
export function waitingFor(unclaimed: string, run: Pick<RunRecord, "workflow">, atOnce: RunsAtOnce | undefined): string {
  if (!waitsForSlot(unclaimed, atOnce)) return `for a worker: ${unclaimed}`;
  const limit = `for a slot (${unclaimed}): workflow ${run.workflow} lets ${plural(atOnce.limit, "run")} of any of its versions run at once (limits.runsAtOnce of its newest version), and ${atOnce.running} ${atOnce.running === 1 ? "is" : "are"} running`;
  const freed = "a worker takes this one when one of them ends or waits (a timer, a person, a child run)";
  if (!atOnce.lapsed) return `${limit}; ${freed}`;
  // A lost worker's runs keep their places: nothing frees them but a take-over or an operator.
  const { count, runId } = atOnce.lapsed;
  const them = count === 1 ? "it" : "them";
  const lapsed = count === 1 ? `run ${runId}, whose lease ran out, holds its place` : `${count} of them, whose leases ran out (run ${runId} the longest), hold their places`;
  return `${limit}: ${lapsed} until a live worker that can run ${them} takes ${them} over, or an operator cancels ${them} (pitwall cancel ${runId})`;
}
