import { ConflictError, StaleFenceError, StoreError, errorMessage, isPitwallError } from "../errors.js";
import type { CompiledWorkflow } from "../graph/model.js";
import { MAX_TIMER_MS } from "../graph/definition.js";
import type { State } from "../state/ops.js";
import { loadStateChain } from "../state/read.js";
import type { SnapshotPolicy } from "../state/snapshot.js";
import { headFields, type CommandRecord, type RunRecord, type RunStatus, type TaskRecord } from "../store/records.js";
import type { Claim, Store } from "../store/store.js";
import { acceptance, cancelBatch, canceledEffect, prepareCommand, refusal, type RunView } from "../worker/commands.js";
import type { AttemptOutcome } from "./attempt.js";
import { InflightTasks } from "./inflight.js";
import { Batch } from "./batch.js";
import { DurableCalls } from "./calls.js";
import { EventFactory } from "./event-factory.js";
import { failTask, quarantine, recordOutcome, recoverLostTasks, resumeParked } from "./outcomes.js";
import { RunState } from "./run-state.js";
import { NOT_SAVED } from "./retry.js";
import { TaskAbortedError, type AbortCause } from "./signals.js";
import { barrier, planStep, settle, startTasks, startable, stepProgress, waitingWhy } from "./step.js";
import { runTransition, waitsForPerson } from "./transitions.js";

export interface ExecutorOptions {
  workerId: string;
  leaseMs: number;
  /** How long a killed node that ignores its signal is waited for before it is abandoned. */
  killGraceMs: number;
  snapshotPolicy: SnapshotPolicy;
  /** Names of secrets, added to the default ones, whose values events and records people read never hold. */
  secretKeys: readonly string[];
  /** At most one `node.progress` event per task per this many milliseconds. */
  progressIntervalMs: number;
  /** A retry backoff longer than this releases the run (queued with a wake time) instead of holding it. */
  holdBackoffMs: number;
  /** A run taken over after lost workers more often than this pauses as `poison` instead of running again. */
  maxRecoveries: number;
}

/** What the executor needs from the engine around it. */
export interface ExecutorHost {
  readonly store: Store;
  /** The child run of a sub-workflow task for `generation`, created on first call. */
  childRun(parent: RunRecord, task: TaskRecord, child: CompiledWorkflow, input: State, generation: number): Promise<RunRecord>;
  /** Cancels a child run of a canceled run (through a command, for its audit trail). */
  cancelChild(runId: string, actor: string, reason: string): Promise<void>;
  /** A commit of the run waits for the store to answer (it is tried again), and why. */
  commitWaiting?(runId: string, error: string): void;
  /** A commit that waited went through (`through`), or was given up (the worker stopping). */
  commitSettled?(runId: string, through: boolean): void;
  /** A node ignored its abort signal through the grace period and was left running, its result to be discarded. */
  nodeAbandoned?(runId: string, task: TaskRecord, cause: AbortCause): void;
}

export interface ExecutionEnd {
  status: RunStatus;
  why: string;
}

type Message =
  | { kind: "outcome"; taskId: string; attempt: number; outcome: AttemptOutcome }
  | { kind: "command"; command: CommandRecord }
  | { kind: "tick" }
  | { kind: "submit"; batch: Batch; done: (error?: unknown) => void }
  | { kind: "stop"; cause: StopCause };

/**
 * Why the executor stops before the run does: `drain` lets the running nodes finish (and commits
 * their results) but starts nothing more; `shutdown` aborts them; then the run is released.
 */
type StopCause = "drain" | "shutdown" | "lease-lost";

class Stopped extends Error {}


/**
 * Drives one claimed run, super-step by super-step, until it pauses, parks, ends or its lease is
 * lost. All of its decisions happen on one logical thread (a message loop), and every change is
 * committed through the store with the run's fencing token.
 */
