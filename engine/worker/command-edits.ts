import { ConflictError, NotFoundError, ValidationError } from "../errors.js";
import { checkpointId } from "../ids.js";
import type { EventFactory } from "../runtime/event-factory.js";
import { Batch } from "../runtime/batch.js";
import { runTransition, transitionTask } from "../runtime/transitions.js";
import { diffStates, summarizeDiff } from "../state/diff.js";
import type { ChannelOp } from "../state/ops.js";
import { applyStatePatch } from "../state/patch.js";
import { checkJson } from "../state/schema.js";
import { jsonBytes } from "../state/snapshot.js";
import type { CheckpointRecord, CommandRecord, InterruptRecord, PlanControl } from "../store/records.js";
import { alreadyResolved } from "../store/rules.js";
import { refuse, workerLost, type Prepared, type RunView } from "./command-view.js";

/** Commands that write the run's state or answer its interrupts (resolve, update), and the edit they and a retry make. */

export async function prepareResolve(command: CommandRecord, view: RunView, events: EventFactory): Promise<Prepared> {
  const ids = command.args.interruptIds as string[];
  const batch = new Batch();
  const resolving: InterruptRecord[] = [];
  for (const id of ids) {
    const interrupt = view.pending.find((i) => i.id === id) ?? (await view.interrupt(id));
    if (!interrupt || interrupt.runId !== view.run.id) return refuse(new NotFoundError("interrupt", id));
    if (interrupt.status !== "pending") return refuse(alreadyResolved(id, interrupt.resolution));
    resolving.push(interrupt);
  }
  // A deadline's answer is the one its interrupt keeps (deadline-watch.ts), checked when the node asked.
  const timedOut = command.args.deadline === true;
  const deadline = timedOut ? resolving[0]?.deadline : undefined;
  if (timedOut && (!deadline || resolving.length !== 1)) return refuse(new ConflictError(`interrupt ${ids.join(", ")} has no deadline`));
  const decision = deadline ? deadline.decision : (command.args.decision as string);
  const response = deadline ? deadline.response : command.args.response;
  for (const { id, request } of resolving) {
    if (!request.decisions.includes(decision)) {
      return refuse(new ValidationError(`decision "${decision}" is not allowed for interrupt ${id} (allowed: ${request.decisions.join(", ")})`));
    }
    const schema = request.responseSchema;
    if (schema && response !== undefined) {
      checkJson(schema, response, `response to interrupt ${id}`);
    } else if (schema && response === undefined && decision === "respond") {
      return refuse(new ValidationError(`interrupt ${id} expects a response`));
    }
  }
  const patch = command.args.patch;
  // An interrupt that asks for a response (a tool call's arguments) is edited through it; a state
  // patch alone would leave the proposal as it was.
  const wantsResponse = resolving.some((i) => i.request.responseSchema !== undefined);
  if (decision === "edit" && wantsResponse && response === undefined) {
    return refuse(new ValidationError(`decision "edit" needs the edited values as the response (interrupt ${resolving.find((i) => i.request.responseSchema)!.id} asks for them)`));
  }
  if (decision === "edit" && patch === undefined && response === undefined) {
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
        ...(response !== undefined ? { response } : {}),
        actor: command.actor,
        ...(command.reason ? { reason: command.reason } : {}),
        at,
        ...(checkpoint ? { checkpointId: checkpoint.id } : {}),
        headN: checkpoint ? checkpoint.n : view.head.n,
        ...(timedOut ? { timedOut: true as const } : {}),
      },
    });
    batch.event(events.run("interrupt.resolved", { interruptId: interrupt.id, decision, ...(command.reason ? { reason: command.reason } : {}), ...(timedOut ? { timedOut: true as const } : {}) }));
    const task = interrupt.taskId ? view.tasks.find((t) => t.id === interrupt.taskId) : undefined;
    if (task && task.status === "interrupted" && (interrupt.kind === "node" || interrupt.kind === "approval" || interrupt.kind === "recovery")) {
      const resumed = transitionTask(task, "pending", { waitingFor: null, notBefore: null });
      batch.task(resumed, events.task(resumed, "task.scheduled", { node: task.node, why: "resume" }));
    }
  }
  const remaining = view.pending.filter((p) => !ids.includes(p.id));
  resumeIfPaused(view, remaining.length, batch, events, command.actor);
  const skipped = decision === "skip" ? ` (${[...new Set(resolving.map((i) => i.node))].join(", ")} will not run)` : "";
  const late = timedOut ? " (nobody answered by its deadline)" : "";
  const effect = `resolved ${ids.join(", ")} with ${decision}${late}${checkpoint ? ` and a state edit (checkpoint ${checkpoint.id})` : ""}${skipped}`;
  return { ok: true, batch, effect, writesState: checkpoint !== undefined, ...(checkpoint ? { result: { checkpointId: checkpoint.id } } : {}) };
}

export async function prepareUpdate(command: CommandRecord, view: RunView, events: EventFactory): Promise<Prepared> {
  if (workerLost(view)) {
    // The nodes, not their durable calls (child tasks of the same node), each once.
    const lost = [...new Set(view.tasks.filter((t) => t.parent === null && t.status === "running").map((t) => t.node))];
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

/** A paused run whose interrupts are all answered goes back to the queue. */
export function resumeIfPaused(view: RunView, stillPending: number, batch: Batch, events: EventFactory, actor: string): void {
  if (view.run.status === "paused" && stillPending === 0) {
    batch.patchRun(runTransition(view.run, "queued"));
    batch.event(events.run("run.resumed", { by: actor }));
  }
}

/** An `update` checkpoint holding an operator's validated edit; nothing is built if the patch is invalid. */
export function editCheckpoint(
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
