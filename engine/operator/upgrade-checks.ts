import { ConflictError, ValidationError } from "../errors.js";
import { hasRoutes, type NodeDefinition, type WorkflowDefinition } from "../graph/definition.js";
import { failedUncaught } from "../runtime/transitions.js";
import type { State } from "../state/ops.js";
import type { StateValidator } from "../state/schema.js";
import type { InterruptRecord, RunRecord, TaskRecord } from "../store/records.js";
import { reducerOf } from "./workflow-versions.js";
import { isHeld } from "./unheld-runs.js";

// What an upgrade (`Operator.upgrade`) checks of the run itself, beyond what a fork onto another
// version checks of its checkpoint (fork-version.ts): whether the run may move now, and whether
// what it waits on still makes sense under the new version.

/**
 * Only a run nobody executes moves: queued, paused, or failed (which a retry brings back, as it
 * does under the new version then). A running run is held by a worker, which runs its nodes under
 * the version it claimed it on; an ended one stays on the version it ended on.
 */
export function checkUpgradable(run: RunRecord): void {
  if (run.status === "running") {
    const why = isHeld(run) ? `held by worker ${run.owner}` : `left by worker ${run.owner ?? "?"}, whose lease ran out: start a worker to take it over`;
    throw new ConflictError(`run ${run.id} is running (${why}); a run moves to another version while it is queued, paused or failed: pause it (pitwall kill, pitwall break), or wait until it pauses or ends`);
  }
  if (run.status === "succeeded" || run.status === "canceled") {
    throw new ConflictError(`run ${run.id} has ended (${run.status}) and stays on its version: fork it onto the new one from its last checkpoint (pitwall fork ${run.id} ${run.headN} --workflow FILE), or go on from it (pitwall start FILE --from ${run.id})`);
  }
}

/**
 * A failed run moves only when a retry can bring it back (a failed or canceled task in its step in
 * progress, as `retry` asks): one that failed otherwise (a route no node takes, its step limit)
 * would stay failed on the new version, which nothing could then run.
 */
export function checkRetryable(run: RunRecord, tasks: readonly TaskRecord[]): void {
  if (run.status !== "failed" || tasks.some((t) => t.parent === null && (failedUncaught(t) || t.status === "canceled"))) return;
  const why = run.error ? ` (${run.error.code}${run.error.node ? ` at ${run.error.node}` : ""})` : "";
  throw new ConflictError(`run ${run.id} failed${why} with no task of its step in progress to retry, so it would stay failed on the new version: fork it onto the new one (pitwall fork ${run.id} N --workflow FILE, from the checkpoint N before what failed)`);
}

/** The workflow must be the run's, in another version; a run of another workflow is refused as a fork is. */
export function checkSameWorkflow(run: RunRecord, definition: WorkflowDefinition): void {
  if (definition.name !== run.workflow) {
    throw new ValidationError(`run ${run.id} is a run of workflow ${run.workflow}; an upgrade moves it to another version of that workflow, not to ${definition.name}`);
  }
}

/**
 * What the run waits on keeps its meaning: the tasks of its step in progress still have their
 * node, a task parked (on a timer, a signal, a sub-workflow's run, an interrupt) finds a node of
 * the same kind (calling the same sub-workflow; a wait node waiting for the same signal and time),
 * an approval's answers (pending, or given and not yet carried out) are routed, the writes its finished tasks keep still have
 * their keys, its pending interrupts and its breakpoints still have their node.
 */
