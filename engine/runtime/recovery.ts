import type { DurableCalls } from "./calls.js";
import { askAboutAtMostOnce, failTask } from "./outcomes.js";
import { NOT_SAVED, WORKER_LOST } from "./retry.js";
import type { RunState } from "./run-state.js";
import { settle } from "./step.js";
import { closeAttempt, isParked, lostWithWorker, transitionTask } from "./transitions.js";

/**
 * What taking a run over did with the nodes its lost owner left running: they run again, or wait
 * for an operator's decision (an at-most-once node; every node of a run paused as poison).
 */
export interface TakenOver {
  again: string[];
  waiting: string[];
  poison: boolean;
}

/**
 * What a newly claimed run's executor does first with the step it finds. A run whose workers
 * keep dying pauses as poison; otherwise the tasks and durable calls a lost owner left running
 * (`recovered`) fail to run again, and parked tasks get another look. Says, for a take-over, what
 * became of the nodes left running; when the run was quarantined (`poison`), that batch is
 * committed and the execution ends.
 */
export function takeOver(rs: RunState, calls: DurableCalls, recovered: boolean, maxRecoveries: number): TakenOver | undefined {
  if (recovered && (rs.run.lostInARow ?? 0) > maxRecoveries) return { again: [], waiting: quarantine(rs), poison: true };
  let taken: TakenOver | undefined;
  if (recovered) {
    calls.recoverLost(rs.batch, Date.now());
    taken = recoverLostTasks(rs, calls);
  }
  resumeParked(rs);
  return taken;
}

/**
 * The previous owner died: its running tasks failed ("worker lost") and run again, without
 * spending their retries; an at-most-once task is interrupted for an operator to decide instead.
 */
function recoverLostTasks(rs: RunState, calls: DurableCalls): TakenOver {
  const at = Date.now();
  const taken: TakenOver = { again: [], waiting: [], poison: false };
  for (const task of rs.tasks.values()) {
    if (task.status !== "running") continue;
    if (!rs.nodeDefinition(task.node)?.atMostOnce) {
      failTask(rs, task, new Error(`worker lost while running "${task.node}" (attempt ${task.attempts.length})`), WORKER_LOST, at);
      taken.again.push(task.node);
      continue;
    }
    const attempts = closeAttempt(task, "interrupted", at, "worker lost", WORKER_LOST);
    askAboutAtMostOnce(rs, { ...task, attempts }, at, "its worker was lost while it ran", calls.madeBy(task));
    taken.waiting.push(task.node);
  }
  return taken;
}

/**
 * A run whose workers keep dying (it may be what kills them) pauses as `poison`: its running
 * tasks fail without a retry, so an operator decides whether to retry them. Returns their nodes.
 */
function quarantine(rs: RunState): string[] {
  const at = Date.now();
  const lost = [...rs.tasks.values()].filter((t) => t.status === "running");
  for (const task of lost) {
    const message = `worker lost while running "${task.node}"; run paused as poison after ${rs.run.lostInARow ?? rs.run.recoveries} workers lost in a row without a step committed`;
    const failed = lostWithWorker(task, at, message);
    rs.setTask(failed, rs.events.task(failed, "task.failed", { node: task.node, attempt: task.attempts.length, error: message, code: WORKER_LOST, willRetry: false }));
  }
  const nodes = lost.map((t) => t.node);
  rs.pause("poison", nodes);
  return nodes;
}

/** Tasks parked on a timer or a child run get another look whenever the run is claimed. */
function resumeParked(rs: RunState): void {
  for (const task of rs.tasks.values()) {
    if (isParked(task)) {
      const resumed = transitionTask(task, "pending", { waitingFor: null });
      rs.setTask(resumed, rs.events.task(resumed, "task.scheduled", { node: task.node, why: "resume" }));
    }
  }
}

/**
 * An error of this process's own — not the store's — while it prepared or saved a step (a bug,
 * a value the store cannot write): asking again would meet it again. Left to its lease, the
 * run would be taken over, its tasks run again as if their worker had died (repeating their
 * side effects) until it paused as poison. So it is recorded, in the run as read again from the
 * store: the tasks that were running fail with it, not retried, and the run pauses for an
 * operator (or fails, by the node's `onExhausted`).
 */
export function failUnsaved(rs: RunState, calls: DurableCalls, message: string): void {
  const now = Date.now();
  const running = [...rs.tasks.values()].filter((t) => t.status === "running");
  for (const task of running) {
    failTask(rs, task, new Error(message), NOT_SAVED, now);
    calls.closeRunning(task.id, rs.batch, "its node's step could not be saved", now);
  }
  if (running.length > 0) settle(rs, Infinity);
  else rs.pause("retries-exhausted", rs.run.current, { code: NOT_SAVED, message });
}
