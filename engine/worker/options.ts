import type { StoreError } from "../errors.js";
import type { ExecutionEnd, ExecutorOptions } from "../runtime/executor.js";
import type { SnapshotPolicy } from "../state/snapshot.js";
import type { RunStatus } from "../store/records.js";
import type { LeftBehind } from "./left-behind.js";
import type { WorkerNotice } from "./notices.js";

export interface WorkerOptions extends Partial<Omit<ExecutorOptions, "workerId" | "snapshotPolicy">> {
  /**
   * When a checkpoint also stores a snapshot: every `every` checkpoints (default 64: reading any
   * state folds at most that many deltas) or once the deltas since the last one outgrow both the
   * state and `minBytes`.
   */
  snapshotPolicy?: Partial<SnapshotPolicy>;
  /** Shown as `worker:<id>` in events; default host-pid-random. */
  id?: string;
  /** How many runs this worker executes at once. */
  concurrency?: number;
  /** Without notifications, how often to look for due timers and expired leases. */
  pollMs?: number;
  /**
   * Only runs of these workflows (by name), and of the sub-workflows their runs start; every
   * workflow this process can run when absent.
   */
  workflows?: readonly string[];
  /**
   * Deletes the top-level runs that ended longer ago than this (ms), with their child runs and
   * everything of theirs, soon after `start()` and every ten minutes (`pruneRuns`).
   */
  retainMs?: number;
  /** Called when a run's execution ends in this worker (for logs). */
  onRunEnd?: (runId: string, end: ExecutionEnd | { error: string }) => void;
  /**
   * What the worker has to say, each with a level and a kind (the store failing and answering
   * again, a run taken over, a drain, a node abandoned...). Without it, `onError` hears of each.
   */
  onNotice?: (notice: WorkerNotice) => void;
  /** Called when the worker itself hits a problem (the store unreachable...); it keeps trying. */
  onError?: (message: string) => void;
  /**
   * Called once when the worker stops itself because its store is gone or damaged (the SQLite
   * file deleted, replaced or corrupt under it: `StoreError.gone`, `damaged`). It claims nothing
   * more (`stats().stopping`); the runs it held are left to their leases. Without it, a notice
   * of kind `store-gone` (level `error`) says so, to `onNotice` (else `onError`).
   */
  onStoreGone?: (error: StoreError) => void;
  /**
   * Called once per workflow version (and per queued/orphaned) whose waiting runs this worker
   * cannot take, with why (an action no module exports, code changed since the run started):
   * looked for soon after `start()` and every 30 s. Without it, `onError` hears of it.
   */
  onLeftBehind?: (left: LeftBehind) => void;
}

/** How a worker stops (`Worker.stop`). */
export interface StopOptions {
  /**
   * How long the nodes running now may take to finish, their results committed, before they are
   * aborted (default 0: at once). Nothing new is started meanwhile; each run is released for
   * another worker once its nodes are done.
   */
  drainMs?: number;
}

/** What a worker has done since it started, for metrics. */
export interface WorkerStats {
  /** Runs claimed, and of them the ones taken over from a lost worker. */
  claimed: number;
  takenOver: number;
  /** Executions that ended here, by the run's status then (`queued`: released for another worker). */
  ended: Record<RunStatus, number>;
  /** Executions that ended on an error of the executor itself. */
  errors: number;
  /** Runs executing now, and their nodes running now. */
  running: number;
  nodesRunning: number;
  /** Store calls that got no answer, and when the store last answered (epoch ms). */
  storeFailures: number;
  lastStoreAnswer: number | undefined;
  /** Stopping: claiming nothing more. */
  stopping: boolean;
}

/** What a worker uses for the options it is not given. */
export const WORKER_DEFAULTS = {
  concurrency: 16,
  leaseMs: 15_000,
  killGraceMs: 5_000,
  pollMs: 1_000,
  progressIntervalMs: 250,
  holdBackoffMs: 5_000,
  maxRecoveries: 5,
};
