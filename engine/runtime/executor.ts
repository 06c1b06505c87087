import { errorMessage, isPitwallError } from "../errors.js";
import type { CompiledWorkflow } from "../graph/model.js";
import type { CommandRecord, CheckpointRecord } from "../store/records.js";
import type { Claim } from "../store/store.js";
import type { AttemptOutcome } from "./attempt.js";
import { Batch } from "./batch.js";
import { DurableCalls } from "./calls.js";
import { Committer, Stopped } from "./commit.js";
import { EventFactory } from "./event-factory.js";
import type { ExecutionEnd, ExecutorHost, ExecutorOptions } from "./executor-host.js";
import { InflightTasks } from "./inflight.js";
import { Lease } from "./lease.js";
import { recordOutcome } from "./outcomes.js";
import { failUnsaved, takeOver } from "./recovery.js";
import { RunCommands } from "./run-commands.js";
import { loadRun } from "./run-load.js";
import { RunState } from "./run-state.js";
import { TaskAbortedError } from "./signals.js";
import { barrier, handBack, planStep, settle, startTasks, startable, stepProgress } from "./step.js";
import { StoreClock } from "./store-clock.js";
import { WakeTimers } from "./wake-timers.js";

export type { ExecutionEnd, ExecutorHost, ExecutorOptions } from "./executor-host.js";

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

/**
 * Drives one claimed run, super-step by super-step, until it pauses, parks, ends or its lease is
 * lost. All of its decisions happen on one logical thread (a message loop), and every change is
 * committed through the store with the run's fencing token (commit.ts).
 */
export class RunExecutor {
  private readonly rs: RunState;
  private readonly inflight: InflightTasks;
  private readonly committer: Committer;
  private readonly commands: RunCommands;
  private readonly lease: Lease;
  private readonly wakes: WakeTimers;
  private readonly inbox: Message[] = [];
  private wakeLoop: (() => void) | undefined;
  private cancelRequest: CommandRecord | undefined;
  private stopping: StopCause | undefined;
  private end: ExecutionEnd | undefined;
  private readonly events: EventFactory;
  private readonly calls: DurableCalls;
  readonly done: Promise<ExecutionEnd>;

  /**
   * `arrived`, when given: every command recorded for the run since before it was claimed reaches
   * this executor through `command()`, but these, which came before it was made (their ids).
   */
  constructor(
    private readonly host: ExecutorHost,
    workflow: CompiledWorkflow,
    claim: Claim,
    private readonly options: ExecutorOptions,
    private readonly arrived?: readonly string[],
  ) {
    this.events = new EventFactory(claim.run.id, `worker:${options.workerId}`, options.secretKeys);
    this.rs = new RunState(workflow, claim.run, this.events, options.workerId, StoreClock.of(claim));
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
    this.committer = new Committer(this.rs, claim.fence, host, this.inflight, {
      finish: (why) => this.finish(why),
      leaseLost: () => this.onStop("lease-lost"),
    });
    this.commands = new RunCommands(this.rs, host, this.inflight, this.committer, options, () => this.load());
    this.lease = new Lease(host.store, claim.run.id, options.workerId, claim.fence, options.leaseMs, () => this.end !== undefined, () => this.post({ kind: "stop", cause: "lease-lost" }));
    this.wakes = new WakeTimers(() => this.post({ kind: "tick" }), this.rs.clock);
    this.done = this.execute(claim.recovered, claim.takenFrom, claim.head);
  }

  get runId(): string {
    return this.rs.run.id;
  }

  /** Hands an operator command for this run to the executor. */
  command(command: CommandRecord): void {
    if (ownersCommand(command)) this.post({ kind: "command", command });
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
    void this.lease.renew();
  }

  /** Graceful stop: running tasks are aborted and the run is released for another worker. */
  stop(): Promise<ExecutionEnd> {
    // Read at once by a commit waiting for the store to answer: the loop cannot take messages then.
    this.committer.shutdownAsked = true;
    this.post({ kind: "stop", cause: "shutdown" });
    return this.done;
  }

  private post(message: Message): void {
    // The loop takes no more messages once the execution ended: a node that outlived it (it did
    // not stop when aborted) and records a durable call now is told so, rather than left waiting.
    if (message.kind === "submit" && this.end) return message.done(this.endedError());
    this.inbox.push(message);
    const wake = this.wakeLoop;
    this.wakeLoop = undefined;
    wake?.();
  }

