import { errorMessage } from "../errors.js";
import { hasRoutes, withinTolerance, type NodeDefinition } from "../graph/definition.js";
import { stepLimitMessage } from "../graph/paths.js";
import { checkpointId, derivedId, taskId as makeTaskId } from "../ids.js";
import { WriteConflictError, reduceWrites, type ChannelWrite, type State } from "../state/ops.js";
import { jsonBytes, measureOps } from "../state/snapshot.js";
import type { CheckpointRecord, PauseReason, PlanControl, RunError, TaskRecord } from "../store/records.js";
import { planNextStep, type PlannedTask } from "./planner.js";
import { retryPolicyOf } from "./retry.js";
import { countTries, tryCountText } from "./tries.js";
import { byNodeThenIndex, type RunState } from "./run-state.js";
import { closeAttempt, failedUncaught, isParked, newTaskRecord, runTransition, transitionTask, waitsForPerson } from "./transitions.js";

/** The tasks that may start now: pending, due, not gated by an interrupt, within concurrency limits. */
export function startable(rs: RunState, running: ReadonlySet<string>, now: number): TaskRecord[] {
  // Asked twice a step with nothing to start (a task just ended, or is running): no lists made then.
  if (!someWaiting(rs, running)) return [];
  const gated = rs.interrupts.size === 0 ? NONE : new Set(rs.pendingInterrupts().filter((i) => i.kind === "before" || i.kind === "breakpoint").map((i) => i.node));
  let free = rs.workflow.definition.limits.concurrency - running.size;
  const perNode = new Map<string, number>();
  for (const id of running) {
    const node = rs.tasks.get(id)?.node;
    if (node) perNode.set(node, (perNode.get(node) ?? 0) + 1);
  }
  const out: TaskRecord[] = [];
  for (const task of rs.tasks.size === 1 ? rs.tasks.values() : [...rs.tasks.values()].sort(byNodeThenIndex)) {
    if (free <= 0) break;
    if (task.status !== "pending" || running.has(task.id) || gated.has(task.node)) continue;
    if (task.notBefore !== null && task.notBefore > now) continue;
    const mapLimit = rs.nodeDefinition(task.node)?.map?.concurrency;
    if (mapLimit !== undefined && (perNode.get(task.node) ?? 0) >= mapLimit) continue;
    perNode.set(task.node, (perNode.get(task.node) ?? 0) + 1);
    out.push(task);
    free--;
  }
  return out;
}

const NONE: ReadonlySet<string> = new Set();

function someWaiting(rs: RunState, running: ReadonlySet<string>): boolean {
  for (const task of rs.tasks.values()) if (task.status === "pending" && !running.has(task.id)) return true;
  return false;
}

/** When the first pending task not running may start (Infinity: none waits), and whether every task succeeded. */
export function stepProgress(rs: RunState, running: ReadonlySet<string>): { nextWake: number; allSucceeded: boolean } {
  let nextWake = Infinity;
  let allSucceeded = true;
  for (const t of rs.tasks.values()) {
    if (t.status === "pending" && !running.has(t.id)) nextWake = Math.min(nextWake, t.notBefore ?? Infinity);
    allSucceeded &&= t.status === "succeeded" || t.caught === true;
  }
  return { nextWake, allSucceeded };
}

/** Marks tasks running in the batch and queues their launch for after the commit. */
export function startTasks(rs: RunState, tasks: TaskRecord[]): void {
  const now = Date.now();
  for (const task of tasks) {
    const attempt = task.attempts.length + 1;
    const running = transitionTask(task, "running", {
      attempts: [...task.attempts, { n: attempt, worker: rs.workerId, startedAt: now, endedAt: null, outcome: null }],
      startedAt: task.startedAt ?? now,
      worker: rs.workerId,
      notBefore: null,
    });
    const started = rs.events.task(running, "task.started", { node: task.node, attempt, ...(task.index !== null ? { index: task.index } : {}) });
    if (skipRequested(rs, task)) {
      // The attempt says so: it ended without running the node.
      const skipped = transitionTask(running, "succeeded", { writes: [], route: null, endedAt: now, attempts: closeAttempt(running, "succeeded", now, "skipped by an operator", SKIPPED) });
      rs.setTask(skipped, started, rs.events.task(skipped, "task.succeeded", { node: task.node, attempt, durationMs: 0, keys: [], skipped: true }));
      continue;
    }
    rs.launch.push(rs.setTask(running, started));
  }
}

/**
 * An operator chose "skip" at the recovery interrupt of this task's last attempt, or at the
 * before-interrupt or breakpoint its node was stopped at in this step.
 */
