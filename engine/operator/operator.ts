import { userInfo } from "node:os";
import { ConflictError, ValidationError } from "../errors.js";
import { derivedId, newId } from "../ids.js";
import { checkSignalData, checkSignalName } from "../runtime/signal-inbox.js";
import type { DiffEntry } from "../state/diff.js";
import type { State } from "../state/ops.js";
import type { CheckpointRecord, RunRecord } from "../store/records.js";
import type { Store } from "../store/store.js";
import { CommandDelivery } from "./command-delivery.js";
import type { CommandOutcome } from "./command-records.js";
import { forkRun, type ForkOptions, type ForkResult } from "./fork.js";
import { notFound } from "./must-get.js";
import { Schedules } from "./schedules.js";
import type { OwnerWaiting } from "./owner-watch.js";
import { signalWaiterBelow } from "./signal-waiters.js";
import { startForSignal, type SignalStart } from "./signal-with-start.js";
import { checkpointDiff, findCheckpoint, stateAt, type CheckpointRef } from "./reads.js";
import { taskOfCurrentStep } from "./task-ref.js";
import { upgradeRun, type UpgradeOptions, type UpgradeOutcome } from "./upgrade.js";
import { WorkflowVersions } from "./workflow-versions.js";
import { childCancelReason } from "../worker/commands.js";

export type { CommandOutcome } from "./command-records.js";

/**
 * What a signal did: its id; `node`, the node it let go on; else `waitingRun`, a run below (a
 * sub-workflow's) whose node waits for it, where it was most likely meant to go.
 */
export interface SignalResult extends Record<string, unknown> {
  signalId: string;
  node?: string;
  waitingRun?: string;
}

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
 * itself — with the same code, under the same fencing rules (command-delivery.ts). Refusals throw
 * typed errors (ValidationError, ConflictError, NotFoundError) and leave an `operator.refused` event.
 */
export class Operator {
  readonly actor: string;
  private readonly versions: WorkflowVersions;
  private readonly commands: CommandDelivery;

  constructor(
    readonly store: Store,
    options: OperatorOptions = {},
  ) {
    this.actor = options.actor ?? defaultActor();
    this.versions = new WorkflowVersions(store);
    this.commands = new CommandDelivery(store, this.versions, {
      actor: this.actor,
      secretKeys: options.secretKeys ?? [],
      answerTimeoutMs: options.answerTimeoutMs ?? 2_000,
      totalTimeoutMs: options.totalTimeoutMs ?? 30_000,
      onWaiting: options.onWaiting,
    });
  }