export class RunExecutor {
  private readonly rs: RunState;
  private readonly fence: number;
  private readonly inflight: InflightTasks;
  private readonly inbox: Message[] = [];
  private wakeLoop: (() => void) | undefined;
  private readonly timers = new Set<NodeJS.Timeout>();
  private readonly tickTimes = new Set<number>();
  private leaseTimer: NodeJS.Timeout | undefined;
  /** When the lease timer last fired: a gap longer than the lease means the event loop was held. */
  private leaseTick = 0;
  /** The longest such gap seen, in ms (a node computing without awaiting holds the whole worker). */
  private heldMs = 0;
  private flushTimer: NodeJS.Timeout | undefined;
  private commits = 0;
  private cancelRequest: CommandRecord | undefined;
  private stopping: StopCause | undefined;
  private end: ExecutionEnd | undefined;
  private readonly events: EventFactory;
  private readonly calls: DurableCalls;
  readonly done: Promise<ExecutionEnd>;

  constructor(
    private readonly host: ExecutorHost,
    workflow: CompiledWorkflow,
    claim: Claim,
    private readonly options: ExecutorOptions,
  ) {
    this.fence = claim.fence;
    this.events = new EventFactory(claim.run.id, `worker:${options.workerId}`, options.secretKeys);
    this.rs = new RunState(workflow, claim.run, this.events, options.workerId);
    this.calls = new DurableCalls({
      submit: (batch) => new Promise((resolve, reject) => this.post({ kind: "submit", batch, done: (error) => (error ? reject(error) : resolve()) })),
      events: this.events,
      workerId: options.workerId,
    });
    this.inflight = new InflightTasks({
      rs: this.rs,
      host,
      calls: this.calls,
      events: this.events,
      options,
      onOutcome: (taskId, attempt, outcome) => this.post({ kind: "outcome", taskId, attempt, outcome }),
      onEvent: (event) => this.deferEvent(event),
    });
    this.done = this.execute(claim.recovered);
  }

  get runId(): string {
    return this.rs.run.id;
  }

  /** Hands an operator command for this run to the executor. */
  command(command: CommandRecord): void {
    this.post({ kind: "command", command });
  }

  /**
   * Stops starting work: the nodes running now finish and their results are committed, then the
   * run is released for another worker. `stop()` after it aborts the nodes still running.
   */
  drain(): Promise<ExecutionEnd> {
    this.post({ kind: "stop", cause: "drain" });
    return this.done;
  }

  /** The nodes running now (tasks of the step in progress). */
  runningNodes(): string[] {
    return [...this.inflight.ids()].map((id) => this.rs.tasks.get(id)?.node ?? id);
  }

  /** Renews the lease now (the store answers again after a silence: the lease may have run out meanwhile). */
  renewNow(): void {
    void this.renewLease();
  }

  /** Graceful stop: running tasks are aborted and the run is released for another worker. */
  stop(): Promise<ExecutionEnd> {
    // Read at once by a commit waiting for the store to answer: the loop cannot take messages then.
    this.shutdownAsked = true;
    this.post({ kind: "stop", cause: "shutdown" });
    return this.done;
  }

  private shutdownAsked = false;

  private post(message: Message): void {
    this.inbox.push(message);
    const wake = this.wakeLoop;
    this.wakeLoop = undefined;
    wake?.();
  }

  private async execute(recovered: boolean): Promise<ExecutionEnd> {
    this.leaseTick = Date.now();
    this.leaseTimer = setInterval(() => void this.renewLease(), Math.max(50, this.options.leaseMs / 3));
    try {
      await this.load(this.rs.run);
      if (recovered && (this.rs.run.lostInARow ?? 0) > this.options.maxRecoveries) {
        quarantine(this.rs);
        await this.commit();
        return this.end!;
      }
      if (recovered) {
        this.calls.recoverLost(this.rs.batch, Date.now());
        recoverLostTasks(this.rs);
      }
      resumeParked(this.rs);
      for (const command of await this.host.store.listCommands({ runId: this.rs.run.id, status: "pending" })) {
        this.post({ kind: "command", command });
      }
      while (!this.end) {
        const message = this.inbox.shift();
        if (message) {
          await this.handle(message);
          continue;
        }
        while (!this.end && this.inbox.length === 0 && (await this.reconcile()));
        if (this.end || this.inbox.length > 0) continue;
        await new Promise<void>((resolve) => (this.wakeLoop = resolve));
      }
    } catch (error) {
      if (!(error instanceof Stopped)) {
        this.inflight.abortAll("lease-lost");
        if (!isPitwallError(error) && (await this.recordBreakdown(error))) return this.end!;
        this.end = { status: this.rs.run.status, why: `executor error: ${errorMessage(error)}` };
        throw error;
      }
    } finally {
      clearInterval(this.leaseTimer);
      clearTimeout(this.flushTimer);
      for (const t of this.timers) clearTimeout(t);
    }
    return this.end!;
  }

