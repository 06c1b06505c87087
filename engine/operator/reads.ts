import { NotFoundError } from "../errors.js";
import { diffStates, type DiffEntry } from "../state/diff.js";
import { readState } from "../state/read.js";
import type { CheckpointRecord } from "../store/records.js";
import type { Store } from "../store/store.js";

export type CheckpointRef = string | number;

/** A checkpoint by id, or by its number within the run. */
export async function findCheckpoint(store: Store, runId: string, ref: CheckpointRef): Promise<CheckpointRecord> {
  const text = String(ref);
  const id = /^\d+$/.test(text) ? `${runId}:${text}` : text;
  const found = await store.getCheckpoint(id);
  if (!found || found.runId !== runId) throw new NotFoundError("checkpoint", `${text} of run ${runId}`);
  return found;
}

/** The structural diff between the states of two checkpoints (`from` null: against an empty state). */
/** Where a checkpoint is: what reading its state needs (a record, or a summary of one). */
type CheckpointPlace = Pick<CheckpointRecord, "runId" | "n">;

export async function diffCheckpoints(store: Store, from: CheckpointPlace | null, to: CheckpointPlace): Promise<DiffEntry[]> {
  const before = from ? await readState(store, from.runId, from.n) : {};
  return diffStates(before, await readState(store, to.runId, to.n));
}
