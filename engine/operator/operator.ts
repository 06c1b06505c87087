import { userInfo } from "node:os";
import { ConflictError, NotFoundError, PitwallError, StaleFenceError, ValidationError } from "../errors.js";
import { derivedId, newId } from "../ids.js";
import { EventFactory } from "../runtime/event-factory.js";
import { Batch } from "../runtime/batch.js";
import { newRun } from "../runtime/new-run.js";
import { diffStates, summarizeDiff, type DiffEntry } from "../state/diff.js";
import { diffCheckpoints, findCheckpoint, type CheckpointRef } from "./reads.js";
import { MAX_DEPTH, checkValue } from "../state/limits.js";
import { applyStatePatch } from "../state/patch.js";
import { readState } from "../state/read.js";
import { StateValidator } from "../state/schema.js";
import type { State } from "../state/ops.js";
import type { WorkflowDefinition } from "../graph/definition.js";
import type { CompiledWorkflow } from "../graph/model.js";
import { checkInterruptNodes, storeVersion, type WorkflowVersion } from "./start.js";
import { checkNodesKept, fitState } from "./fork-version.js";
import type { EventType } from "../runtime/events.js";
import type { CheckpointRecord, CommandRecord, CommandType, RunRecord } from "../store/records.js";
import type { Store } from "../store/store.js";
import { acceptance, prepareCommand, refusal, type RunView } from "../worker/commands.js";
import { watchOwner, type OwnerWaiting } from "./owner-watch.js";

export interface OperatorOptions {
  /** Recorded on every command, e.g. `operator:alice`. Default: `operator:<OS user>`. */
  actor?: string;
  /** How long to wait for the worker that owns a run to answer a command before looking again. */
  answerTimeoutMs?: number;
  /** How long a command may stay unanswered in all before the call gives up (the command stays queued). */
  totalTimeoutMs?: number;
  /**
   * Called when a command has waited a moment (1 s) for the worker that owns its run, and once
   * more if its lease then shows more (`worker`: alive and stopping nodes, or not renewing): a
   * worker that died holds the run until its lease runs out, one stopping a node that ignores its
   * signal waits out its grace period, and a person should know why nothing happens.
   */
  onWaiting?: (waiting: OwnerWaiting) => void;
  /**
   * Names of secrets, added to the default ones, whose values the events of this operator's
   * commands (`operator.requested`, `state.edited`) never hold: give the workers' list.
   */
  secretKeys?: readonly string[];
}

/** What an accepted command did: its effect in words, and what it made (`result`, e.g. a fork's `runId`). */
export interface CommandOutcome<R extends Record<string, unknown> = Record<string, unknown>> {
  command: CommandRecord;
  effect: string;
  result: R;
}


/** `operator:<OS user>`, the default actor of commands. */
export function defaultActor(name?: string): string {
  let user = name;
  if (!user) {
    try {
      user = userInfo().username;
    } catch {
      user = "unknown";
    }
  }
  return `operator:${user}`;
}

/**
 * What an operator does to runs. Every action is a durable command with an actor and a reason:
 * the worker that owns the run applies it, or, when nobody owns the run, this process applies it
 * itself — with the same code, under the same fencing rules. Refusals throw typed errors
 * (ValidationError, ConflictError, NotFoundError) and leave an `operator.refused` event.
 */
export class Operator {
  readonly actor: string;
  private readonly answerTimeoutMs: number;
  private readonly totalTimeoutMs: number;
  private readonly onWaiting: OperatorOptions["onWaiting"];
  private readonly secretKeys: readonly string[];

  constructor(
    readonly store: Store,
    options: OperatorOptions = {},
  ) {
    this.actor = options.actor ?? defaultActor();
    this.answerTimeoutMs = options.answerTimeoutMs ?? 2_000;
    this.totalTimeoutMs = options.totalTimeoutMs ?? 30_000;
    this.onWaiting = options.onWaiting;
    this.secretKeys = options.secretKeys ?? [];
  }