  // ---------------------------------------------------------------- loading

  /** Reads the run's head, its step's tasks and its interrupts; `claimed` is the run as just claimed (read otherwise). */
  private async load(claimed?: RunRecord): Promise<void> {
    const store = this.host.store;
    const rs = this.rs;
    const run = claimed ?? (await store.getRun(rs.run.id));
    if (!run) throw new Error(`run ${rs.run.id} vanished`);
    rs.run = run;
    const head = run.head ? await store.getCheckpoint(run.head) : undefined;
    if (!head) throw new Error(`run ${run.id} has no head checkpoint`);
    rs.head = head;
    rs.chain = await loadStateChain(store, run.id, head, this.options.snapshotPolicy);
    const tasks = await store.listTasks(run.id, { step: head.step + 1 });
    rs.tasks = new Map(tasks.filter((t) => t.parent === null).map((t) => [t.id, t]));
    this.calls.load(tasks.filter((t) => t.parent !== null));
    const interrupts = await store.listInterrupts({ runId: run.id });
    rs.interrupts = new Map(interrupts.filter((i) => i.status === "pending" || i.step === head.step + 1).map((i) => [i.id, i]));
  }

  // ---------------------------------------------------------------- the loop

  private async handle(message: Message): Promise<void> {
    switch (message.kind) {
      case "outcome":
        return this.onOutcome(message.taskId, message.attempt, message.outcome);
      case "command":
        return this.onCommand(message.command);
      case "tick":
        if (!this.rs.batch.empty) await this.commit();
        return;
      case "submit": {
        if (this.end || this.stopping === "lease-lost") {
          message.done(new TaskAbortedError("lease-lost", "the run's lease was lost"));
          return;
        }
        this.rs.batch.absorb(message.batch);
        try {
          await this.commit();
          message.done();
        } catch (error) {
          message.done(error);
          throw error;
        }
        return;
      }
      case "stop":
        return this.onStop(message.cause);
    }
  }

  /** Takes the next action the run's state calls for; true when it changed something. */
  private async reconcile(): Promise<boolean> {
    const rs = this.rs;
    if (rs.run.status !== "running") {
      this.finish(`run is ${rs.run.status}`);
      return false;
    }
    const running = this.inflight.ids();
    if (this.cancelRequest) {
      if (running.size > 0) return false;
      await this.commitCancel(this.cancelRequest);
      return true;
    }
    if (this.stopping === "shutdown" || this.stopping === "drain") {
      if (running.size > 0) return false;
      await this.release();
      return true;
    }
    if (rs.tasks.size === 0) {
      planStep(rs, rs.chain.state, rs.head.control, rs.step, running);
      await this.commit();
      return true;
    }
    const now = Date.now();
    const ready = startable(rs, running, now);
    if (ready.length > 0) {
      startTasks(rs, ready);
      await this.commit();
      return true;
    }
    const { nextWake, allSucceeded } = stepProgress(rs, running);
    if (running.size > 0 || (nextWake !== Infinity && nextWake - now <= this.options.holdBackoffMs)) {
      if (nextWake !== Infinity) this.tickAt(nextWake);
      if (!rs.batch.empty) await this.commit();
      return false;
    }
    if (allSucceeded) barrier(rs, running);
    else settle(rs, nextWake);
    await this.commit();
    return true;
  }