function skipRequested(rs: RunState, task: TaskRecord): boolean {
  // Nearly every task starts in a run with no interrupt at all: no ids to derive (a hash each).
  if (rs.interrupts.size === 0) return false;
  const ids = [
    derivedId("int", task.id, "recovery", task.attempts.length),
    ...GATES.map((kind) => derivedId("int", rs.run.id, task.step, task.node, kind)),
  ];
  return ids.some((id) => {
    const interrupt = rs.interrupts.get(id);
    return interrupt?.status === "resolved" && interrupt.resolution?.decision === "skip";
  });
}

const GATES = ["before", "breakpoint"] as const;

/** The code of the attempt of a task an operator chose to skip: it succeeded without running. */
export const SKIPPED = "SKIPPED";

/**
 * A node stopped before it runs may be skipped when where it goes next does not depend on its
 * running: it has no routes, or a default, a `routeOn` key or a router reading the state.
 */
function skippable(node: NodeDefinition | undefined): boolean {
  if (!node || node.kind === "approval") return false;
  return !hasRoutes(node) || node.default !== undefined || node.routeOn !== undefined || node.router === true;
}

/**
 * Plans step `step` from a state and its plan control, into the batch: its tasks (started at
 * once, or gated by before-interrupts and breakpoints), or the run's end, or its failure.
 * Returns the planned node names.
 */
export function planStep(rs: RunState, state: State, control: PlanControl, step: number, running: ReadonlySet<string>): string[] {
  const plan = planNextStep(rs.workflow, state, control);
  if (plan.kind === "error") {
    rs.failRun(plan.error);
    return [];
  }
  if (plan.kind === "end") {
    rs.succeedRun();
    return [];
  }
  const { maxSteps } = rs.workflow.definition.limits;
  const nodes = distinct(plan.tasks, (t) => t.node);
  // Counted from the step the run began at: a fork or a continuation gets the whole limit.
  if (step - (rs.run.firstStep ?? 0) > maxSteps) {
    rs.failRun({
      code: "MAX_STEPS",
      node: nodes[0]!,
      message: stepLimitMessage(rs.workflow.definition, step, nodes, rs.run.firstStep ?? 0),
    });
    return [];
  }
  const now = Date.now();
  const tasks = plan.tasks.map((p) => newTask(rs.run.id, p, step, now));
  rs.tasks = new Map();
  for (const task of tasks) rs.setTask(task);
  rs.batch.patchRun({ barriers: plan.control.barriers, current: nodes });

  const before = rs.run.interruptBefore ?? rs.workflow.definition.interruptBefore;
  const breakpoints = rs.run.breakpoints;
  const gates = before.length + breakpoints.length === 0 ? [] : nodes.filter((n) => before.includes(n) || breakpoints.includes(n));
  if (gates.length === 0) {
    startTasks(rs, startable(rs, running, now));
    return nodes;
  }
  for (const node of gates) {
    const kind = breakpoints.includes(node) ? "breakpoint" : "before";
    rs.addInterrupt({
      id: derivedId("int", rs.run.id, step, node, kind),
      runId: rs.run.id,
      taskId: tasks.find((t) => t.node === node)!.id,
      node,
      step,
      kind,
      request: {
        question: kind === "breakpoint" ? `Breakpoint: continue into "${node}"?` : `About to run "${node}". Continue?`,
        decisions: ["approve", "edit", ...(skippable(rs.nodeDefinition(node)) ? ["skip"] : [])],
      },
      status: "pending",
      resolution: null,
      createdAt: now,
    });
  }
  const reason: PauseReason = gates.some((n) => breakpoints.includes(n)) ? "breakpoint" : "interrupt";
  rs.pause(reason, gates);
  return nodes;
}

function newTask(runId: string, planned: PlannedTask, step: number, now: number): TaskRecord {
  return newTaskRecord({
    id: makeTaskId(runId, step, planned.node, planned.index),
    runId,
    step,
    node: planned.node,
    index: planned.index,
    createdAt: now,
    ...(planned.index !== null ? { input: planned.input } : {}),
  });
}

/**
 * Every task of the step succeeded: their writes go through the reducers, in a deterministic
 * order, into one checkpoint; then after-interrupts pause the run, or the next step is planned
 * into the same batch (so a linear step costs one commit).
 */