  /** Resolves one interrupt, or several of one run together (atomically). */
  async resolve(
    interruptIds: string | string[],
    input: { decision: string; response?: unknown; patch?: unknown; reason?: string },
  ): Promise<CommandOutcome> {
    const ids = ([] as string[]).concat(interruptIds);
    if (ids.length === 0) throw new ValidationError("no interrupt to resolve");
    const twice = ids.find((id, i) => ids.indexOf(id) !== i);
    if (twice !== undefined) throw new ValidationError(`interrupt ${twice} is listed twice`);
    const interrupts = await Promise.all(ids.map(async (id) => (await this.store.getInterrupt(id)) ?? notFound("interrupt", id)));
    const runId = interrupts[0]!.runId;
    if (interrupts.some((i) => i.runId !== runId)) throw new ValidationError("interrupts resolved together must belong to one run");
    return this.submit(runId, "resolve", {
      interruptIds: ids,
      decision: input.decision,
      ...(input.response !== undefined ? { response: input.response } : {}),
      ...(input.patch !== undefined ? { patch: input.patch } : {}),
    }, input.reason);
  }

  /** Edits the state of a paused (or queued) run; validated, recorded as an `update` checkpoint. */
  updateState(runId: string, patch: unknown, options: { asNode?: string; reason?: string } = {}): Promise<CommandOutcome> {
    return this.submit(runId, "update", { patch, ...(options.asNode ? { asNode: options.asNode } : {}) }, options.reason);
  }

  /** Aborts the running task(s) of a run (one task by id or node name, or all); the run pauses. */
  async kill(runId: string, options: { task?: string; reason?: string } = {}): Promise<CommandOutcome> {
    const taskId = options.task ? await this.resolveTask(runId, options.task, ["running"]) : undefined;
    return this.submit(runId, "kill", taskId ? { taskId } : {}, options.reason);
  }

  /** Puts a failed or canceled task back to pending (optionally editing the state first). */
  async retry(runId: string, task: string, options: { patch?: unknown; reason?: string } = {}): Promise<CommandOutcome> {
    const taskId = await this.resolveTask(runId, task, ["failed", "canceled"]);
    return this.submit(runId, "retry", { taskId, ...(options.patch !== undefined ? { patch: options.patch } : {}) }, options.reason);
  }

  /** Ends a run as canceled; its running tasks are aborted and its child runs canceled. */
  async cancel(runId: string, options: { reason: string }): Promise<CommandOutcome> {
    if (!options?.reason?.trim()) throw new ValidationError("cancel needs a reason");
    const outcome = await this.submit(runId, "cancel", {}, options.reason);
    // A worker that owned the run cancels its children; a run nobody owned (a parent waiting on a
    // child holds no lease) has them canceled here.
    const { runs: children } = await this.store.listRuns({ parentRunId: runId, status: ["queued", "running", "paused"] });
    for (const child of children) {
      try {
        await this.cancel(child.id, { reason: `parent run ${runId} canceled` });
      } catch (error) {
        if (!(error instanceof ConflictError)) throw error;
      }
    }
    return outcome;
  }

  /** Pauses the run before `node` each time it is scheduled, until `clearBreakpoint`. */
  breakpoint(runId: string, node: string, reason?: string): Promise<CommandOutcome> {
    return this.submit(runId, "break", { node }, reason);
  }

  clearBreakpoint(runId: string, node: string, reason?: string): Promise<CommandOutcome> {
    return this.submit(runId, "unbreak", { node }, reason);
  }

