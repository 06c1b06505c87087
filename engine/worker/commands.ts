import { ConflictError, NotFoundError, ValidationError, isPitwallError } from "../errors.js";
import { EventFactory } from "../runtime/event-factory.js";
import { Batch } from "../runtime/batch.js";
import { closeAttempt, failedUncaught, isParked, lostWithWorker, runTransition, transitionTask } from "../runtime/transitions.js";
import { WORKER_LOST } from "../runtime/retry.js";
import { DEADLINE_ACTOR } from "../runtime/deadlines.js";
import { TERMINAL_RUN_STATUSES, type CheckpointRecord, type CommandRecord, type InterruptRecord, type RunRecord, type TaskRecord } from "../store/records.js";
import { editCheckpoint, prepareResolve, prepareUpdate, resumeIfPaused } from "./command-edits.js";
import { refuse, workerLost, type Prepared, type RunView } from "./command-view.js";
import { prepareSignal } from "./signal-command.js";

/**
 * Decides what an operator command does to a run, as one batch of writes. Shared by the worker
 * that owns the run and by the operator's process when nobody does, so both behave the same.
 */
export async function prepareCommand(command: CommandRecord, view: RunView): Promise<Prepared> {
  const events = new EventFactory(view.run.id, command.actor, view.secretKeys);
  try {
    switch (command.type) {
      case "resolve":
        return operatorActed(view, await prepareResolve(command, view, events));
      case "update":
        return operatorActed(view, await prepareUpdate(command, view, events));
      case "retry":
        return operatorActed(view, prepareRetry(command, view, events));
      case "break":
      case "unbreak":
        return prepareBreak(command, view);
      case "kill":
        return prepareOrphanKill(command, view, events);
      case "cancel":
        return prepareCancel(command, view, events);
      case "fork":
      case "upgrade":
        return refuse(new ConflictError(`${command.type} is applied by the operator, not on the run`));
      case "signal":
        return prepareSignal(command, view, events);
    }
  } catch (error) {
    if (isPitwallError(error)) return refuse(error);
    throw error;
  }
}

/** An operator who answers, edits or retries has looked at the run: lost workers count from zero again. */
function operatorActed(view: RunView, prepared: Prepared): Prepared {
  if (prepared.ok && (view.run.lostInARow ?? 0) > 0) prepared.batch.patchRun({ lostInARow: 0 });
  return prepared;
}

/**
 * The nodes that run when `task` of the step in progress is retried: it, and the step's tasks
 * still waiting to start. Siblings that failed, were canceled or wait on an interrupt do not:
 * each is retried (or answered) on its own.
 */
export function nodesRunOnRetry(stepTasks: readonly Pick<TaskRecord, "id" | "node" | "status" | "parent">[], task: Pick<TaskRecord, "id">): string[] {
  // A node's durable calls (an agent's model and tool calls) are part of it, not siblings.
  const again = stepTasks.filter((t) => t.parent === null && (t.id === task.id || t.status === "pending")).map((t) => t.node);
  return [...new Set(again)].sort();
}

function prepareRetry(command: CommandRecord, view: RunView, events: EventFactory): Prepared {
  const taskId = command.args.taskId as string;
  const task = view.tasks.find((t) => t.id === taskId);
  if (!task) return refuse(new NotFoundError("task", `${taskId} in the current step of run ${view.run.id}`));
  const lost = task.status === "running" && workerLost(view);
  if (task.status !== "failed" && task.status !== "canceled" && !lost) {
    return refuse(new ConflictError(`task ${task.id} is ${task.status}; only failed or canceled tasks can be retried`));
  }
  if (view.run.status === "succeeded" || view.run.status === "canceled") {
    return refuse(new ConflictError(`run ${view.run.id} has ended (${view.run.status})`));
  }
  const batch = new Batch();
  let checkpoint: CheckpointRecord | undefined;
  if (command.args.patch !== undefined) {
    checkpoint = editCheckpoint(view, command.args.patch, command.actor, [task.node], view.head.control, batch, events);
  }
  // A task its lost worker left running fails as a claim's recovery would fail it, and is retried
  // as the operator's decision, at-most-once nodes too.
  const from = lost ? loseTask(task, batch, events) : task;
  const retried = transitionTask(from, "pending", { error: null, notBefore: null, endedAt: null, retriesFrom: task.attempts.length });
  batch.task(retried, events.task(retried, "task.scheduled", { node: task.node, why: "operator" }));
  if (view.run.status === "failed") {
    batch.patchRun(runTransition(view.run, "queued", { endedAt: null }));
    batch.event(events.run("run.resumed", { by: command.actor }));
  } else {
    resumeIfPaused(view, view.pending.length, batch, events, command.actor);
  }
  const willRun = nodesRunOnRetry(view.tasks, task);
  const left = [...new Set(view.tasks.filter((t) => t.parent === null && t.id !== task.id && (failedUncaught(t) || t.status === "canceled")).map((t) => t.node))].sort();
  return {
    ok: true,
    batch,
    effect: `task ${task.id} will run again (step ${task.step}: ${willRun.join(", ")})${left.length > 0 ? `; still to retry in that step: ${left.join(", ")}` : ""}${lost ? `; ${leftRunningBy(view)} it` : ""}`,
    writesState: checkpoint !== undefined,
    result: { willRun, ...(checkpoint ? { checkpointId: checkpoint.id } : {}) },
  };
}

