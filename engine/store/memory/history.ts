import type { ChainRow } from "../../state/read.js";
import { summarizeCheckpoint, type CheckpointRecord, type CheckpointSummary, type CommandRecord, type EventRecord, type InterruptRecord, type TaskRecord } from "../records.js";
import { inFilter, inTaskRange, oldestFirst, taskOrder } from "../listing.js";
import type { EventQuery, TaskRange } from "../store.js";
import { copy, type MemoryTables } from "./tables.js";

// The memory store's reads of runs' histories: checkpoints, tasks, interrupts, commands, events.

type CheckpointRange = { limit?: number; afterN?: number };

export function listCheckpoints(t: MemoryTables, runId: string, options: CheckpointRange): CheckpointRecord[] {
  return copy(checkpointsOf(t, runId, options));
}

export function listCheckpointSummaries(t: MemoryTables, runId: string, options: CheckpointRange): CheckpointSummary[] {
  return copy(checkpointsOf(t, runId, options).map(summarizeCheckpoint));
}

function checkpointsOf(t: MemoryTables, runId: string, options: CheckpointRange): CheckpointRecord[] {
  const all = (t.checkpoints.get(runId) ?? []).filter((c) => options.afterN === undefined || c.n > options.afterN);
  return all.slice(0, options.limit ?? all.length);
}

export function checkpointRows(t: MemoryTables, runId: string, ns: readonly number[]): ChainRow[] {
  const all = t.checkpoints.get(runId) ?? [];
  return copy(ns.map((n) => all[n]).filter((c): c is CheckpointRecord => c !== undefined));
}

export function checkpointRowRange(t: MemoryTables, runId: string, fromN: number, toN: number): ChainRow[] {
  return copy((t.checkpoints.get(runId) ?? []).slice(fromN + 1, toN + 1));
}

export function listTasks(t: MemoryTables, runId: string, options: TaskRange): TaskRecord[] {
  return copy([...(t.tasksByRun.get(runId)?.values() ?? [])].filter((task) => inTaskRange(task, options)).sort(taskOrder));
}

export function listInterrupts(t: MemoryTables, filter: { status?: "pending" | "resolved"; runId?: string; limit?: number }): InterruptRecord[] {
  const all = filter.runId === undefined ? t.interrupts : (t.interruptsByRun.get(filter.runId) ?? new Map<string, InterruptRecord>());
  const list = [...all.values()].filter((i) => inFilter(i, filter)).sort(oldestFirst);
  return copy(list.slice(0, filter.limit ?? list.length));
}

export function listCommands(t: MemoryTables, filter: { runId?: string; status?: CommandRecord["status"]; limit?: number }): CommandRecord[] {
  const list = [...t.commands.values()].filter((c) => inFilter(c, filter)).sort((a, b) => a.createdAt - b.createdAt);
  return copy(list.slice(0, filter.limit ?? list.length));
}

export function readEvents(t: MemoryTables, query: EventQuery): EventRecord[] {
  const events = query.runId === undefined ? t.events : (t.eventsByRun.get(query.runId) ?? []);
  const start = lowerBound(events, query.after ?? 0);
  const matches = (e: EventRecord) => !query.types || query.types.includes(e.type);
  const out: EventRecord[] = [];
  if (query.last !== undefined) {
    for (let i = events.length - 1; i >= start && out.length < query.last; i--) if (matches(events[i]!)) out.push(events[i]!);
    out.reverse();
  } else {
    for (let i = start; i < events.length && out.length < (query.limit ?? Infinity); i++) if (matches(events[i]!)) out.push(events[i]!);
  }
  return copy(out.slice(0, query.limit ?? out.length));
}

/** The index of the first event numbered after `after` (events are kept in number order). */
function lowerBound(events: EventRecord[], after: number): number {
  let lo = 0;
  let hi = events.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (events[mid]!.seq <= after) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}