  /**
   * Starts a new run whose history begins at a checkpoint of another (optionally with a state
   * patch). The source run is not changed. Returns the new run's id in `result.runId`. With
   * `workflow`, another version of the same workflow (a fixed one, say) runs the fork: the
   * checkpoint's state must fit its schema (the patch is checked against it) and the nodes the
   * run is at must still exist. With `restart`, the fork runs the workflow again from its start
   * node on that state (a new turn of a conversation), instead of going on where the checkpoint was.
   * `interruptBefore`/`interruptAfter` replace the source run's lists (`[]`: none; `null`: the workflow's).
   */
  async fork(
    runId: string,
    checkpoint: CheckpointRef,
    options: {
      patch?: unknown;
      reason?: string;
      workflow?: CompiledWorkflow | WorkflowVersion;
      restart?: boolean;
      interruptBefore?: string[] | null;
      interruptAfter?: string[] | null;
    } = {},
  ): Promise<CommandOutcome<{ runId: string }>> {
    const source = await this.mustGetRun(runId);
    const from = await this.checkpoint(runId, checkpoint);
    const target = options.workflow;
    if (target && target.definition.name !== source.workflow) {
      throw new ValidationError(`run ${runId} is a run of workflow ${source.workflow}; a fork may move it to another version of that workflow, not to ${target.definition.name}`);
    }
    const version = target?.version ?? source.version;
    if (target && !options.restart) checkNodesKept(target.definition, version, from, source);
    // Checked before the command is recorded: a fork refused for a node it lacks leaves no trace.
    checkInterruptNodes(target ? target.definition : (await this.workflow(version)).definition, options);
    checkArgs(options);
    const command: CommandRecord = {
      id: newId("cmd"),
      runId: source.id,
      type: "fork",
      args: { checkpointId: from.id, ...(options.patch !== undefined ? { patch: options.patch } : {}), ...(target ? { version } : {}), ...(options.restart ? { restart: true } : {}) },
      actor: this.actor,
      reason: options.reason ?? null,
      createdAt: Date.now(),
      status: "pending",
      result: null,
      answeredAt: null,
    };
    await this.record(command);
    try {
      if (target) await storeVersion(this.store, target);
      const { definition, validator } = await this.workflow(version);
      const sourceState = await readState(this.store, runId, from.n);
      const patched = options.patch === undefined ? sourceState : applyStatePatch(sourceState, options.patch, validator, (key) => reducerName(definition.state[key]?.reducer)).state;
      const state = target ? fitState(validator, patched, from, version) : patched;
      const diff = diffStates(sourceState, state);
      const id = derivedId("run", command.id);
      await this.store.createRun(
        newRun({
          id,
          workflow: { name: source.workflow, version },
          state,
          actor: this.actor,
          secretKeys: this.secretKeys,
          // A fork is a run of its own, not a child: it outlives its source and is deleted on its own.
          forkOf: { runId: source.id, checkpointId: from.id },
          // Restarted, it plans from the start node (newRun's own plan); its steps count on.
          ...(options.restart
            ? { next: [definition.start] }
            : {
                control: target ? { ...from.control, visits: Object.fromEntries(Object.entries(from.control.visits).filter(([node]) => Object.hasOwn(definition.nodes, node))) } : from.control,
                next: from.next,
              }),
          step: from.step,
          interruptBefore: options.interruptBefore !== undefined ? options.interruptBefore : source.interruptBefore,
          interruptAfter: options.interruptAfter !== undefined ? options.interruptAfter : source.interruptAfter,
          ...(diff.length > 0 ? { edited: summarizeDiff(diff) } : {}),
          ...(options.reason ? { reason: options.reason } : {}),
        }),
      );
      const how = options.restart ? `continued from checkpoint ${from.id} as run ${id}, from the start node` : `forked from checkpoint ${from.id} as run ${id}`;
      return (await this.accept(command, `${how}${target ? ` on version ${version.slice(0, 12)}` : ""}`, { runId: id })) as CommandOutcome<{ runId: string }>;
    } catch (error) {
      await this.refuse(command, error).catch(() => undefined);
      throw error;
    }
  }

  /**
   * A structural diff from checkpoint `a` to checkpoint `b`, in the order given (from a later
   * checkpoint to an earlier one it shows what the later steps added as removed), or from `a`'s
   * parent to `a`.
   */
  async diff(runId: string, a: CheckpointRef, b?: CheckpointRef): Promise<{ from: CheckpointRecord | null; to: CheckpointRecord; diff: DiffEntry[] }> {
    const first = await this.checkpoint(runId, a);
    if (b === undefined) {
      const parent = first.parentId ? ((await this.store.getCheckpoint(first.parentId)) ?? null) : null;
      return { from: parent, to: first, diff: await diffCheckpoints(this.store, parent, first) };
    }
    const second = await this.checkpoint(runId, b);
    return { from: first, to: second, diff: await diffCheckpoints(this.store, first, second) };
  }