export function checkWaitsKept(
  run: RunRecord,
  from: WorkflowDefinition,
  to: WorkflowDefinition,
  version: string,
  tasks: readonly TaskRecord[],
  interrupts: readonly InterruptRecord[],
): void {
  const pending = interrupts.filter((i) => i.status === "pending");
  const v = `version ${version.slice(0, 12)} of workflow ${to.name}`;
  for (const task of tasks.filter((t) => t.parent === null)) {
    const node = to.nodes[task.node];
    if (!node) throw new ValidationError(`${v} has no node "${task.node}", whose task ${task.id} is in run ${run.id}'s step in progress: keep the node in the new version`);
    const before = from.nodes[task.node];
    if (task.waitingFor && before && sameKind(before, node) && !sameWait(before, node)) {
      throw new ValidationError(
        `task ${task.id} of run ${run.id} waits (${task.waitingFor.kind}) in wait node "${task.node}" for ${waitText(before)}, which ${v} makes ${waitText(node)}: the wait under way keeps what it began with, so keep it, or upgrade once it has ended`,
      );
    }
    if (task.waitingFor && before && !sameKind(before, node)) {
      throw new ValidationError(
        `task ${task.id} of run ${run.id} waits (${task.waitingFor.kind}) in node "${task.node}", ${describeKind(before)} node, which ${v} makes ${describeKind(node)} node: keep its kind, or cancel the run and start it again`,
      );
    }
    const lost = (task.writes ?? []).map(([key]) => key).find((key) => !Object.hasOwn(to.state, key));
    if (lost !== undefined) {
      throw new ValidationError(`${v} has no state key "${lost}", which node "${task.node}" wrote in run ${run.id}'s step in progress (written when its step ends): keep the key in the new version`);
    }
  }
  for (const interrupt of pending) {
    const node = to.nodes[interrupt.node];
    if (!node) {
      throw new ValidationError(`${v} has no node "${interrupt.node}", at which run ${run.id}'s interrupt ${interrupt.id} (${interrupt.kind}) waits: answer it first, or keep the node in the new version`);
    }
    // An approval's answer is the route it takes: one the new version does not route would fail the run once given.
    const unrouted = interrupt.request.decisions.find((d) => !routed(node, d));
    if (unrouted !== undefined) {
      throw new ValidationError(`${v} routes no "${unrouted}" from approval "${interrupt.node}", which run ${run.id}'s interrupt ${interrupt.id} offers: answering it so would fail the run; route it in the new version, or answer the interrupt first`);
    }
  }
  // An answer given but not yet carried out (the run queued to resume its node) is the route it will take.
  for (const interrupt of interrupts) {
    const parked = tasks.some((t) => t.id === interrupt.taskId && t.status !== "succeeded" && t.status !== "failed" && t.status !== "canceled");
    const decision = interrupt.resolution?.decision;
    const node = to.nodes[interrupt.node];
    if (interrupt.status !== "resolved" || !parked || decision === undefined || !node || routed(node, decision)) continue;
    throw new ValidationError(`${v} routes no "${decision}" from approval "${interrupt.node}", which run ${run.id}'s interrupt ${interrupt.id} was answered with (its node has not gone on yet): the run would fail there; route it in the new version`);
  }
  const broken = run.breakpoints.find((node) => !Object.hasOwn(to.nodes, node));
  if (broken !== undefined) throw new ValidationError(`${v} has no node "${broken}", on which run ${run.id} has a breakpoint: clear it first (pitwall unbreak ${run.id} ${broken}), or keep the node in the new version`);
}

/** Whether an approval node takes `decision` somewhere (any other node: it routes no decisions). */
function routed(node: NodeDefinition, decision: string): boolean {
  if (node.kind !== "approval" || !hasRoutes(node) || node.default !== undefined) return true;
  return Object.hasOwn(node.routes!, decision) || (decision === "edit" && "approve" in node.routes!);
}

/** What a wait node waits for: `signal paid (at most 60 s)`, `3600 s`, `2026-12-24T00:00:00Z`. */
function waitText(node: NodeDefinition): string {
  if (node.kind !== "wait") return "";
  if (node.signal !== undefined) return `signal ${node.signal}${node.seconds !== undefined ? ` (at most ${node.seconds} s)` : ""}`;
  return node.until ?? `${node.seconds} s`;
}

/** A wait node parked on keeps what it waits for: its signal and its time (the wake time set stays the old one's). */
function sameWait(a: NodeDefinition, b: NodeDefinition): boolean {
  if (a.kind !== "wait" || b.kind !== "wait") return true;
  return a.signal === b.signal && a.seconds === b.seconds && a.until === b.until;
}

/**
 * The writes the step in progress has kept for its end (finished siblings of the node the run
 * waits in) must fit the new schema, and must not replace what the upgrade's patch changed.
 */
export function checkPendingWrites(run: RunRecord, to: WorkflowDefinition, version: string, tasks: readonly TaskRecord[], validator: StateValidator, state: State, patched: ReadonlySet<string>): void {
  const v = `version ${version.slice(0, 12)} of workflow ${to.name}`;
  for (const task of tasks.filter((t) => t.parent === null && t.writes)) {
    for (const [key, value] of task.writes!) {
      const reducer = reducerOf(to, key);
      const problem = validator.checkWrite(key, value, reducer, state[key]);
      if (problem) throw new ValidationError(`node "${task.node}" wrote ${JSON.stringify(key)} in run ${run.id}'s step in progress (applied when the step ends), which ${v} refuses: ${problem}`);
      if (patched.has(key) && reducer === "replace") {
        throw new ValidationError(`node "${task.node}" wrote ${JSON.stringify(key)} in run ${run.id}'s step in progress, applied when the step ends: it would replace what the patch sets there; patch it after the step ends (pitwall edit)`);
      }
    }
  }
}

/** A sub-workflow node is of the same kind only when it calls the same workflow (in any version). */
function sameKind(a: NodeDefinition, b: NodeDefinition): boolean {
  if (a.kind !== b.kind) return false;
  return a.kind !== "subgraph" || b.kind !== "subgraph" || a.workflowName === b.workflowName;
}

/** The node's kind with its article: `a sub-workflow (child)`, `an action`. */
function describeKind(node: NodeDefinition): string {
  if (node.kind === "subgraph") return `a sub-workflow (${node.workflowName ?? "?"})`;
  const kind = node.kind ?? "action";
  return `${/^[aeiou]/.test(kind) ? "an" : "a"} ${kind}`;
}