  private async execute(recovered: boolean, takenFrom: string | undefined, head: CheckpointRecord | undefined): Promise<ExecutionEnd> {
    this.lease.start();
    try {
      await this.load({ run: this.rs.run, ...(head ? { head } : {}) });
      const waiting = await this.waitingCommands(recovered);
      // A kill left for the lost worker (its sender gone too) stops the nodes that worker left
      // running, as the sender would have on the run nobody held: applied before recovery, which
      // would run them again, and then find nothing running to kill.
      const kills = recovered ? waiting.filter((command) => command.type === "kill") : [];
      for (const kill of kills) if (await this.commands.pending(kill)) await this.commands.apply(kill, takenFrom ?? "");
      // Handed over first: a run paused as poison at once answers them as it lets go.
      for (const command of waiting) if (!kills.includes(command)) this.command(command);
      const taken = this.rs.run.status === "running" ? takeOver(this.rs, this.calls, recovered, this.options.maxRecoveries) : undefined;
      if (recovered) this.host.tookOver?.(this.rs.run.id, takenFrom, taken);
      if (taken?.poison) await this.committer.commit();
      else await this.loop();
    } catch (error) {
      if (!(error instanceof Stopped)) {
        this.inflight.abortAll("lease-lost");
        if (isPitwallError(error) || !(await this.recordBreakdown(error))) {
          this.end = { status: this.rs.run.status, why: `executor error: ${errorMessage(error)}` };
          throw error;
        }
      }
    } finally {
      this.lease.stop();
      this.wakes.clear();
      this.refuseLeftSubmits();
    }
    await this.answerLeft();
    return this.end!;
  }

  private async loop(): Promise<void> {
    while (!this.end) {
      const message = this.inbox.shift();
      if (message) {
        // Most messages (a node's outcome while no sibling runs) need no wait.
        const handled = this.handle(message);
        if (handled) await handled;
        continue;
      }
      while (!this.end && this.inbox.length === 0 && (await this.reconcile()));
      if (this.end || this.inbox.length > 0) continue;
      await new Promise<void>((resolve) => (this.wakeLoop = resolve));
    }
  }

  /**
   * The commands handed over that the execution ended before applying (they came while the
   * commit that let go of the run was on its way), answered now as on a run nobody holds: their
   * recorders may have stopped, and the run may never be claimed again. A run this executor did
   * not let go of — taken over by another worker, or left as it was by a failed commit — is not
   * its to answer for.
   */
  private async answerLeft(): Promise<void> {
    if (this.rs.run.status === "running" || this.stopping === "lease-lost") return;
    for (let left = this.takeLeft(); left.length > 0; left = this.takeLeft()) await this.host.answerLeft(this.rs.run.id, left);
  }

  /** The durable calls' writes the loop did not take before the execution ended. */
  private refuseLeftSubmits(): void {
    const left = this.inbox.filter((message) => message.kind === "submit");
    this.inbox.splice(0, this.inbox.length, ...this.inbox.filter((message) => message.kind !== "submit"));
    for (const submit of left) submit.done(this.endedError());
  }

  /** Why a node's write is refused: the execution that ran it has ended, or is ending, on this worker. */
  private endedError(): TaskAbortedError {
    if (this.stopping === "lease-lost") return new TaskAbortedError("lease-lost", "the run's lease was lost");
    const why = this.end ? ` (${this.end.why})` : "";
    return new TaskAbortedError(this.stopping === "shutdown" ? "shutdown" : "canceled", `run ${this.rs.run.id}'s execution on this worker has ended${why}: this call's outcome was not recorded`);
  }

  /** The commands in the inbox and a cancel waiting for its nodes to stop, each once (the other messages were for the execution, which has ended). */
  private takeLeft(): CommandRecord[] {
    const left = new Map<string, CommandRecord>();
    if (this.cancelRequest) left.set(this.cancelRequest.id, this.cancelRequest);
    this.cancelRequest = undefined;
    for (const message of this.inbox.splice(0)) if (message.kind === "command") left.set(message.command.id, message.command);
    return [...left.values()];
  }

  /**
   * The commands waiting for the run as its execution starts. A run no worker owned before this
   * claim (no commit applied to it, not taken over) has none but those recorded since: an
   * operator queues a command for a run only while a worker owns it (applying it itself
   * otherwise), and answers a fork's at once. When its worker followed them, those are the ones
   * that `arrived` before this executor was made: the store's list is not needed.
   */
  private async waitingCommands(recovered: boolean): Promise<CommandRecord[]> {
    const store = this.host.store;
    if (!this.arrived || recovered || this.rs.run.lastCommit !== null) return store.listCommands({ runId: this.rs.run.id, status: "pending" });
    const found = await Promise.all(this.arrived.map((id) => store.getCommand(id)));
    return found.filter((command): command is CommandRecord => command?.status === "pending");
  }

  /** Reads the run (claimed: as just claimed) and its step in progress from the store. */
  private load(claimed?: Pick<Claim, "run" | "head">): Promise<void> {
    return loadRun(this.host.store, this.rs, this.calls, this.options.snapshotPolicy, claimed);
  }

  // ---------------------------------------------------------------- the loop