  /** The state at a checkpoint (default: the run's head). */
  async state(runId: string, checkpoint?: CheckpointRef): Promise<State> {
    const run = await this.mustGetRun(runId);
    const n = checkpoint === undefined ? run.headN : (await this.checkpoint(runId, checkpoint)).n;
    return readState(this.store, runId, n);
  }

  /** A checkpoint by id, or by its number within the run. */
  checkpoint(runId: string, ref: CheckpointRef): Promise<CheckpointRecord> {
    return findCheckpoint(this.store, runId, ref);
  }

  // ---------------------------------------------------------------- command plumbing

  /**
   * Records a command and sees it applied. When nobody owns the run, this process applies it in
   * the same write that records it; otherwise it is queued for the owner, whose answer is awaited.
   */
  private async submit(runId: string, type: CommandType, args: Record<string, unknown>, reason?: string): Promise<CommandOutcome> {
    checkArgs(args);
    const command: CommandRecord = {
      id: newId("cmd"),
      runId,
      type,
      args,
      actor: this.actor,
      reason: reason ?? null,
      createdAt: Date.now(),
      status: "pending",
      result: null,
      answeredAt: null,
    };
    for (let attempt = 0; ; attempt++) {
      const run = await this.mustGetRun(runId);
      if (isOwned(run)) return this.settle(command, run, await this.record(command));
      try {
        return await this.applyHere(command, run, true);
      } catch (error) {
        if (error instanceof Refused) throw error.reason;
        // An earlier try was written after all (its reply lost): its answer stands.
        const stored = error instanceof ConflictError ? await this.store.getCommand(command.id) : undefined;
        if (stored) return stored.status === "pending" ? this.settle(stored, run, 0) : outcomeOf(stored);
        // The run moved on, or a worker claimed it meanwhile: look again.
        if (!(error instanceof StaleFenceError || error instanceof ConflictError) || attempt >= 8) throw error;
      }
    }
  }

  /** Stores a command for the run's owner; returns the number of its `operator.requested` event. */
  private async record(command: CommandRecord): Promise<number> {
    const { events } = await this.store.submitCommand(command, requested(command, this.secretKeys));
    return events[0]?.seq ?? 0;
  }

  /**
   * Waits for the owner's answer, or applies the command here when nobody owns the run.
   * `run` was read just before the command was stored.
   */
  private async settle(command: CommandRecord, submittedTo: RunRecord, seq: number): Promise<CommandOutcome> {
    const watching = new AbortController();
    const onWaiting = this.onWaiting;
    // Telling is a courtesy: a store error here is the command's own to report.
    if (onWaiting) void watchOwner(this.store, command, submittedTo, watching.signal, onWaiting).catch(() => undefined);
    try {
      return await this.settleOwned(command, submittedTo, seq);
    } finally {
      watching.abort();
    }
  }

  private async settleOwned(command: CommandRecord, submittedTo: RunRecord, seq: number): Promise<CommandOutcome> {
    const deadline = Date.now() + this.totalTimeoutMs;
    let conflicts = 0;
    let known: RunRecord | undefined = submittedTo;
    for (;;) {
      if (!known) {
        const current = await this.store.getCommand(command.id);
        if (current && current.status !== "pending") return outcomeOf(current);
      }
      const run: RunRecord = known ?? (await this.mustGetRun(command.runId));
      known = undefined;
      if (!isOwned(run)) {
        try {
          return await this.applyHere(command, run, false);
        } catch (error) {
          if (error instanceof Refused) throw error.reason;
          if ((error instanceof StaleFenceError || error instanceof ConflictError) && conflicts++ < 8) continue;
          throw error;
        }
      }
      if (Date.now() > deadline) {
        throw new PitwallError("RUN", `command ${command.id} is queued but the worker owning run ${run.id} has not answered yet`);
      }
      await this.waitForAnswer(command, seq, Math.min(this.answerTimeoutMs, Math.max(0, deadline - Date.now())));
    }
  }

