import type { CompiledWorkflow } from "../graph/model.js";
import type { State } from "../state/ops.js";
import type { SnapshotPolicy } from "../state/snapshot.js";
import type { CommandRecord, RunRecord, RunStatus, TaskRecord } from "../store/records.js";
import type { Store } from "../store/store.js";
import type { TakenOver } from "./recovery.js";
import type { AbortCause } from "./signals.js";

export interface ExecutorOptions {
  workerId: string;
  leaseMs: number;
  /** How long a killed node that ignores its signal is waited for before it is abandoned. */
  killGraceMs: number;
  snapshotPolicy: SnapshotPolicy;
  /** Names of secrets, added to the default ones, whose values events and records people read never hold. */
  secretKeys: readonly string[];
  /** At most one `node.progress` event per task per this many milliseconds. */
  progressIntervalMs: number;
  /** A retry backoff longer than this releases the run (queued with a wake time) instead of holding it. */
  holdBackoffMs: number;
  /** A run taken over after lost workers more often than this pauses as `poison` instead of running again. */
  maxRecoveries: number;
}

/** What the executor needs from the engine around it. */
export interface ExecutorHost {
  readonly store: Store;
  /** The child run of a sub-workflow task for `generation`, created on first call. */
  childRun(parent: RunRecord, task: TaskRecord, child: CompiledWorkflow, input: State, generation: number): Promise<RunRecord>;
  /** Cancels a child run of a canceled run (through a command, for its audit trail). */
  cancelChild(runId: string, actor: string, reason: string): Promise<void>;
  /**
   * Answers the commands handed to an executor that it had not applied when it let go of its run
   * (ended, paused or released it), as on a run nobody holds. Never throws: one it cannot answer
   * is left pending, for a worker's look for commands left unanswered.
   */
  answerLeft(runId: string, commands: readonly CommandRecord[]): Promise<void>;
  /** A commit of the run waits for the store to answer (it is tried again), and why. */
  commitWaiting?(runId: string, error: string): void;
  /** A commit that waited went through (`through`), or was given up (the worker stopping). */
  commitSettled?(runId: string, through: boolean): void;
  /** A node ignored its abort signal through the grace period and was left running, its result to be discarded. */
  nodeAbandoned?(runId: string, task: TaskRecord, cause: AbortCause): void;
  /** It took over a run from `from`, whose lease ran out, and did that with the nodes left running (none: it applied a kill left for them first). */
  tookOver?(runId: string, from: string | undefined, taken: TakenOver | undefined): void;
}

export interface ExecutionEnd {
  /** The run's status as this execution left it (a lost lease leaves it as it was here, running). */
  status: RunStatus;
  why: string;
  /** Another worker or an operator took the run while this one had lost its lease: `why` says what became of it. */
  leaseLost?: true;
}