  // ---------------------------------------------------------------- commands that change a run

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
    return this.commands.submit(runId, "resolve", {
      interruptIds: ids,
      decision: input.decision,
      ...(input.response !== undefined ? { response: input.response } : {}),
      ...(input.patch !== undefined ? { patch: input.patch } : {}),
    }, input.reason);
  }

  /** Edits the state of a paused (or queued) run; validated, recorded as an `update` checkpoint. */
  updateState(runId: string, patch: unknown, options: { asNode?: string; reason?: string } = {}): Promise<CommandOutcome> {
    return this.commands.submit(runId, "update", { patch, ...(options.asNode ? { asNode: options.asNode } : {}) }, options.reason);
  }

  /** Aborts the running task(s) of a run (one task by id or node name, or all); the run pauses. */
  async kill(runId: string, options: { task?: string; reason?: string } = {}): Promise<CommandOutcome> {
    const taskId = options.task ? await taskOfCurrentStep(this.store, this.versions, runId, options.task, ["running"]) : undefined;
    return this.commands.submit(runId, "kill", taskId ? { taskId } : {}, options.reason);
  }

  /** Puts a failed or canceled task back to pending (optionally editing the state first). */
  async retry(runId: string, task: string, options: { patch?: unknown; reason?: string } = {}): Promise<CommandOutcome> {
    const taskId = await taskOfCurrentStep(this.store, this.versions, runId, task, ["failed", "canceled"]);
    return this.commands.submit(runId, "retry", { taskId, ...(options.patch !== undefined ? { patch: options.patch } : {}) }, options.reason);
  }

  /**
   * Ends a run as canceled; its running tasks are aborted and its child runs canceled.
   * `commandId` makes a sender's retry safe: the same cancel sent again gets the first one's
   * outcome; with `exclusive`, only the sender that recorded it does (the others, other processes
   * sending one command, get a ConflictError).
   */
  async cancel(runId: string, options: { reason: string; commandId?: string; exclusive?: boolean }): Promise<CommandOutcome> {
    if (!options?.reason?.trim()) throw new ValidationError("cancel needs a reason");
    const outcome = await this.commands.submit(runId, "cancel", {}, options.reason, options.commandId, options.exclusive);
    // A worker that owned the run cancels its children; a run nobody owned (a parent waiting on a
    // child holds no lease) has them canceled here.
    const { runs: children } = await this.store.listRuns({ parentRunId: runId, status: ["queued", "running", "paused"] });
    for (const child of children) {
      try {
        await this.cancel(child.id, { reason: childCancelReason(runId, options.reason), ...(options.commandId ? { commandId: derivedId("cmd", options.commandId, child.id) } : {}), ...(options.exclusive ? { exclusive: true } : {}) });
      } catch (error) {
        if (!(error instanceof ConflictError)) throw error;
      }
    }
    return outcome;
  }

  /**
   * Sends a run a signal — an event from outside it: a payment confirmed, a build finished, a
   * webhook — kept in its inbox until a node takes it (`ctx.receive(name)`, a wait node's `signal`),
   * the oldest of its name first; a node waiting for it goes on at once. When none of the run's
   * nodes waits for it, its effect says so, and names a run below (a sub-workflow's) that waits
   * for it (`result.waitingRun`): the signal stays in this run's inbox, for a node that asks later.
   * Refused for a run that has ended. `commandId` makes a sender's retry safe: the same signal sent
   * again (same actor, run, name and data) under it gets the first one's outcome, and is recorded once.
   */
  async signal(runId: string, name: string, data?: unknown, options: { reason?: string; commandId?: string } = {}): Promise<CommandOutcome<SignalResult>> {
    checkSignalName(name);
    checkSignalData(data);
    const outcome = (await this.commands.submit(runId, "signal", { name, ...(data !== undefined ? { data } : {}) }, options.reason, options.commandId)) as CommandOutcome<SignalResult>;
    if (outcome.result.node !== undefined) return outcome;
    // Kept, none of the run's nodes waiting: the sender may have meant a sub-workflow's run.
    const below = await this.signalWaiterBelow(runId, name);
    if (!below) return outcome;
    return { ...outcome, effect: `${outcome.effect}; run ${below.id} waits for it: signal that run`, result: { ...outcome.result, waitingRun: below.id } };
  }

  /**
   * Signal-with-start (Temporal's SignalWithStart, a webhook's first call): starts the run
   * `start.runId` of `start.workflow` (from `start.input`, with the start's options) when no run
   * has that id, then sends it the signal, as `signal` does; `result.started` says whether this
   * call started it. A run with that id of another workflow is refused, nothing sent
   * (ConflictError); of two senders racing, one starts the run and both signals land.
   */
  async signalWithStart(
    start: SignalStart,
    name: string,
    data?: unknown,
    options: { reason?: string; commandId?: string } = {},
  ): Promise<CommandOutcome<SignalResult & { started: boolean }>> {
    checkSignalName(name);
    checkSignalData(data);
    // The signal's id is known before the run is made: its run.created names it.
    const commandId = options.commandId ?? newId("cmd");
    const started = await startForSignal(this.store, this.actor, start, { id: commandId, name });
    const outcome = await this.signal(start.runId, name, data, { ...options, commandId });
    // A run just started has no node waiting yet: that is no reason for the sender to look elsewhere.
    const effect = started && outcome.result.node === undefined ? `signal ${name} kept for run ${start.runId}, started for it: the first of its nodes to ask for it takes it` : outcome.effect;
    return { ...outcome, effect, result: { ...outcome.result, started } };
  }

  /** Pauses the run before `node` each time it is scheduled, until `clearBreakpoint`. */
  breakpoint(runId: string, node: string, reason?: string): Promise<CommandOutcome> {
    return this.commands.submit(runId, "break", { node }, reason);
  }

  clearBreakpoint(runId: string, node: string, reason?: string): Promise<CommandOutcome> {
    return this.commands.submit(runId, "unbreak", { node }, reason);
  }

  // ---------------------------------------------------------------- schedules

  /** The store's schedules (runs started at cron times by the workers), made and changed as this operator. */
  get schedules(): Schedules {
    return new Schedules(this.store, this.actor);
  }

  // ---------------------------------------------------------------- forks

  /**
   * Starts a new run whose history begins at a checkpoint of another (optionally with a state
   * patch). The source run is not changed. Returns the new run's id in `result.runId`. With
   * `workflow`, another version of the same workflow (a fixed one, say) runs the fork: the
   * checkpoint's state must fit its schema (the patch is checked against it) and the nodes the
   * run is at must still exist. With `restart`, the fork runs the workflow again from its start
   * node on that state (a new turn of a conversation), instead of going on where the checkpoint was.
   * `interruptBefore`/`interruptAfter` replace the source run's lists (`[]`: none; `null`: the workflow's).
   * The fork's inbox starts with the signals of the source its history has not taken (those its
   * nodes took after the checkpoint, and those it holds untaken), oldest first, counted in
   * `result.carriedSignals`; `signals: "none"` starts it empty, as a `restart` does by default.
   */
  fork(runId: string, checkpoint: CheckpointRef, options: ForkOptions = {}): Promise<CommandOutcome<ForkResult>> {
    return forkRun(this.commands, this.versions, runId, checkpoint, options);
  }

  // ---------------------------------------------------------------- versions

  /**
   * Moves a run, in place, onto another version of its workflow (a fixed one, say): a run waiting
   * on an approval, or queued behind a bug, goes on under it, keeping its id and history (Temporal's
   * worker versioning, LangGraph's resume under new code). Only a run nobody executes moves —
   * queued, paused, or failed (a retry then runs it under the new version); a running or ended
   * run is refused (ConflictError). The new version must go on from the run's head checkpoint as
   * a fork onto it would (the nodes the run is at, routes taken, its interrupt lists, breakpoints,
   * pending interrupts and parked tasks, the state fitting the new schema: ValidationError,
   * naming what). When the new schema changes the state (defaults of new keys, `patch`), the
   * change is written as an `update` checkpoint with a `state.edited` diff. Recorded as an
   * `upgrade` command with a `run.upgraded` event, all in one write made only while the run is as
   * it was checked: a worker claiming it meanwhile never runs it half under each version. A run on
   * that version already is left as it is, nothing written (`unchanged: true`, no command).
   */
  upgrade(runId: string, options: UpgradeOptions): Promise<UpgradeOutcome> {
    return upgradeRun(this.commands, this.versions, runId, options);
  }

  // ---------------------------------------------------------------- reads

  /**
   * A structural diff from checkpoint `a` to checkpoint `b`, in the order given (from a later
   * checkpoint to an earlier one it shows what the later steps added as removed), or from `a`'s
   * parent to `a`.
   */
  diff(runId: string, a: CheckpointRef, b?: CheckpointRef): Promise<{ from: CheckpointRecord | null; to: CheckpointRecord; diff: DiffEntry[] }> {
    return checkpointDiff(this.store, runId, a, b);
  }

  /**
   * The run below `runId` (a sub-workflow's, or theirs) not ended with a node waiting for a signal
   * `name` now, the nearest first; undefined when none has.
   */
  signalWaiterBelow(runId: string, name: string): Promise<RunRecord | undefined> {
    return signalWaiterBelow(this.store, runId, name);
  }

  /** The state at a checkpoint (default: the run's head). */
  state(runId: string, checkpoint?: CheckpointRef): Promise<State> {
    return stateAt(this.store, runId, checkpoint);
  }

  /** A checkpoint by id, or by its number within the run. */
  checkpoint(runId: string, ref: CheckpointRef): Promise<CheckpointRecord> {
    return findCheckpoint(this.store, runId, ref);
  }
}