  /** Until the command is answered, or the run is released (then this process may apply it). */
  private async waitForAnswer(command: CommandRecord, after: number, timeoutMs: number): Promise<void> {
    const signal = AbortSignal.timeout(timeoutMs);
    try {
      for await (const event of this.store.subscribe({ runId: command.runId, after, signal, types: ANSWER_EVENTS })) {
        const answered = (event.payload as { commandId?: string }).commandId;
        if (answered === undefined || answered === command.id) return;
      }
    } catch (error) {
      if (!signal.aborted) throw error;
    }
  }

  /**
   * Applies a command to a run nobody owns, in one write: the command itself when `record`, its
   * effect and its answer. A refusal is recorded too, and raised as its typed error.
   */
  private async applyHere(command: CommandRecord, run: RunRecord, record: boolean): Promise<CommandOutcome> {
    const prepared = await prepareCommand(command, await this.view(run));
    const batch = prepared.ok ? prepared.batch : new Batch();
    if (record) {
      batch.submit.push(command);
      batch.events.unshift(requested(command, this.secretKeys));
    }
    const answer = prepared.ok ? acceptance(command, prepared.effect, prepared.result ?? {}, this.actor) : refusal(command, prepared.error, this.actor);
    batch.commands.push(answer.answer);
    batch.event(answer.event);
    const expect = prepared.ok ? { expectStatus: [run.status], ...(prepared.writesState ? { expectHead: run.head } : {}) } : {};
    await this.store.commit(batch.toCommit(run.id, run.fence, expect));
    if (!prepared.ok) throw new Refused(prepared.error);
    return outcomeOf({ ...command, ...answer.answer });
  }

  private async view(run: RunRecord): Promise<RunView> {
    const record = await this.workflow(run.version);
    const head = run.head ? await this.store.getCheckpoint(run.head) : undefined;
    if (!head) throw new NotFoundError("checkpoint", String(run.head));
    const [state, tasks, pending] = await Promise.all([
      readState(this.store, run.id, head.n),
      this.store.listTasks(run.id, { step: head.step + 1 }),
      this.store.listInterrupts({ runId: run.id, status: "pending" }),
    ]);
    return {
      run,
      definition: record.definition,
      validator: record.validator,
      reducerOf: (key) => reducerName(record.definition.state[key]?.reducer),
      head,
      state,
      tasks,
      pending,
      interrupt: (id) => this.store.getInterrupt(id),
      executing: false,
      secretKeys: this.secretKeys,
    };
  }

  /** A workflow version and its state validator; versions never change, so they are kept. */
  private async workflow(version: string): Promise<{ definition: WorkflowDefinition; validator: StateValidator }> {
    let found = this.workflows.get(version);
    if (!found) {
      const record = await this.store.getWorkflow(version);
      if (!record) throw new NotFoundError("workflow version", version);
      found = { definition: record.definition, validator: new StateValidator(record.definition.state) };
      this.workflows.set(version, found);
    }
    return found;
  }

  private readonly workflows = new Map<string, { definition: WorkflowDefinition; validator: StateValidator }>();

  private async accept(command: CommandRecord, effect: string, extra: Record<string, unknown>): Promise<CommandOutcome> {
    const answer = acceptance(command, effect, extra, this.actor);
    await this.store.answerCommand(answer.answer, answer.event);
    return outcomeOf({ ...command, ...answer.answer });
  }

  private async refuse(command: CommandRecord, error: unknown): Promise<void> {
    const answer = refusal(command, error, this.actor);
    await this.store.answerCommand(answer.answer, answer.event);
  }

