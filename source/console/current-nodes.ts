import type { RunRecord, TaskRecord } from "../../engine/index.js";

const ENDED: readonly TaskRecord["status"][] = ["succeeded", "failed", "canceled"];

/**
 * Nodes of the step in progress done there: their tasks have all succeeded, or — while the run
 * goes on — all ended (a killed branch, its other branches still at work). `run.current` lists
 * the step's nodes until the whole step commits, so such a branch is still in it, though it is
 * not what the run is doing now. (A paused run's current nodes are what it waits on: a killed or
 * failed one stays.)
 */
export function doneInStep(run: RunRecord, tasks: readonly TaskRecord[]): Set<string> {
  const byNode = new Map<string, TaskRecord[]>();
  for (const task of tasks) if (task.step === run.step + 1 && task.parent === null) byNode.set(task.node, [...(byNode.get(task.node) ?? []), task]);
  const done = (t: TaskRecord) => t.status === "succeeded" || (run.status === "running" && ENDED.includes(t.status));
  return new Set([...byNode].filter(([, own]) => own.every(done)).map(([node]) => node));
}

/** The run as "now" shows it: its current nodes without those done in the step. */
export function withoutDone(run: RunRecord, done: ReadonlySet<string> | undefined): RunRecord {
  return done && done.size > 0 ? { ...run, current: run.current.filter((node) => !done.has(node)) } : run;
}
