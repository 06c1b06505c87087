import { ConflictError, NotFoundError, StaleFenceError } from "../../errors.js";
import { headFields, type CommandAnswer, type CommandRecord, type NewEvent, type RunRecord } from "../records.js";
import { alreadyAnswered, checkCommit, claimPatch, claimable, movesUpdatedAt, pickClaim, runClaimedEvent, wokenRun } from "../rules.js";
import type { Claim, ClaimOptions, Commit, CommitResult, NewRun } from "../store.js";
import { copy, type MemoryTables } from "./tables.js";

// The memory store's writes to runs: creation, claims and leases, commits, commands.

export function createRun(t: MemoryTables, init: NewRun): CommitResult {
  if (t.runs.has(init.run.id)) throw new ConflictError(`run ${init.run.id} already exists`);
  const answering = init.answering && { ...init.answering, command: pendingCommand(t, init.answering.answer.id) };
  const run = copy(init.run);
  Object.assign(run, headFields(init.checkpoint));
  t.runs.set(run.id, run);
  t.insertCheckpoint(copy(init.checkpoint));
  const events = t.appendEvents(run, init.events);
  if (!answering) return { events };
  Object.assign(answering.command, copy(answering.answer));
  return { events: [...events, ...t.appendEvents(t.mustGetRun(answering.command.runId), [answering.event])] };
}

export function claimRun(t: MemoryTables, options: ClaimOptions): Claim | undefined {
  const now = Date.now();
  const statusOf = (id: string) => t.runs.get(id)?.status;
  const running = new Map<string, number>();
  if (options.runsAtOnce) for (const run of t.runs.values()) if (run.status === "running") running.set(run.workflow, (running.get(run.workflow) ?? 0) + 1);
  const runningOf = (workflow: string) => running.get(workflow) ?? 0;
  const candidates: RunRecord[] = [];
  for (const run of t.runs.values()) if (claimable(run, now, options, statusOf, runningOf)) candidates.push(run);
  const run = pickClaim(candidates, t.lastClaimedWorkflow);
  if (!run) return undefined;
  const recovered = run.status === "running";
  const takenFrom = recovered && run.owner !== null ? run.owner : undefined;
  if (!recovered) t.lastClaimedWorkflow = run.workflow;
  const fence = ++t.fenceCounter;
  Object.assign(run, claimPatch(run, options.owner, options.leaseMs, fence, now));
  t.appendEvents(run, [runClaimedEvent(run, options.owner, fence, recovered, now)]);
  return { run: copy(run), fence, recovered, ...(takenFrom !== undefined ? { takenFrom } : {}) };
}

export function renewLease(t: MemoryTables, runId: string, owner: string, fence: number, leaseMs: number): void {
  const run = t.mustGetRun(runId);
  if (run.fence !== fence || run.owner !== owner) throw new StaleFenceError(runId, fence, run.fence);
  run.leaseUntil = Date.now() + leaseMs;
}

export function commit(t: MemoryTables, commit: Commit): CommitResult {
  const run = t.mustGetRun(commit.runId);
  if (checkCommit(run, commit, { interrupt: (id) => t.interrupts.get(id), command: (id) => t.commands.get(id) }) === "duplicate") return { events: [] };
  for (const command of commit.submit ?? []) if (t.commands.has(command.id)) throw new ConflictError(`command ${command.id} already exists`);
  const now = Date.now();
  const active = movesUpdatedAt(run.status, commit);
  run.lastCommit = commit.id;
  if (commit.fenceOut) run.fence = ++t.fenceCounter;
  if (commit.run) Object.assign(run, copy(commit.run));
  if (commit.checkpoint) {
    const checkpoint = copy(commit.checkpoint);
    t.insertCheckpoint(checkpoint);
    Object.assign(run, headFields(checkpoint));
  }
  for (const task of commit.tasks ?? []) t.keepTask(copy(task));
  for (const interrupt of commit.interrupts ?? []) t.keepInterrupt(copy(interrupt));
  for (const command of commit.submit ?? []) t.commands.set(command.id, copy(command));
  for (const answer of commit.commands ?? []) Object.assign(t.commands.get(answer.id)!, copy(answer));
  for (const id of commit.wake ?? []) {
    const waiting = t.runs.get(id);
    const woken = waiting && wokenRun(waiting, now);
    if (woken) Object.assign(waiting, woken);
  }
  run.pendingInterrupts = [...(t.interruptsByRun.get(run.id)?.values() ?? [])].filter((i) => i.status === "pending").length;
  if (active) run.updatedAt = now;
  return { events: t.appendEvents(run, commit.events ?? []) };
}

export function submitCommand(t: MemoryTables, command: CommandRecord, event: NewEvent): CommitResult {
  const run = t.mustGetRun(command.runId);
  if (t.commands.has(command.id)) throw new ConflictError(`command ${command.id} already exists`);
  t.commands.set(command.id, copy(command));
  return { events: t.appendEvents(run, [event]) };
}

export function answerCommand(t: MemoryTables, answer: CommandAnswer, event: NewEvent): CommitResult {
  const command = pendingCommand(t, answer.id);
  Object.assign(command, copy(answer));
  return { events: t.appendEvents(t.mustGetRun(command.runId), [event]) };
}

function pendingCommand(t: MemoryTables, id: string): CommandRecord {
  const command = t.commands.get(id);
  if (!command) throw new NotFoundError("command", id);
  if (command.status !== "pending") throw alreadyAnswered(id, command.status);
  return command;
}