export function barrier(rs: RunState, running: ReadonlySet<string>): void {
  const ordered = rs.tasks.size === 1 ? [...rs.tasks.values()] : [...rs.tasks.values()].sort(byNodeThenIndex);
  // Plain loops here and below: this runs at every step, and flatMap and spread Sets cost more
  // than the rest of the step's bookkeeping together.
  const writes: ChannelWrite[] = [];
  for (const t of ordered) {
    if (t.writes === null) continue;
    const writer = t.index === null ? t.node : `${t.node}[${t.index}]`;
    for (const [key, value] of t.writes) writes.push({ key, value, writer });
  }
  let reduced: ReturnType<typeof reduceWrites>;
  try {
    reduced = reduceWrites(rs.chain.state, writes, (key) => rs.workflow.reducerOf(key));
  } catch (error) {
    const code = error instanceof WriteConflictError ? "WRITE_CONFLICT" : "BAD_OUTPUT";
    rs.failRun({ code, message: errorMessage(error), node: ordered[0]!.node });
    return;
  }
  const step = rs.head.step + 1;
  const n = rs.head.n + 1;
  const nodes = distinct(ordered, (t) => t.node);
  const visits = { ...rs.head.control.visits };
  for (const node of nodes) visits[node] = (visits[node] ?? 0) + 1;
  const finished: PlanControl["finished"] = [];
  for (const node of nodes) {
    // Failed items its catch took are the node's failure, past what its catch tolerates: it goes where its catch leads.
    let items = 0;
    let caught = 0;
    for (const t of ordered) {
      if (t.node !== node) continue;
      items++;
      if (t.caught) caught++;
    }
    const route = ordered.find((t) => t.node === node && t.route !== null)?.route;
    // Within its tolerance, a node that routes on its items' results but none chose a route (all
    // failed) has nowhere of its own to go: its catch takes it.
    if (caught > 0 && (!withinTolerance(rs.nodeDefinition(node)?.catch, caught, items) || (route == null && !routesOtherwise(rs, node)))) {
      finished.push({ node, caught: true });
      continue;
    }
    finished.push(route != null ? { node, route } : { node });
  }
  const control: PlanControl = { finished, barriers: rs.run.barriers, visits };
  const measured = measureOps(reduced.ops);
  const deltaBytes = measured.bytes;
  const snapshot = rs.chain.advance(n, reduced.ops, reduced.state, measured);
  const checkpoint: CheckpointRecord = {
    id: checkpointId(rs.run.id, n),
    runId: rs.run.id,
    n,
    step,
    parentId: rs.head.id,
    source: "loop",
    actor: `worker:${rs.workerId}`,
    nodes,
    next: [],
    control,
    delta: reduced.ops,
    ...(snapshot ? { snapshot } : {}),
    snapshotN: snapshot ? n : rs.chain.snapshotN,
    createdAt: Date.now(),
    bytes: deltaBytes + (snapshot ? jsonBytes(snapshot) : 0),
  };
  rs.batch.checkpoint = checkpoint;
  // The checkpoint holds what they wrote: no task of the step keeps its writes, neither those
  // committed with it nor those committed earlier while a sibling still ran.
  for (const task of ordered) {
    const pending = rs.batch.tasks.get(task.id);
    if (pending) rs.batch.tasks.set(task.id, { ...pending, writes: null });
    else if (task.writes !== null) rs.setTask({ ...task, writes: null });
  }
  const completedAt = rs.batch.events.length;
  rs.head = checkpoint;
  const after = rs.run.interruptAfter ?? rs.workflow.definition.interruptAfter;
  const afterNodes = after.length === 0 ? [] : nodes.filter((node) => after.includes(node));
  if (afterNodes.length > 0) {
    for (const node of afterNodes) {
      rs.addInterrupt({
        id: derivedId("int", rs.run.id, step, node, "after"),
        runId: rs.run.id,
        taskId: ordered.find((t) => t.node === node)!.id,
        node,
        step,
        kind: "after",
        request: { question: `"${node}" has run. Review its result before the run goes on?`, decisions: ["approve", "edit"] },
        status: "pending",
        resolution: null,
        createdAt: Date.now(),
      });
    }
    rs.tasks = new Map();
    rs.pause("interrupt", afterNodes);
  } else {
    checkpoint.next = planStep(rs, reduced.state, control, step + 1, running);
  }
  rs.batch.events.splice(
    completedAt,
    0,
    rs.events.run("step.completed", { step, checkpointId: checkpoint.id, nodes, keys: distinct(reduced.ops, ([key]) => key), next: checkpoint.next }),
  );
}

/** The distinct values of `key` over `items`, in their first order (a step has few: no Set needed). */
function distinct<T>(items: readonly T[], key: (item: T) => string): string[] {
  const out: string[] = [];
  for (const item of items) {
    const value = key(item);
    if (!out.includes(value)) out.push(value);
  }
  return out;
}

/** A failed task as its run's error; its attempts counted as tries, as `show` counts them: a resume is not another go. */
function taskFailure(task: TaskRecord): RunError {
  return { code: "TASK_FAILED", node: task.node, message: `node "${task.node}" failed after ${tryCountText(countTries(task.attempts))}: ${task.error?.message ?? "unknown error"}` };
}

