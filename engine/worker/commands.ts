import { ConflictError, NotFoundError, ValidationError, isPitwallError } from "../errors.js";
import type { WorkflowDefinition } from "../graph/definition.js";
import { checkpointId } from "../ids.js";
import { EventFactory } from "../runtime/event-factory.js";
import { Batch } from "../runtime/batch.js";
import { closeAttempt, isParked, lostWithWorker, runTransition, transitionTask } from "../runtime/transitions.js";
import { diffStates, summarizeDiff } from "../state/diff.js";
import type { ChannelOp, Reducer, State } from "../state/ops.js";
import { applyStatePatch } from "../state/patch.js";
import { checkJson } from "../state/schema.js";
import { jsonBytes } from "../state/snapshot.js";
import type { StateValidator } from "../state/schema.js";
import { WORKER_LOST } from "../runtime/retry.js";
import { TERMINAL_RUN_STATUSES, type CheckpointRecord, type CommandRecord, type InterruptRecord, type PlanControl, type RunRecord, type TaskRecord } from "../store/records.js";
import { alreadyResolved } from "../store/rules.js";

/** Everything a command needs to know about a run to decide its effect. */
export interface RunView {
  run: RunRecord;
  definition: WorkflowDefinition;
  validator: StateValidator;
  reducerOf(key: string): Reducer;
  head: CheckpointRecord;
  state: State;
  /** Tasks of the step in progress (head step + 1). */
  tasks: TaskRecord[];
  /** Pending interrupts of the run. */
  pending: InterruptRecord[];
  /** Any interrupt by id (to say who resolved one already). */
  interrupt(id: string): Promise<InterruptRecord | undefined>;
  /** Whether tasks are executing in a live process right now. */
  executing: boolean;
  /** Names of secrets added to the default ones: the command's events never hold their values. */
  secretKeys: readonly string[];
}

export type Prepared =
  | { ok: true; batch: Batch; effect: string; writesState: boolean; result?: Record<string, unknown> }
  | { ok: false; error: Error };

const refuse = (error: Error): Prepared => ({ ok: false, error });

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
        return refuse(new ConflictError("fork is applied by the operator, not on the run"));
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

async function prepareResolve(command: CommandRecord, view: RunView, events: EventFactory): Promise<Prepared> {
  const ids = command.args.interruptIds as string[];
  const decision = command.args.decision as string;
  const batch = new Batch();
  const resolving: InterruptRecord[] = [];
  for (const id of ids) {
    const interrupt = view.pending.find((i) => i.id === id) ?? (await view.interrupt(id));
    if (!interrupt || interrupt.runId !== view.run.id) return refuse(new NotFoundError("interrupt", id));
    if (interrupt.status !== "pending") return refuse(alreadyResolved(id, interrupt.resolution));
    if (!interrupt.request.decisions.includes(decision)) {
      return refuse(new ValidationError(`decision "${decision}" is not allowed for interrupt ${id} (allowed: ${interrupt.request.decisions.join(", ")})`));
    }
    const schema = interrupt.request.responseSchema;
    if (schema && command.args.response !== undefined) {
      checkJson(schema, command.args.response, `response to interrupt ${id}`);
    } else if (schema && command.args.response === undefined && decision === "respond") {
      return refuse(new ValidationError(`interrupt ${id} expects a response`));
    }
    resolving.push(interrupt);
  }
  const patch = command.args.patch;
  // An interrupt that asks for a response (a tool call's arguments) is edited through it; a state
  // patch alone would leave the proposal as it was.
  const wantsResponse = resolving.some((i) => i.request.responseSchema !== undefined);
  if (decision === "edit" && wantsResponse && command.args.response === undefined) {
    return refuse(new ValidationError(`decision "edit" needs the edited values as the response (interrupt ${resolving.find((i) => i.request.responseSchema)!.id} asks for them)`));
  }
  if (decision === "edit" && patch === undefined && command.args.response === undefined) {
    return refuse(new ValidationError(`decision "edit" needs a state patch or a response (the edited values)`));
  }
  const at = Date.now();
  let checkpoint: CheckpointRecord | undefined;
  if (patch !== undefined) {
    checkpoint = editCheckpoint(view, patch, command.actor, resolving.map((i) => i.node), view.head.control, batch, events);
  }
  for (const interrupt of resolving) {
    batch.expectPending.push(interrupt.id);
    batch.interrupt({
      ...interrupt,
      status: "resolved",
      resolution: {
        decision,
        ...(command.args.response !== undefined ? { response: command.args.response } : {}),
        actor: command.actor,
        ...(command.reason ? { reason: command.reason } : {}),
        at,
        ...(checkpoint ? { checkpointId: checkpoint.id } : {}),
        headN: checkpoint ? checkpoint.n : view.head.n,
      },
    });
    batch.event(events.run("interrupt.resolved", { interruptId: interrupt.id, decision, ...(command.reason ? { reason: command.reason } : {}) }));
    const task = interrupt.taskId ? view.tasks.find((t) => t.id === interrupt.taskId) : undefined;
    if (task && task.status === "interrupted" && (interrupt.kind === "node" || interrupt.kind === "approval" || interrupt.kind === "recovery")) {
      const resumed = transitionTask(task, "pending", { waitingFor: null, notBefore: null });
      batch.task(resumed, events.task(resumed, "task.scheduled", { node: task.node, why: "resume" }));
    }
  }
  const remaining = view.pending.filter((p) => !ids.includes(p.id));
  resumeIfPaused(view, remaining.length, batch, events, command.actor);
  const skipped = decision === "skip" ? ` (${[...new Set(resolving.map((i) => i.node))].join(", ")} will not run)` : "";
  const effect = `resolved ${ids.join(", ")} with ${decision}${checkpoint ? ` and a state edit (checkpoint ${checkpoint.id})` : ""}${skipped}`;
  return { ok: true, batch, effect, writesState: checkpoint !== undefined, ...(checkpoint ? { result: { checkpointId: checkpoint.id } } : {}) };
}

