import { secondsPast } from "../seconds-past.js";
import type { TakenOver } from "../runtime/recovery.js";
import type { AbortCause } from "../runtime/signals.js";
import type { TaskRecord } from "../store/records.js";

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
  /** Its store file was deleted or replaced, or is damaged: it stopped for good (without `onStoreGone`). */
  | "store-gone"
  /** A run's execution here ended on an error of the executor itself (without `onRunEnd`). */
  | "run-error"
  /** It took over a run whose worker's lease ran out. */
  | "took-over"
  /** It regained its store after a silence longer than a lease, and takes over no run for a lease. */
  | "takeovers-held"
  /** Runs wait that it cannot run (an action no module exports, code changed since they started). */
  | "left-behind"
  /** A workflow it is limited to (`workflows`) is neither stored nor registered: a misspelled name, most likely. */
  | "unknown-workflow"
  /** Stopping: it claims nothing more and waits for its running nodes. */
  | "draining"
  /** Every node it waited for finished, or the drain time ran out and the rest are aborted. */
  | "drained"
  /** A node ignored its abort signal through the grace period and was left running. */
  | "abandoned"
  /** Another live process writes heartbeats with this worker's id. */
  | "duplicate-id"
  /** Ended runs older than the retention were deleted (or deleting them failed). */
  | "pruned"
  /** It answered a fork whose recorder stopped before answering it (refused: no run was made). */
  | "fork-answered"
  /**
   * It answered a command left pending on a run nobody holds: queued for a worker that let go of
   * the run before applying it, its recorder stopped (refused with why, or applied).
   */
  | "command-answered"
  /** Nobody answered an interrupt by its deadline: it gave the deadline's decision (or giving it failed). */
  | "deadline-answered"
  /** A schedule's time came: it started a run (`runId`), or started none and says why (a `warn`), or firing it failed. */
  | "schedule-fired";

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

/**
 * A run taken over from a worker whose lease ran out, and what became of the nodes it left
 * running (`taken`; unknown for a run this worker could not execute).
 */
export function tookOver(runId: string, from: string | undefined, taken?: TakenOver): WorkerNotice {
  const parts: string[] = [];
  // Each node once: a mapped node's instances are one name.
  const again = [...new Set(taken?.again)];
  const waiting = [...new Set(taken?.waiting)];
  const waits = waiting.length === 1 ? "waits" : "wait";
  if (taken?.poison) {
    parts.push(`the run paused as poison (its workers keep being lost)${waiting.length > 0 ? `: ${waiting.join(", ")} ${waits} for an operator's decision` : ""}`);
  } else {
    if (again.length > 0) parts.push(`${again.join(", ")} will run again`);
    if (waiting.length > 0) parts.push(`${waiting.join(", ")} (at-most-once) ${waits} for an operator's decision to run ${waiting.length === 1 ? "it" : "them"} again or skip`);
  }
  const what = parts.length > 0 ? `: ${parts.join("; ")}` : "";
  return { level: "warn", kind: "took-over", message: `took over run ${runId} from worker ${from ?? "(unknown)"} (lease expired)${what}`, runId, ...(from !== undefined ? { from } : {}) };
}

/**
 * The store answers again after a silence longer than a lease (`StoreContact`): the worker cannot
 * tell an outage from its own event loop held (a node computing without awaiting) or its process
 * stopped, and says so.
 */
export function takeoversHeld(silentMs: number, leaseMs: number, runs: number): WorkerNotice {
  return {
    level: "warn",
    kind: "takeovers-held",
    message: `the store answers again after ${secondsPast(silentMs)} s without an answer (the store or the network was down, or this process was held or stopped), longer than the ${leaseMs / 1000} s lease: this worker renews the leases of its ${runs} run${runs === 1 ? "" : "s"}, and for ${leaseMs / 1000} s takes over no run whose lease ran out meanwhile (its worker was most likely cut off too, and gets the time to renew it)`,
  };
}

/** A node that ignored its abort signal through the grace period. */
export function abandoned(runId: string, task: Pick<TaskRecord, "id" | "node">, cause: AbortCause, graceMs: number): WorkerNotice {
  const why = cause === "shutdown" ? "the worker stopping" : cause === "killed" ? "a kill" : cause === "canceled" ? "a cancel" : cause === "timeout" ? "its timeout" : "the lost lease";
  return {
    level: "warn",
    kind: "abandoned",
    runId,
    node: task.node,
    message: `run ${runId}: node ${task.node} (task ${task.id}) ignored its abort signal (${why}) and was abandoned after the ${graceMs / 1000} s grace; it may still be running in this process, and what it returns is discarded`,
  };
}
