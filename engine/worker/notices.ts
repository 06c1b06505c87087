/**
 * What a worker tells its operator, besides the runs that end in it (`onRunEnd`): one kind per
 * thing that happens, so that a log pipeline can select them, and a level that says whether
 * someone should look (`error`), may want to (`warn`) or not (`info`).
 */
export type WorkerNoticeKind =
  /** The store stopped answering (claims, commits or the event subscription fail; it keeps trying). */
  | "store-failing"
  /** The store answers again. */
  | "store-recovered"
  /** It took over a run whose worker's lease ran out. */
  | "took-over"
  /** It regained its store after a silence longer than a lease, and takes over no run for a lease. */
  | "takeovers-held"
  /** Runs wait that it cannot run (an action no module exports, code changed since they started). */
  | "left-behind"
  /** Stopping: it claims nothing more and waits for its running nodes. */
  | "draining"
  /** Every node it waited for finished, or the drain time ran out and the rest are aborted. */
  | "drained"
  /** A node ignored its abort signal through the grace period and was left running. */
  | "abandoned"
  /** Another live process writes heartbeats with this worker's id. */
  | "duplicate-id"
  /** Ended runs older than the retention were deleted (or deleting them failed). */
  | "pruned";

export interface WorkerNotice {
  level: "info" | "warn" | "error";
  kind: WorkerNoticeKind;
  message: string;
  /** The run it is about, if one. */
  runId?: string;
  /** The node it is about, if one. */
  node?: string;
  /** For `took-over`, the worker whose lease ran out. */
  from?: string;
}
