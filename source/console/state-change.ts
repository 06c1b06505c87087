import { diffStates, readState, type EventRecord, type InterruptRecord, type RunRecord, type Store } from "../../engine/index.js";
import { clean, clock } from "./text.js";

/** How a run's state moved on since an interrupt was asked. */
export interface StateChange {
  /** The checkpoint the question was asked at, and the run's checkpoint now. */
  from: number;
  to: number;
  /** The paths that differ (`$.budget`). */
  paths: string[];
  /** Who edited it last and when ("operator:bob at 15:40:02"), when an operator's edit made the head. */
  by?: string;
}

/**
 * What changed in `run`'s state since `interrupt` was asked, if anything: an operator's edit while
 * the question was pending. The node's answer covers what it asked about: with the state changed,
 * a node whose request shows other values now asks again (a new interrupt) once it is answered.
 */
export async function stateChangeSince(store: Store, interrupt: InterruptRecord, run: RunRecord): Promise<StateChange | undefined> {
  const asked = interrupt.headN;
  if (interrupt.status !== "pending" || asked === undefined || run.headN <= asked) return undefined;
  const [before, now, [edited]] = await Promise.all([
    readState(store, run.id, asked),
    readState(store, run.id, run.headN),
    store.readEvents({ runId: run.id, types: ["state.edited"], last: 1 }),
  ]);
  const paths = diffStates(before, now).map((d) => clean(d.path));
  if (paths.length === 0) return undefined;
  const byEdit = edited !== undefined && (edited as EventRecord<"state.edited">).payload.checkpointId === run.head;
  return { from: asked, to: run.headN, paths, ...(byEdit ? { by: `${clean(edited.actor)} at ${clock(edited.time)}` } : {}) };
}

/** One line: `the state changed since it was asked (checkpoint 3 → 4, by operator:bob at 15:40:02: $.budget)`. */
export function stateChangeText(change: StateChange): string {
  const paths = change.paths.length > 3 ? `${change.paths.slice(0, 3).join(", ")} and ${change.paths.length - 3} more` : change.paths.join(", ");
  return `the state changed since it was asked (checkpoint ${change.from} → ${change.to}${change.by ? `, by ${change.by}` : ""}: ${paths})`;
}
