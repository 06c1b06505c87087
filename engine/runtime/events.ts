import type { DiffEntry } from "../state/diff.js";
import type { InterruptKind, PauseReason, RunError, RunStatus, TaskWait } from "../store/records.js";

/**
 * Every transition of a run, a task, an interrupt or the state produces one of these events.
 * Payloads stay small; large values go to artifacts and the event holds a reference.
 */
export interface EventPayloads {
  /** A signal was sent to the run; `for` names the node it let go on, if one waited for it. */
  "run.signaled": { signalId: string; name: string; for?: string };
  /** `signal`: the signal the run was started to take (signal-with-start); `carriedSignals`: how many signals a fork carried from its source into its inbox; `schedule`, `scheduledFor`: the schedule that started it, for which time (`backfill`: started by a backfill, after that time). */
  "run.created": { workflow: string; version: string; parentRunId?: string; forkOf?: { runId: string; checkpointId: string }; reason?: string; deadlineAt?: number; signal?: { id: string; name: string }; carriedSignals?: number; request?: string; schedule?: string; scheduledFor?: number; backfill?: boolean };
  "run.claimed": { worker: string; fence: number; recovered: boolean };
  "run.released": { status: RunStatus; wakeAt?: number; waitingOn?: string; why: string };
  "run.paused": { reason: PauseReason; nodes: string[]; interrupts?: string[] };
  "run.resumed": { by: string };
  /** An operator moved the run, not ended, onto another version of its workflow; `checkpointId`: the state edit that fitted its state to the new schema. */
  "run.upgraded": { from: string; to: string; reason?: string; checkpointId?: string };
  "run.succeeded": { steps: number };
  "run.failed": { error: RunError };
  "run.canceled": { reason: string };
  "step.completed": { step: number; checkpointId: string; nodes: string[]; keys: string[]; next: string[] };
  "task.scheduled": { node: string; index?: number; why: "retry" | "resume" | "operator" | "queued" | "signal"; notBefore?: number };
  /** `inputChanged`: a durable call whose recorded success is not handed back, as what it depends on changed since (`dependsOn`). */
  "task.started": { node: string; attempt: number; index?: number; call?: string; inputChanged?: boolean };
  "task.succeeded": { node: string; attempt: number; durationMs: number; route?: string; keys: string[]; skipped?: boolean; call?: string };
  /** `caught`: the targets its node's catch leads to, having taken the failure; `uncaught`: why the catch could not. */
  "task.failed": { node: string; index?: number; attempt: number; error: string; code?: string; willRetry: boolean; retryInMs?: number; call?: string; caught?: string[]; tolerate?: number | string; uncaught?: string };
  "task.interrupted": { node: string; waitingFor: TaskWait };
  "task.canceled": { node: string; reason: string; call?: string };
  /** `asksAgain`: the interrupt, answered on another state, that this one asks again (`ctx.interrupt`). */
  "interrupt.created": { interruptId: string; kind: InterruptKind; node: string; question?: string; asksAgain?: string; deadline?: number };
  "interrupt.resolved": { interruptId: string; decision: string; reason?: string; timedOut?: true };
  "state.edited": { checkpointId: string; diff: DiffEntry[]; truncated?: boolean; asNode?: string };
  "operator.requested": { commandId: string; command: string; args: Record<string, unknown>; reason?: string };
  "operator.accepted": { commandId: string; command: string; effect: string };
  "operator.refused": { commandId: string; command: string; reason: string };
  "node.progress": { node: string; fraction?: number; message?: string };
  "node.log": { node: string; level: "debug" | "info" | "warn" | "error"; message: string; data?: unknown };
}

export type EventType = keyof EventPayloads;

export const EVENT_TYPES = [
  "run.created",
  "run.claimed",
  "run.released",
  "run.paused",
  "run.resumed",
  "run.upgraded",
  "run.signaled",
  "run.succeeded",
  "run.failed",
  "run.canceled",
  "step.completed",
  "task.scheduled",
  "task.started",
  "task.succeeded",
  "task.failed",
  "task.interrupted",
  "task.canceled",
  "interrupt.created",
  "interrupt.resolved",
  "state.edited",
  "operator.requested",
  "operator.accepted",
  "operator.refused",
  "node.progress",
  "node.log",
] as const satisfies readonly EventType[];
