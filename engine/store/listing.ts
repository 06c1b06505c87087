import type { Deadline, TaskRange } from "./store.js";
import { TERMINAL_RUN_STATUSES, type InterruptRecord, type RunRecord, type TaskRecord } from "./records.js";

// The orders and filters of the Store contract's listings, for the stores that sort and filter
// in this process (memory; Redis, once it has read the records). SQLite says the same in SQL.

/** A run's tasks: by step, then as they were created. */
export function taskOrder(a: Pick<TaskRecord, "step" | "createdAt" | "id">, b: Pick<TaskRecord, "step" | "createdAt" | "id">): number {
  return a.step - b.step || a.createdAt - b.createdAt || (a.id < b.id ? -1 : 1);
}

/** Whether a task is among those `listTasks` reads. */
export function inTaskRange(task: Pick<TaskRecord, "step">, range: TaskRange): boolean {
  if (range.step !== undefined) return task.step === range.step;
  return range.afterStep === undefined || task.step > range.afterStep;
}

/** Interrupts and commands: the oldest first. */
export function oldestFirst(a: { createdAt: number; id: string }, b: { createdAt: number; id: string }): number {
  return a.createdAt - b.createdAt || (a.id < b.id ? -1 : 1);
}

/** Whether an interrupt or a command passes a listing's filter by status and run. */
export function inFilter<S extends string>(record: { status: S; runId: string }, filter: { status?: S; runId?: string }): boolean {
  return (filter.status === undefined || record.status === filter.status) && (filter.runId === undefined || record.runId === filter.runId);
}

/**
 * The deadlines among these records (`Store.listDeadlines`), the soonest first: a pending
 * interrupt's, a run's not ended. The stores that index them keep the same ones.
 */
export function deadlinesOf(runs: Iterable<Pick<RunRecord, "id" | "status" | "deadlineAt">>, interrupts: Iterable<Pick<InterruptRecord, "id" | "status" | "deadline">>): Deadline[] {
  const found: Deadline[] = [];
  for (const run of runs) if (typeof run.deadlineAt === "number" && !TERMINAL_RUN_STATUSES.includes(run.status)) found.push({ kind: "run", id: run.id, at: run.deadlineAt });
  for (const interrupt of interrupts) if (interrupt.deadline && interrupt.status === "pending") found.push({ kind: "interrupt", id: interrupt.id, at: interrupt.deadline.at });
  return found.sort(soonestFirst);
}

export function soonestFirst(a: Deadline, b: Deadline): number {
  return a.at - b.at || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0);
}