  private async onOutcome(taskId: string, attempt: number, outcome: AttemptOutcome): Promise<void> {
    if (!this.inflight.settle(taskId, attempt)) return;
    const task = this.rs.tasks.get(taskId);
    if (task && outcome.kind === "canceled" && outcome.abandoned) this.host.nodeAbandoned?.(this.rs.run.id, task, outcome.cause);
    if (!task || task.status !== "running" || this.stopping === "lease-lost") return;
    recordOutcome(this.rs, task, outcome);
    this.calls.closeRunning(task.id, this.rs.batch, outcome.kind === "canceled" ? `its node was ${outcome.cause === "killed" ? "killed by operator" : outcome.cause}` : "its node ended before it", Date.now());
    // Results are made durable at once while siblings still run; the last one rides with the step.
    if (this.inflight.size > 0) await this.commit();
  }

  // ---------------------------------------------------------------- commands

  private async onCommand(command: CommandRecord): Promise<void> {
    const current = await this.host.store.getCommand(command.id);
    if (!current || current.status !== "pending") return;
    if (command.type === "kill") return this.onKill(command);
    if (command.type === "cancel") {
      this.cancelRequest = command;
      this.inflight.abortAll("canceled");
      return;
    }
    const view: RunView = {
      run: this.rs.run,
      definition: this.rs.workflow.definition,
      validator: this.rs.workflow.validator,
      reducerOf: (key) => this.rs.workflow.reducerOf(key),
      head: this.rs.head,
      state: this.rs.chain.state,
      tasks: [...this.rs.tasks.values()],
      pending: this.rs.pendingInterrupts(),
      interrupt: (id) => this.host.store.getInterrupt(id),
      executing: this.inflight.size > 0,
      secretKeys: this.options.secretKeys,
    };
    const prepared = await prepareCommand(command, view);
    if (!prepared.ok) {
      await this.answer(refusal(command, prepared.error, command.actor));
      return;
    }
    await this.commit();
    this.rs.batch = prepared.batch;
    this.rs.batch.answer(acceptance(command, prepared.effect, prepared.result ?? {}, command.actor));
    await this.commit(prepared.writesState ? { expectHead: this.rs.head.id } : {});
    await this.load();
  }

  private async onKill(command: CommandRecord): Promise<void> {
    const taskId = command.args.taskId as string | undefined;
    const targets = [...this.inflight.ids()].filter((id) => taskId === undefined || id === taskId);
    if (targets.length === 0) {
      const error = new ConflictError(taskId ? `task ${taskId} is not running` : `run ${this.rs.run.id} has no running task`);
      await this.answer(refusal(command, error, command.actor));
      return;
    }
    for (const id of targets) this.inflight.abort(id, "killed");
    const nodes = targets.map((id) => this.rs.tasks.get(id)?.node ?? id);
    const effect = `killing ${nodes.join(", ")} (abandoned after ${this.options.killGraceMs} ms if it ignores its signal)`;
    await this.answer(acceptance(command, effect, {}, command.actor));
  }

  private async commitCancel(command: CommandRecord): Promise<void> {
    const pending = this.rs.pendingInterrupts();
    const batch = cancelBatch(this.rs.run, [...this.rs.tasks.values()], pending, command.actor, command.reason ?? "canceled by operator", new EventFactory(this.rs.run.id, command.actor, this.options.secretKeys));
    this.rs.batch.absorb(batch);
    this.rs.batch.answer(acceptance(command, canceledEffect(this.rs.run.id), {}, command.actor));
    this.cancelRequest = undefined;
    await this.commit();
    const children = await this.host.store.listRuns({ parentRunId: this.rs.run.id, status: ["queued", "running", "paused"] });
    for (const child of children.runs) await this.host.cancelChild(child.id, command.actor, `parent run ${this.rs.run.id} canceled`);
  }

  private async answer(answer: ReturnType<typeof acceptance> | ReturnType<typeof refusal>): Promise<void> {
    this.rs.batch.answer(answer);
    await this.commit();
  }