  // Not async itself: each message's handler's promise is returned as it is, without the two
  // turns an async function takes to adopt a promise it returns.
  private handle(message: Message): Promise<void> | void {
    switch (message.kind) {
      case "outcome":
        return this.onOutcome(message.taskId, message.attempt, message.outcome);
      case "command":
        return this.onCommand(message.command);
      case "tick":
        return this.rs.batch.empty ? undefined : this.committer.commit();
      case "submit":
        return this.onSubmit(message.batch, message.done);
      case "stop":
        return this.onStop(message.cause);
    }
  }

  private async onSubmit(batch: Batch, done: (error?: unknown) => void): Promise<void> {
    if (this.end || this.stopping === "lease-lost") {
      done(this.endedError());
      return;
    }
    this.rs.batch.absorb(batch);
    try {
      await this.committer.commit();
      done();
    } catch (error) {
      done(error);
      throw error;
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
      const command = this.cancelRequest;
      this.cancelRequest = undefined;
      await this.commands.cancel(command);
      return true;
    }
    if (this.stopping === "shutdown" || this.stopping === "drain") {
      if (running.size > 0) return false;
      handBack(rs);
      await this.committer.commit();
      return true;
    }
    if (rs.tasks.size === 0) {
      planStep(rs, rs.chain.state, rs.head.control, rs.step, running);
      await this.committer.commit();
      return true;
    }
    const now = rs.clock.now();
    const ready = startable(rs, running, now);
    if (ready.length > 0) {
      startTasks(rs, ready);
      await this.committer.commit();
      return true;
    }
    const { nextWake, allSucceeded } = stepProgress(rs, running);
    if (running.size > 0 || (nextWake !== Infinity && nextWake - now <= this.options.holdBackoffMs)) {
      if (nextWake !== Infinity) this.wakes.at(nextWake);
      if (!rs.batch.empty) await this.committer.commit();
      return false;
    }
    if (allSucceeded) barrier(rs, running);
    else settle(rs, nextWake);
    await this.committer.commit();
    return true;
  }

  private onOutcome(taskId: string, attempt: number, outcome: AttemptOutcome): Promise<void> | void {
    if (!this.inflight.settle(taskId, attempt)) return;
    const task = this.rs.tasks.get(taskId);
    if (task && outcome.kind === "canceled" && outcome.abandoned) this.host.nodeAbandoned?.(this.rs.run.id, task, outcome.cause);
    if (!task || task.status !== "running" || this.stopping === "lease-lost") return;
    recordOutcome(this.rs, task, outcome);
    this.calls.closeRunning(task.id, this.rs.batch, outcome.kind === "canceled" ? `its node was ${outcome.cause === "killed" ? "killed by operator" : outcome.cause}` : "its node ended before it", Date.now());
    // Results are made durable at once while siblings still run; the last one rides with the step.
    if (this.inflight.size > 0) return this.committer.commit();
  }

  // ---------------------------------------------------------------- commands

  private async onCommand(command: CommandRecord): Promise<void> {
    if (!(await this.commands.pending(command))) return;
    if (command.type === "kill") return this.commands.kill(command);
    if (command.type === "cancel") {
      this.cancelRequest = command;
      this.inflight.abortAll("canceled");
      return;
    }
    return this.commands.apply(command);
  }

  /** Records an error of this process's own as the step's failure (see failUnsaved); false when that could not be written either. */
  private async recordBreakdown(error: unknown): Promise<boolean> {
    try {
      this.rs.batch = new Batch();
      this.rs.launch = [];
      await this.load();
      failUnsaved(this.rs, this.calls, `the step could not be saved: ${errorMessage(error)}`);
      await this.committer.commit();
      return this.end !== undefined;
    } catch {
      return false;
    }
  }

  // ---------------------------------------------------------------- stopping

  private async onStop(cause: StopCause): Promise<void> {
    // A drain asked of an executor already shutting down (or lost) changes nothing.
    if (cause === "drain" && this.stopping !== undefined) return;
    this.stopping = cause;
    if (cause === "drain") return;
    if (cause === "lease-lost") {
      this.inflight.abortAll("lease-lost");
      const why = await this.lease.lostWhy();
      this.end ??= { status: this.rs.run.status, why, leaseLost: true };
      return;
    }
    this.inflight.abortAll("shutdown");
  }

  private finish(why: string): void {
    this.end ??= { status: this.rs.run.status, why };
  }

  /** Progress and log lines ride with the next commit, or go on their own within ~100 ms. */
  private deferEvent(event: ReturnType<EventFactory["run"]>): void {
    if (this.end) return;
    this.rs.batch.event(event);
    this.wakes.flushSoon();
  }
}

/**
 * Whether the run's owner answers the command. A fork is recorded on its source run for the
 * record, and answered by the operator that makes it (or, should that stop first, by any worker's
 * sweep, abandoned-forks.ts, whatever owns the source run): the owner answering too would race it.
 */
function ownersCommand(command: CommandRecord): boolean {
  return command.type !== "fork";
}