function prepareBreak(command: CommandRecord, view: RunView): Prepared {
  const node = command.args.node as string;
  if (!Object.hasOwn(view.definition.nodes, node)) return refuse(new ValidationError(`workflow ${view.definition.name} has no node "${node}"`));
  if (view.run.status === "succeeded" || view.run.status === "failed" || view.run.status === "canceled") {
    return refuse(new ConflictError(`run ${view.run.id} has ended (${view.run.status})`));
  }
  const set = new Set(view.run.breakpoints);
  // Setting one that is set, or removing one that is not, is done already (a script may ensure either).
  if (command.type === "break" ? set.has(node) : !set.has(node)) {
    const effect = command.type === "break" ? `breakpoint before "${node}" was set already` : `run ${view.run.id} has no breakpoint on "${node}"; nothing to remove`;
    return { ok: true, batch: new Batch(), effect, writesState: false };
  }
  if (command.type === "break") set.add(node);
  else set.delete(node);
  const batch = new Batch().patchRun({ breakpoints: [...set].sort() });
  // A run already paused at the breakpoint stays so (as in a debugger): its interrupt says go on.
  const stoppedHere = view.pending.find((i) => i.kind === "breakpoint" && i.node === node);
  const effect =
    command.type === "break"
      ? `breakpoint set before "${node}"`
      : `breakpoint on "${node}" removed${stoppedHere ? `; the run is still paused at it until interrupt ${stoppedHere.id} is answered` : ""}`;
  return { ok: true, batch, effect, writesState: false };
}

/** Kill on a run nobody executes: tasks left `running` by a lost worker become canceled. */
function prepareOrphanKill(command: CommandRecord, view: RunView, events: EventFactory): Prepared {
  const taskId = command.args.taskId as string | undefined;
  if (TERMINAL_RUN_STATUSES.includes(view.run.status)) return refuse(new ConflictError(`run ${view.run.id} has ended (${view.run.status})`));
  const running = view.tasks.filter((t) => t.status === "running" && (taskId === undefined || t.id === taskId));
  if (running.length === 0) {
    return refuse(new ConflictError(`${taskId ? `task ${taskId} is not running` : `run ${view.run.id} has no running task`}${parkedNote(view.tasks)}`));
  }
  const batch = new Batch();
  const at = Date.now();
  const lost = workerLost(view);
  for (const task of running) {
    const attempts = closeAttempt(task, "canceled", at, lost ? "worker lost; killed by operator" : "killed by operator", lost ? WORKER_LOST : undefined);
    const canceled = transitionTask(task, "canceled", { attempts, endedAt: at });
    batch.task(canceled, events.task(canceled, "task.canceled", { node: task.node, reason: command.reason ?? "killed" }));
  }
  if (view.run.status === "running" || view.run.status === "paused") {
    batch.patchRun(runTransition(view.run, "paused", { reason: "killed", current: running.map((t) => t.node) }));
    batch.event(events.run("run.paused", { reason: "killed", nodes: running.map((t) => t.node) }));
  }
  return { ok: true, batch, effect: `killed ${running.map((t) => t.node).join(", ")}${lost ? ` (${leftRunningBy(view)} ${running.length > 1 ? "them" : "it"})` : ""}`, writesState: false };
}

/** What parked tasks wait for, as a refused kill says it: there is no process to kill. */
function parkedNote(tasks: readonly TaskRecord[]): string {
  const parked = tasks.filter((t) => t.parent === null && isParked(t));
  const notes = parked.map((t) =>
    t.waitingFor!.kind === "time"
      ? `${t.node} sleeps on a timer until ${new Date(t.waitingFor!.until).toISOString()}`
      : `${t.node} waits for its sub-workflow run ${t.waitingFor!.kind === "run" ? t.waitingFor!.runId : "?"}, which can be killed or canceled itself`,
  );
  return notes.length > 0 ? ` (${notes.join("; ")}; cancel the run to stop it)` : "";
}

