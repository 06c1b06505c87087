import { useEffect, useRef } from "react";
import {
  type EventPayloads,
  type EventRecord,
  errorMessage,
  type CheckpointSummary,
  type InterruptRecord,
  type RunRecord,
  type Store,
  type TaskRecord,
  type WorkflowDefinition,
} from "../../../engine/index.js";
import { useServices } from "../context.js";
import { serialLoad } from "./serial-load.js";
import { useRemembered } from "./use-remembered.js";
import type { ConsoleData } from "../data.js";

export interface RunDetail {
  run: RunRecord;
  definition: WorkflowDefinition | undefined;
  /** Every task of the run, by step. */
  tasks: TaskRecord[];
  /** Oldest first. */
  checkpoints: CheckpointSummary[];
  /** The run's interrupts, pending and resolved, oldest first. */
  interrupts: InterruptRecord[];
  /** The last progress each running node reported (0..1). */
  progress: ReadonlyMap<string, number>;
}

/**
 * Reads what the run view shows, again whenever the live feed reports a change to the run.
 * Only what can have changed is read: new checkpoints, and the tasks of the steps since.
 * Undefined: the run is not in the store (deleted).
 */
export async function readRunDetail(store: Store, data: ConsoleData, runId: string, previous?: RunDetail): Promise<RunDetail | undefined> {
  const run = await store.getRun(runId);
  if (!run) return undefined;
  const lastN = previous?.checkpoints[previous.checkpoints.length - 1]?.n;
  // The tasks of the step in progress when last read, and of the steps since; all of them again
  // should the run's step be lower than it was.
  const fromStep = previous && run.step >= previous.run.step ? previous.run.step + 1 : undefined;
  const [definition, newCheckpoints, tasks, interrupts] = await Promise.all([
    data.workflow(run.version),
    store.listCheckpointSummaries(runId, lastN === undefined ? {} : { afterN: lastN }),
    fromStep !== undefined ? tasksSince(store, runId, fromStep, previous!.tasks) : store.listTasks(runId),
    store.listInterrupts({ runId }),
  ]);
  const checkpoints = previous && lastN !== undefined ? [...previous.checkpoints, ...newCheckpoints] : newCheckpoints;
  return { run, definition, tasks, checkpoints, interrupts, progress: previous?.progress ?? (await lastProgress(store, run)) };
}

/**
 * Events read back for what running nodes last reported: their reports are among the run's latest
 * events, and a filtered read of a long run that has none would read its whole history.
 */
const PROGRESS_LOOKBACK = 500;

/** What running nodes last reported before the console looked: a long node shows its percentage at once. */
async function lastProgress(store: Store, run: RunRecord): Promise<Map<string, number>> {
  const progress = new Map<string, number>();
  if (run.status !== "running") return progress;
  for (const event of await store.readEvents({ runId: run.id, last: PROGRESS_LOOKBACK })) {
    if (event.type === "node.progress") takeProgress(progress, event);
  }
  return progress;
}

function takeProgress(progress: Map<string, number>, event: EventRecord): void {
  const { node, fraction } = event.payload as EventPayloads["node.progress"];
  if (typeof fraction === "number") progress.set(node, fraction);
}

async function tasksSince(store: Store, runId: string, from: number, kept: TaskRecord[]): Promise<TaskRecord[]> {
  return [...kept.filter((t) => t.step < from), ...(await store.listTasks(runId, { afterStep: from - 1 }))];
}

export interface RunDetailState {
  detail?: RunDetail;
  error?: string;
  /** The run is no longer in the store: deleted by another process (`pitwall delete`, `prune`). */
  deleted?: true;
}

export function useRunDetail(runId: string): RunDetailState {
  const { store, feed, data } = useServices();
  // Kept while a page is stacked on the view: coming back shows it at once, then brings it up to date.
  const [state, setState] = useRemembered<RunDetailState>(`run-detail:${runId}`, {});
  const kept = useRef(state.detail);
  useEffect(() => {
    let alive = true;
    let detail: RunDetail | undefined = kept.current;
    const load = serialLoad(
      async () => {
        const read = await readRunDetail(store, data, runId, detail);
        if (!read) {
          if (alive) setState((s) => ({ ...s, deleted: true }));
          return false;
        }
        detail = read;
        if (alive) setState({ detail });
      },
      (error) => setState((s) => ({ ...s, error: errorMessage(error) })),
      () => alive,
    );
    load();
    const stop = feed.listen((change) => {
      if (!change.runs.has(runId)) return;
      if (detail) {
        const progress = new Map(detail.progress);
        for (const event of change.events) {
          if (event.runId !== runId) continue;
          if (event.type === "node.progress") takeProgress(progress, event);
          // A new attempt starts from nothing: the last one's percentage is not its progress.
          else if (event.type === "task.started") progress.delete((event.payload as EventPayloads["task.started"]).node);
        }
        detail = { ...detail, progress };
      }
      load();
    });
    // Deleting writes no event: a run that leaves the console's list (read again at its recount)
    // is looked for in the store, to tell a deletion from a list that is only capped.
    let listed = data.snapshot().runs.has(runId);
    const stopWatching = data.subscribe(() => {
      const now = data.snapshot().runs.has(runId);
      if (listed && !now) load();
      listed = now;
    });
    return () => {
      alive = false;
      stop();
      stopWatching();
    };
  }, [store, feed, data, runId]);
  return state;
}