  /**
   * An error of this process's own — not the store's — while it prepared or saved a step (a bug,
   * a value the store cannot write): asking again would meet it again. Left to its lease, the
   * run would be taken over, its tasks run again as if their worker had died (repeating their
   * side effects) until it paused as poison. So it is recorded, from the run as stored: the
   * tasks that were running fail with it, not retried, and the run pauses for an operator (or
   * fails, by the node's `onExhausted`). False when that could not be written either.
   */
  private async recordBreakdown(error: unknown): Promise<boolean> {
    const message = `the step could not be saved: ${errorMessage(error)}`;
    try {
      this.rs.batch = new Batch();
      this.rs.launch = [];
      await this.load();
      const rs = this.rs;
      const now = Date.now();
      const running = [...rs.tasks.values()].filter((t) => t.status === "running");
      for (const task of running) {
        failTask(rs, task, new Error(message), NOT_SAVED, now);
        this.calls.closeRunning(task.id, rs.batch, "its node's step could not be saved", now);
      }
      if (running.length > 0) settle(rs, Infinity);
      else rs.pause("retries-exhausted", rs.run.current, { code: NOT_SAVED, message });
      await this.commit();
      return this.end !== undefined;
    } catch {
      return false;
    }
  }

  // ---------------------------------------------------------------- stopping

  /** The lease timer fires every third of the lease unless the event loop is held: a longer gap says it was. */
  private noteHeldLoop(): void {
    const gap = Date.now() - this.leaseTick;
    if (gap > this.options.leaseMs) this.heldMs = Math.max(this.heldMs, gap);
  }

  private async onStop(cause: StopCause): Promise<void> {
    // A drain asked of an executor already shutting down (or lost) changes nothing.
    if (cause === "drain" && this.stopping !== undefined) return;
    this.stopping = cause;
    if (cause === "drain") return;
    if (cause === "lease-lost") {
      this.noteHeldLoop();
      this.inflight.abortAll("lease-lost");
      this.finish(
        this.heldMs > 0
          ? `lease lost: this process's event loop was held for ${(this.heldMs / 1000).toFixed(1)} s (by a node computing without awaiting, or the process was stopped or suspended), past the ${this.options.leaseMs / 1000} s lease, so it could not renew it, and the run was claimed again; a node that computes that long without awaiting holds its whole worker: await in the work, move it to a worker thread, or give workers a longer lease (pitwall worker --lease, WorkerOptions.leaseMs)`
          : "lease lost: it ran out before it was renewed, and the run was claimed again (by another worker, or by this one once it could)",
      );
      return;
    }
    this.inflight.abortAll("shutdown");
  }

  /**
   * Hands the run back (queued) so another worker continues it; or, when nothing is left that a
   * worker could run and a task waits for a person (an at-most-once node stopped part-way asks
   * whether to run it again), pauses it for them, as any worker would at once.
   */
  private async release(): Promise<void> {
    const tasks = [...this.rs.tasks.values()];
    const blocked = (t: TaskRecord) => t.status === "failed" || t.status === "canceled" || waitsForPerson(t);
    if (!tasks.some((t) => t.status === "pending") && tasks.some(blocked)) {
      settle(this.rs, Infinity);
    } else {
      this.rs.batch.patchRun(runTransition(this.rs.run, "queued"));
      this.rs.batch.event(this.events.run("run.released", { status: "queued", why: "worker shutting down" }));
    }
    await this.commit();
  }

  private finish(why: string): void {
    this.end ??= { status: this.rs.run.status, why };
  }

  // ---------------------------------------------------------------- events and commits

  /** Progress and log lines ride with the next commit, or go on their own within ~100 ms. */
  private deferEvent(event: ReturnType<EventFactory["run"]>): void {
    if (this.end) return;
    this.rs.batch.event(event);
    if (!this.flushTimer) {
      this.flushTimer = setTimeout(() => {
        this.flushTimer = undefined;
        this.post({ kind: "tick" });
      }, 100);
    }
  }

  /** Wakes the loop at `time` (one timer per distinct time). */
  private tickAt(time: number): void {
    if (this.tickTimes.has(time)) return;
    this.tickTimes.add(time);
    // A time further off than a timer reaches wakes the loop then, which sets the next one.
    const delay = Math.min(MAX_TIMER_MS, Math.max(0, time - Date.now()));
    const timer = setTimeout(() => {
      this.timers.delete(timer);
      this.tickTimes.delete(time);
      this.post({ kind: "tick" });
    }, delay);
    this.timers.add(timer);
  }