function loseTask(task: TaskRecord, batch: Batch, events: EventFactory): TaskRecord {
  const failed = lostWithWorker(task, Date.now());
  batch.task(failed, events.task(failed, "task.failed", { node: task.node, attempt: task.attempts.length, error: "worker lost", code: WORKER_LOST, willRetry: true }));
  return failed;
}

function leftRunningBy(view: RunView): string {
  return `its worker${view.run.owner ? ` ${view.run.owner}` : ""} was lost while running`;
}

function prepareCancel(command: CommandRecord, view: RunView, events: EventFactory): Prepared {
  if (view.run.status === "succeeded" || view.run.status === "canceled" || view.run.status === "failed") {
    return refuse(new ConflictError(`run ${view.run.id} has already ended (${view.run.status})`));
  }
  const batch = cancelBatch(view.run, view.tasks, view.pending, command.actor, command.reason ?? "canceled by operator", events);
  return { ok: true, batch, effect: canceledEffect(view.run.id), writesState: false };
}

/** Why a child run is canceled with its parent: the parent's cancel, with the operator's reason. */
export function childCancelReason(parentId: string, reason: string | null | undefined): string {
  return `parent run ${parentId} canceled${reason ? `: ${reason}` : ""}`;
}

/**
 * Why a run was canceled, in the log of the worker that ran it (a run's record does not say who
 * canceled it): by a deadline (its own, or its parent's), or by whom, with the reason given.
 */
export function canceledWhy(command: Pick<CommandRecord, "actor" | "reason">): string {
  if (command.actor === DEADLINE_ACTOR) return `by a deadline: ${command.reason ?? "the run had not ended by then"}`;
  return `by ${command.actor}${command.reason ? `: ${command.reason}` : ""}`;
}

/** What a cancel did, in the same words whichever process applied it. */
export function canceledEffect(runId: string): string {
  return `run ${runId} canceled`;
}

/** The answer to an accepted command and its `operator.accepted` event. */
export function acceptance(command: CommandRecord, effect: string, extra: Record<string, unknown>, actor: string) {
  const answer = { id: command.id, status: "accepted" as const, result: { effect, ...extra }, answeredAt: Date.now() };
  const event = new EventFactory(command.runId, actor).run("operator.accepted", { commandId: command.id, command: command.type, effect });
  return { answer, event };
}

/** The answer to a refused command (with the error's code, so the caller can raise the same error). */
export function refusal(command: CommandRecord, error: unknown, actor: string) {
  const reason = error instanceof Error ? error.message : String(error);
  const code = isPitwallError(error) ? error.code : "RUN";
  // A state edit's failing paths travel with the answer, so the operator sees each of them.
  const issues = error instanceof ValidationError && error.issues.length > 0 ? { issues: error.issues } : {};
  const answer = { id: command.id, status: "refused" as const, result: { reason, code, ...issues }, answeredAt: Date.now() };
  const event = new EventFactory(command.runId, actor).run("operator.refused", { commandId: command.id, command: command.type, reason });
  return { answer, event };
}

/** Ends a run as canceled: open tasks canceled, pending interrupts closed, parent woken. */
export function cancelBatch(
  run: RunRecord,
  tasks: readonly TaskRecord[],
  pending: readonly InterruptRecord[],
  actor: string,
  reason: string,
  events: EventFactory,
): Batch {
  const batch = new Batch();
  const at = Date.now();
  for (const task of tasks) {
    if (task.status === "pending" || task.status === "running" || task.status === "interrupted") {
      const attempts = task.status === "running" ? closeAttempt(task, "canceled", at, reason) : task.attempts;
      const canceled = transitionTask(task, "canceled", { attempts, endedAt: at, waitingFor: null });
      batch.task(canceled, events.task(canceled, "task.canceled", { node: task.node, reason }));
    }
  }
  for (const interrupt of pending) {
    batch.interrupt({ ...interrupt, status: "resolved", resolution: { decision: "cancel", actor, reason, at } });
    batch.event(events.run("interrupt.resolved", { interruptId: interrupt.id, decision: "cancel", reason }));
  }
  batch.patchRun(runTransition(run, "canceled"));
  batch.event(events.run("run.canceled", { reason }));
  if (run.parentRunId) batch.wake.push(run.parentRunId);
  return batch;
}
