import type { RunRecord, TaskRecord } from "../../engine/index.js";

/**
 * Nodes of the step in progress whose tasks there have all succeeded. `run.current` lists the
 * step's nodes until the whole step commits, so a parallel branch that finished is still in it:
 * it is done, not what the run is doing now.
 */
export function doneInStep(run: RunRecord, tasks: readonly TaskRecord[]): Set<string> {
  const byNode = new Map<string, TaskRecord[]>();
  for (const task of tasks) if (task.step === run.step + 1 && task.parent === null) byNode.set(task.node, [...(byNode.get(task.node) ?? []), task]);
  return new Set([...byNode].filter(([, own]) => own.every((t) => t.status === "succeeded")).map(([node]) => node));
}

/** The run as "now" shows it: its current nodes without those done in the step. */
export function withoutDone(run: RunRecord, done: ReadonlySet<string> | undefined): RunRecord {
  return done && done.size > 0 ? { ...run, current: run.current.filter((node) => !done.has(node)) } : run;
}