async function prepareUpdate(command: CommandRecord, view: RunView, events: EventFactory): Promise<Prepared> {
  if (workerLost(view)) {
    const lost = view.tasks.filter((t) => t.status === "running").map((t) => t.node);
    return refuse(
      new ConflictError(
        `run ${view.run.id} is still running on ${view.run.owner ?? "a worker"}, whose lease ran out (the worker is gone or stalled)` +
          (lost.length > 0 ? ` with ${lost.join(", ")} running: retry ${lost.length > 1 ? "them" : "it"} with the edit, kill ${lost.length > 1 ? "them" : "it"} to pause the run and edit then,` : ":") +
          ` or start a worker to take the run over`,
      ),
    );
  }
  if (view.executing || view.run.status === "running") {
    return refuse(new ConflictError(`run ${view.run.id} is running; its state can be edited while it is paused or queued`));
  }
  if (view.run.status === "succeeded" || view.run.status === "canceled") {
    return refuse(new ConflictError(`run ${view.run.id} has ended (${view.run.status}); fork it to change its state`));
  }
  const asNode = command.args.asNode as string | undefined;
  let control: PlanControl = view.head.control;
  if (asNode !== undefined) {
    if (!Object.hasOwn(view.definition.nodes, asNode)) return refuse(new ValidationError(`workflow ${view.definition.name} has no node "${asNode}"`));
    if (view.tasks.length > 0) {
      // Paused before the node: the edit is what it writes, and it is skipped (LangGraph's as_node).
      const gate = view.pending.find((i) => (i.kind === "before" || i.kind === "breakpoint") && i.node === asNode);
      if (gate?.request.decisions.includes("skip")) {
        return prepareResolve({ ...command, args: { interruptIds: [gate.id], decision: "skip", patch: command.args.patch } }, view, events);
      }
      const planned = [...new Set(view.tasks.filter((t) => t.parent === null).map((t) => t.node))].sort().join(", ");
      return refuse(
        new ConflictError(
          gate
            ? `node "${asNode}" cannot be skipped (where it goes next depends on its running), so the edit cannot be made as its write; resolve interrupt ${gate.id} with an edit instead`
            : `the next step of run ${view.run.id} is already planned (${planned}): asNode applies before planning, or names a node the run is paused before, which it skips`,
        ),
      );
    }
    // The edit stands in for the node's write, in place of a write of it not yet followed; the
    // other finished nodes still lead on (a parallel step's siblings still fill their join).
    control = { ...control, finished: [...control.finished.filter((f) => f.node !== asNode), { node: asNode, asNode: true }] };
  }
  const batch = new Batch();
  const checkpoint = editCheckpoint(view, command.args.patch, command.actor, asNode ? [asNode] : [], control, batch, events, asNode);
  if (!checkpoint) return { ok: true, batch, effect: "the edit changes nothing in the state; nothing was written", writesState: false, result: {} };
  return { ok: true, batch, effect: `state edited (checkpoint ${checkpoint.id})`, writesState: true, result: { checkpointId: checkpoint.id } };
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
  const left = [...new Set(view.tasks.filter((t) => t.parent === null && t.id !== task.id && (t.status === "failed" || t.status === "canceled")).map((t) => t.node))].sort();
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

/**
 * A run still `running` that this process applies a command to has no live owner: its lease ran
 * out, and the tasks it shows running were left so by a lost worker, not executing anywhere.
 */
function workerLost(view: RunView): boolean {
  return !view.executing && view.run.status === "running";
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

function resumeIfPaused(view: RunView, stillPending: number, batch: Batch, events: EventFactory, actor: string): void {
  if (view.run.status === "paused" && stillPending === 0) {
    batch.patchRun(runTransition(view.run, "queued"));
    batch.event(events.run("run.resumed", { by: actor }));
  }
}

/** An `update` checkpoint holding an operator's validated edit; nothing is built if the patch is invalid. */
function editCheckpoint(
  view: RunView,
  patch: unknown,
  actor: string,
  nodes: string[],
  control: PlanControl,
  batch: Batch,
  events: EventFactory,
  asNode?: string,
): CheckpointRecord | undefined {
  const { state, ops } = applyStatePatch(view.state, patch, view.validator, (key) => {
    const reducer = view.reducerOf(key);
    return typeof reducer === "function" ? "replace" : reducer;
  });
  const { diff, truncated } = summarizeDiff(diffStates(view.state, state));
  // An edit that changes nothing writes nothing (as a node re-routed by `asNode` still does).
  if (diff.length === 0 && asNode === undefined) return undefined;
  const n = view.head.n + 1;
  const checkpoint: CheckpointRecord = {
    id: checkpointId(view.run.id, n),
    runId: view.run.id,
    n,
    step: view.head.step,
    parentId: view.head.id,
    source: "update",
    actor,
    nodes,
    // The plan stands after an edit; one made as a node's write is planned from its routes later.
    next: asNode === undefined ? view.head.next : [],
    control,
    delta: ops as ChannelOp[],
    snapshotN: view.head.snapshotN,
    createdAt: Date.now(),
    bytes: jsonBytes(ops),
  };
  batch.checkpoint = checkpoint;
  batch.event(
    events.run("state.edited", { checkpointId: checkpoint.id, diff, ...(truncated ? { truncated } : {}), ...(asNode ? { asNode } : {}) }),
  );
  return checkpoint;
}