/** Nothing can run and not everything succeeded: fail, pause for an operator, or park the run. */
export function settle(rs: RunState, nextWake: number): void {
  const tasks = [...rs.tasks.values()];
  const failed = tasks.filter(failedUncaught);
  const fatal = failed.find((t) => retryPolicyOf(rs.nodeDefinition(t.node)?.retry).onExhausted === "fail");
  if (fatal) return rs.failRun(taskFailure(fatal));
  const waitingForPeople = tasks.filter(waitsForPerson);
  const canceled = tasks.filter((t) => t.status === "canceled");
  // One reason (the first that applies), but every node the run waits on: failed, asking, killed.
  const blocked = [...new Set([...failed, ...waitingForPeople, ...canceled].map((t) => t.node))];
  if (failed.length > 0) {
    // Why it waits, on the run itself: `wait()` returns it, lists and `start --wait` show it.
    const error = taskFailure(failed[0]!);
    const more = failed.length > 1 ? ` (and ${failed.length - 1} more failed: ${failed.slice(1).map((t) => t.node).join(", ")})` : "";
    return rs.pause("retries-exhausted", blocked, { ...error, message: error.message + more });
  }
  if (waitingForPeople.length > 0 || rs.pendingInterrupts().length > 0) return rs.pause("interrupt", blocked);
  if (canceled.length > 0) return rs.pause("killed", blocked);

  // Parked on timers, child runs, signals or a long backoff: release the run until then.
  const parked = tasks.filter(isParked);
  // A signal sent while its node was on its way to park (none waited for it yet) lets it go on now.
  const signaled = parked.filter((t) => t.waitingFor?.kind === "signal" && rs.signals.waiting(t.waitingFor.name, rs.run.inbox ?? []));
  if (signaled.length > 0) {
    for (const t of signaled) {
      const resumed = transitionTask(t, "pending", { waitingFor: null, notBefore: null });
      rs.setTask(resumed, rs.events.task(resumed, "task.scheduled", { node: t.node, why: "signal" }));
    }
    return;
  }
  const times = parked.flatMap((t) => (t.waitingFor?.kind === "time" || (t.waitingFor?.kind === "signal" && t.waitingFor.until !== undefined) ? [t.waitingFor.until!] : []));
  const wakeAt = Math.min(nextWake, ...times);
  const child = parked.find((t) => t.waitingFor?.kind === "run")?.waitingFor;
  const waitingOn = wakeAt === Infinity && child?.kind === "run" ? child.runId : null;
  // Nothing but signals to wait for: paused, as for a person, until one is sent (Operator.signal).
  const signals = parked.flatMap((t) => (t.waitingFor?.kind === "signal" ? [t.node] : []));
  if (wakeAt === Infinity && waitingOn === null && signals.length > 0) return rs.pause("signal", [...new Set(signals)]);
  rs.batch.patchRun(runTransition(rs.run, "queued", { wakeAt: wakeAt === Infinity ? null : wakeAt, waitingOn }));
  rs.batch.event(
    rs.events.run("run.released", {
      status: "queued",
      ...(wakeAt !== Infinity ? { wakeAt } : {}),
      ...(waitingOn ? { waitingOn } : {}),
      why: waitingWhy(waitingOn, wakeAt),
    }),
  );
}

/**
 * A stopping worker hands the run back (queued) so another worker continues it; or, when nothing
 * is left that a worker could run and a task waits for a person (an at-most-once node stopped
 * part-way asks whether to run it again), settles it (paused for them), as any worker would at once.
 */
export function handBack(rs: RunState): void {
  const tasks = [...rs.tasks.values()];
  const blocked = (t: TaskRecord) => failedUncaught(t) || t.status === "canceled" || waitsForPerson(t);
  if (!tasks.some((t) => t.status === "pending") && tasks.some(blocked)) {
    settle(rs, Infinity);
  } else {
    rs.batch.patchRun(runTransition(rs.run, "queued"));
    rs.batch.event(rs.events.run("run.released", { status: "queued", why: "worker shutting down" }));
  }
}

/** What a run released until a child run ends or a time comes waits for, in the same words wherever it is said. */
export function waitingWhy(waitingOn: string | null, wakeAt: number): string {
  return waitingOn ? `waiting for child run ${waitingOn}` : `waiting until ${new Date(wakeAt).toISOString()}`;
}

/** Whether a node goes on without a route key from its results: it has no routes, or a default, or reads its key from the state or a router. */
function routesOtherwise(rs: RunState, node: string): boolean {
  const def = rs.nodeDefinition(node);
  return !def || !hasRoutes(def) || def.default !== undefined || def.routeOn !== undefined || rs.workflow.nodes.get(node)?.router !== undefined;
}