  /** A task of the run's current step, by id or node name. */
  private async resolveTask(runId: string, ref: string, prefer: string[]): Promise<string> {
    const run = await this.mustGetRun(runId);
    if (run.status === "succeeded" || run.status === "canceled") throw new ConflictError(`run ${runId} has ended (${run.status})`);
    const tasks = (await this.store.listTasks(runId, { step: run.step + 1 })).filter((t) => t.parent === null);
    const byId = tasks.find((t) => t.id === ref);
    if (byId) return byId.id;
    const byNode = tasks.filter((t) => t.node === ref);
    if (byNode.length === 0) {
      // A task named by id that is no longer in the current step: someone retried it first, and
      // the run moved on.
      const task = await this.store.getTask(ref);
      if (task && task.runId === runId) {
        throw new ConflictError(`task ${ref} (${task.node}) is ${task.status} in step ${task.step}, and the run is at step ${run.step + 1}: it has moved on (another operator acted first?)`);
      }
      const { definition } = await this.workflow(run.version);
      if (!Object.hasOwn(definition.nodes, ref)) throw new ValidationError(`workflow ${definition.name} has no node "${ref}" (nor is it a task of the current step)`);
      const current = [...new Set(tasks.map((t) => t.node))].sort();
      throw new ConflictError(`node "${ref}" has no task in the current step (step ${run.step + 1}) of run ${runId}${current.length > 0 ? `, which runs ${current.join(", ")}` : ""}; only tasks of that step can be ${prefer.includes("running") ? "killed" : "retried"}`);
    }
    const preferred = byNode.filter((t) => prefer.includes(t.status));
    if (preferred.length > 1) {
      throw new ValidationError(`node "${ref}" has ${preferred.length} tasks in this step (${preferred.map((t) => t.id).join(", ")}); name one by id`);
    }
    return (preferred[0] ?? byNode[0]!).id;
  }

  private async mustGetRun(id: string): Promise<RunRecord> {
    return (await this.store.getRun(id)) ?? notFound("run", id);
  }
}

/** A refused command, answered by whichever process applied it, raised here as its typed error. */
function outcomeOf(command: Pick<CommandRecord, "status" | "result"> & CommandRecord): CommandOutcome {
  if (command.status === "refused") {
    const reason = String(command.result?.reason ?? "refused");
    switch (command.result?.code) {
      case "CONFLICT":
        throw new ConflictError(reason);
      case "NOT_FOUND":
        throw new PitwallError("NOT_FOUND", reason);
      case "VALIDATION":
        throw new ValidationError(reason, (command.result?.issues as ValidationError["issues"] | undefined) ?? []);
      default:
        throw new PitwallError("RUN", reason);
    }
  }
  return { command, effect: String(command.result?.effect ?? ""), result: command.result ?? {} };
}

/** A command this process refused (and recorded as refused): its error is final. */
class Refused extends Error {
  constructor(readonly reason: Error) {
    super(reason.message);
  }
}

/** The audit event of a command, stored with it. */
function requested(command: CommandRecord, secretKeys: readonly string[]) {
  const { id, type, args, reason } = command;
  return new EventFactory(command.runId, command.actor, secretKeys).run("operator.requested", { commandId: id, command: type, args, ...(reason ? { reason } : {}) });
}

/**
 * A patch or a response, checked before the command that carries it is stored: one nested
 * thousands of levels deep would overflow the stack of the write that records it. A patch nests
 * its values in operations (`[{ "value": ... }]`), a few levels more than the state it edits;
 * the edited state is checked exactly when the patch is applied.
 */
function checkArgs(args: { patch?: unknown; response?: unknown }): void {
  if (args.patch !== undefined) checkValue(args.patch, "the patch", MAX_DEPTH + 2);
  if (args.response !== undefined) checkValue(args.response, "the response");
}

/** A worker holds the run's lease: commands go to it. */
function isOwned(run: RunRecord): boolean {
  return run.status === "running" && run.owner !== null && (run.leaseUntil ?? 0) > Date.now();
}

/** Events after which a waiting operator looks again: an answer, or the run no longer owned. */
const ANSWER_EVENTS: EventType[] = ["operator.accepted", "operator.refused", "run.released", "run.paused"];

function reducerName(reducer: unknown): "replace" | "append" | "merge" {
  return reducer === "append" || reducer === "merge" ? reducer : "replace";
}

function notFound(what: string, id: string): never {
  throw new NotFoundError(what, id);
}
