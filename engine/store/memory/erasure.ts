import type { RunStorage } from "../records.js";
import { checkDeletion } from "../rules.js";
import type { MemoryTables } from "./tables.js";

/** What a run holds in the memory store (`Store.runStorage`). */
export function runStorage(t: MemoryTables, runId: string): RunStorage {
  t.mustGetRun(runId);
  const checkpoints = (t.checkpoints.get(runId) ?? []).reduce((sum, c) => sum + c.bytes, 0);
  const events = (t.eventsByRun.get(runId) ?? []).reduce((sum, e) => sum + JSON.stringify(e.payload).length + 64, 0);
  const artifacts = [...t.artifacts.values()].filter((a) => a.runs.has(runId)).reduce((sum, a) => sum + a.data.byteLength, 0);
  return { checkpoints, events, artifacts, total: checkpoints + events + artifacts };
}

/** Deletes an ended top-level run with its child runs and all of theirs (`Store.deleteRun`). */
export function deleteRun(t: MemoryTables, runId: string): string[] {
  const run = t.mustGetRun(runId);
  const tree = [run];
  for (let i = 0; i < tree.length; i++) for (const r of t.runs.values()) if (r.parentRunId === tree[i]!.id) tree.push(r);
  checkDeletion(run, tree);
  const ids = new Set(tree.map((r) => r.id));
  for (const id of ids) {
    t.runs.delete(id);
    for (const c of t.checkpoints.get(id) ?? []) if (c) t.checkpointIndex.delete(c.id);
    t.checkpoints.delete(id);
    for (const taskId of t.tasksByRun.get(id)?.keys() ?? []) t.tasks.delete(taskId);
    t.tasksByRun.delete(id);
    for (const interruptId of t.interruptsByRun.get(id)?.keys() ?? []) t.interrupts.delete(interruptId);
    t.interruptsByRun.delete(id);
    t.eventsByRun.delete(id);
  }
  for (const [id, command] of t.commands) if (ids.has(command.runId)) t.commands.delete(id);
  let kept = 0;
  for (const event of t.events) if (!ids.has(event.runId)) t.events[kept++] = event;
  t.events.length = kept;
  for (const [sha256, artifact] of t.artifacts) {
    for (const id of ids) artifact.runs.delete(id);
    if (artifact.runs.size === 0) t.artifacts.delete(sha256);
  }
  return [...ids];
}