  /**
   * Sends the batch. A lost lease stops the executor without writing anything more; a failing
   * store is retried with the same commit id (so a commit whose reply was lost is not applied
   * twice) until the lease would have run out.
   */
  private async commit(expect: { expectHead?: string } = {}): Promise<void> {
    if (this.rs.batch.empty) {
      this.launchPending();
      return;
    }
    const batch = this.rs.batch;
    this.rs.batch = new Batch();
    // A committed step is progress: workers lost before it no longer count towards poison.
    if (batch.checkpoint && (this.rs.run.lostInARow ?? 0) > 0) batch.patchRun({ lostInARow: 0 });
    // Unique without randomness: no two owners share a fence, and this owner counts its commits.
    const commit = batch.toCommit(this.rs.run.id, this.fence, expect, `c${this.fence}.${++this.commits}`);
    // The store away for a while (locked, a disk error, Redis restarting) loses nothing: the commit
    // is tried again until it lands (a commit that landed unseen is known by its id), or until
    // another worker took the run over once the lease ran out (StaleFenceError), which then does
    // the work again. Giving up sooner would throw away finished work and call its worker lost.
    let warned = false;
    for (let delay = 50; ; delay = Math.min(delay * 2, 2000)) {
      try {
        await this.host.store.commit(commit);
        if (warned) this.host.commitSettled?.(this.rs.run.id, true);
        break;
      } catch (error) {
        if (error instanceof StaleFenceError) {
          if (warned) this.host.commitSettled?.(this.rs.run.id, false);
          this.rs.launch = [];
          await this.onStop("lease-lost");
          throw new Stopped();
        }
        // An error that is not the store's (a value it cannot write) would come back each time:
        // it is recorded as the step's failure (recordBreakdown), not tried again.
        if (!isPitwallError(error)) {
          if (warned) this.host.commitSettled?.(this.rs.run.id, false);
          throw error;
        }
        const retryable = error instanceof StoreError && !error.gone && !error.damaged;
        if (error instanceof ConflictError || !retryable || this.shutdownAsked) {
          if (warned) this.host.commitSettled?.(this.rs.run.id, false);
          this.rs.launch = [];
          this.inflight.abortAll("lease-lost");
          this.finish(`commit failed: ${errorMessage(error)}`);
          throw new Stopped();
        }
        if (!warned) this.host.commitWaiting?.(this.rs.run.id, errorMessage(error));
        warned = true;
        await new Promise((resolve) => setTimeout(resolve, delay));
      }
    }
    if (batch.run) Object.assign(this.rs.run, batch.run);
    if (batch.checkpoint) Object.assign(this.rs.run, headFields(batch.checkpoint));
    for (const interrupt of batch.interrupts.values()) this.rs.interrupts.set(interrupt.id, interrupt);
    if (this.rs.run.status !== "running") {
      this.rs.launch = [];
      this.finish(endedWhy(this.rs.run));
      return;
    }
    this.launchPending();
  }

  private launchPending(): void {
    const launch = this.rs.launch;
    this.rs.launch = [];
    for (const task of launch) this.inflight.launch(task);
  }

  private async renewLease(): Promise<void> {
    this.noteHeldLoop();
    this.leaseTick = Date.now();
    if (this.end) return;
    try {
      await this.host.store.renewLease(this.rs.run.id, this.options.workerId, this.fence, this.options.leaseMs);
    } catch (error) {
      if (error instanceof StaleFenceError) this.post({ kind: "stop", cause: "lease-lost" });
    }
  }
}

/** Why a run stopped, in a worker's words: the error of a failed run, what a paused one waits on. */
function endedWhy(run: RunRecord): string {
  if (run.status === "failed" && run.error) return `${run.error.node ? `${run.error.node}: ` : ""}${run.error.message}`;
  if (run.status === "paused") return `${run.reason ?? "paused"}${run.current.length > 0 ? ` at ${run.current.join(", ")}` : ""}`;
  if (run.status === "queued") return run.waitingOn || run.wakeAt ? waitingWhy(run.waitingOn, run.wakeAt ?? Infinity) : "for another worker";
  if (run.status === "succeeded") return `after ${run.step} step${run.step === 1 ? "" : "s"}`;
  return "by an operator";
}
