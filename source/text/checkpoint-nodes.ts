import { SKIPPED, type CheckpointSummary, type TaskRecord } from "../../engine/index.js";

/**
 * The nodes a checkpoint lists (the CLI's NODES column, the console's): what its step ran, a node
 * an operator skipped marked so; an operator's edit names the node it was made as (its write,
 * whose edges are followed next) or at (an interrupt answered with it, a retry's patch): not the
 * node's own write either way.
 */
export function checkpointNodes(c: CheckpointSummary, skipped: ReadonlyMap<number, ReadonlySet<string>>): string[] {
  if (c.source === "update") return c.nodes.map((node) => (c.control.finished.some((f) => f.node === node && f.asNode) ? `as ${node}` : `at ${node}`));
  const skips = c.source === "loop" ? skipped.get(c.step) : undefined;
  return c.nodes.map((node) => (skips?.has(node) ? `${node} (skipped)` : node));
}

/** The nodes an operator skipped (they did not run), by step. */
export function skippedByStep(tasks: readonly TaskRecord[]): Map<number, Set<string>> {
  const byStep = new Map<number, Set<string>>();
  for (const task of tasks) {
    if (task.parent !== null || task.attempts.at(-1)?.code !== SKIPPED) continue;
    byStep.set(task.step, (byStep.get(task.step) ?? new Set()).add(task.node));
  }
  return byStep;
}
