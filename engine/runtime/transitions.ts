import type { RunPatch, RunRecord, RunStatus, TaskRecord, TaskStatus } from "../store/records.js";
import { WORKER_LOST } from "./retry.js";

/**
 * The task state machine of DESIGN.md §2, checked in this one place. An illegal transition is
 * a bug in pitwall, never a user error, so it throws.
 */
const TASK_TRANSITIONS: Record<TaskStatus, readonly TaskStatus[]> = {
  pending: ["running", "canceled"],
  running: ["succeeded", "failed", "interrupted", "canceled"],
  failed: ["pending"],
  interrupted: ["pending", "canceled"],
  canceled: ["pending"],
  succeeded: [],
};

const RUN_TRANSITIONS: Record<RunStatus, readonly RunStatus[]> = {
  queued: ["running", "canceled"],
  running: ["running", "queued", "paused", "succeeded", "failed", "canceled"],
  paused: ["paused", "queued", "canceled"],
  failed: ["queued"],
  succeeded: [],
  canceled: [],
};

export class IllegalTransitionError extends Error {
  constructor(what: string, from: string, to: string) {
    super(`illegal ${what} transition ${from} → ${to}`);
    this.name = "IllegalTransitionError";
  }
}

export function canTransitionTask(from: TaskStatus, to: TaskStatus): boolean {
  return TASK_TRANSITIONS[from].includes(to);
}

/** A copy of the task in its new status, with `patch` applied. */
export function transitionTask(task: TaskRecord, to: TaskStatus, patch: Partial<TaskRecord> = {}): TaskRecord {
  if (!canTransitionTask(task.status, to)) throw new IllegalTransitionError(`task ${task.id}`, task.status, to);
  if (task.caught) {
    // Run again (an operator's retry before its step ended): what its catch wrote is undone.
    const { caught: _caught, ...again } = task;
    return { ...again, writes: null, ...patch, status: to };
  }
  return { ...task, ...patch, status: to };
}

export function canTransitionRun(from: RunStatus, to: RunStatus): boolean {
  return RUN_TRANSITIONS[from].includes(to);
}

/** The run patch for a status change, with the fields every such change resets. */
export function runTransition(run: Pick<RunRecord, "id" | "status" | "pausedAt" | "pausedMs">, to: RunStatus, patch: RunPatch = {}): RunPatch {
  if (!canTransitionRun(run.status, to)) throw new IllegalTransitionError(`run ${run.id}`, run.status, to);
  const now = Date.now();
  const base: RunPatch = { status: to };
  // The time it spends paused is kept apart, so that how long it ran leaves it out.
  if (to === "paused" && run.status !== "paused") base.pausedAt = now;
  if (to !== "paused" && run.status === "paused") {
    base.pausedMs = (run.pausedMs ?? 0) + Math.max(0, now - (run.pausedAt ?? now));
    base.pausedAt = null;
  }
  if (to !== "paused") base.reason = null;
  if (to !== "failed") base.error = null;
  if (to !== "queued") {
    base.wakeAt = null;
    base.waitingOn = null;
  }
  if (to !== "running") {
    base.owner = null;
    base.leaseUntil = null;
  }
  if (to === "succeeded" || to === "failed" || to === "canceled") {
    base.endedAt = now;
    base.current = [];
  }
  return { ...base, ...patch };
}

/** A task that failed and holds its step up: retried by an operator, or the run paused or failed (not one its node's catch took). */
export function failedUncaught(task: TaskRecord): boolean {
  return task.status === "failed" && task.caught !== true;
}

/** A task waiting for a person's answer to an interrupt. */
export function waitsForPerson(task: TaskRecord): boolean {
  return task.status === "interrupted" && task.waitingFor?.kind === "interrupt";
}

/** A task parked on a timer or a child run: it holds no worker, and gets another look when its run is claimed. */
export function isParked(task: TaskRecord): boolean {
  return task.status === "interrupted" && !!task.waitingFor && task.waitingFor.kind !== "interrupt";
}

/** The task's attempts with the last (open) one closed with an outcome. */
export function closeAttempt(
  task: TaskRecord,
  outcome: "succeeded" | "failed" | "interrupted" | "canceled",
  at: number,
  error?: string,
  code?: string,
): TaskRecord["attempts"] {
  return task.attempts.map((a, i) =>
    i === task.attempts.length - 1 && a.outcome === null
      ? { ...a, outcome, endedAt: at, ...(error ? { error } : {}), ...(code ? { code } : {}) }
      : a,
  );
}

/** A task, or a durable call, its worker was lost while running: failed, its attempt closed as lost. */
export function lostWithWorker(task: TaskRecord, at: number, message = "worker lost"): TaskRecord {
  return transitionTask(task, "failed", {
    attempts: closeAttempt(task, "failed", at, message, WORKER_LOST),
    error: { message, code: WORKER_LOST },
    endedAt: at,
  });
}

/** A new task, pending, with no attempt yet; its idempotency key is its id. */
export function newTaskRecord(init: Pick<TaskRecord, "id" | "runId" | "step" | "node" | "index"> & Partial<TaskRecord>): TaskRecord {
  return {
    status: "pending",
    attempts: [],
    idempotencyKey: init.id,
    writes: null,
    route: null,
    error: null,
    worker: null,
    createdAt: Date.now(),
    startedAt: null,
    endedAt: null,
    notBefore: null,
    retriesFrom: 0,
    waitingFor: null,
    parent: null,
    call: null,
    ...init,
  };
}
