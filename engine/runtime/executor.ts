import { ConflictError, StaleFenceError, errorMessage, isPitwallError } from "../errors.js";
import type { CompiledWorkflow, InterruptAnswer } from "../graph/model.js";
import { checkpointId, derivedId, taskId as makeTaskId } from "../ids.js";
import { WriteConflictError, reduceWrites, type ChannelWrite, type State } from "../state/ops.js";
import { loadStateChain, readState } from "../state/read.js";
import { jsonBytes, type SnapshotPolicy, type StateChain } from "../state/snapshot.js";
import type {
  CheckpointRecord,
  CommandRecord,
  InterruptRecord,
  PauseReason,
  PlanControl,
  RunError,
  RunRecord,
  RunStatus,
  TaskRecord,
} from "../store/records.js";
import type { Claim, Store } from "../store/store.js";
import { acceptance, cancelBatch, prepareCommand, refusal, type RunView } from "../worker/commands.js";
import { DurableCalls } from "./calls.js";
import { startAttempt, type AttemptOutcome, type RunningAttempt } from "./attempt.js";
import { Batch } from "./batch.js";
import { EventFactory } from "./event-factory.js";
import { planNextStep, type PlannedTask } from "./planner.js";
import { retryDecision, retryPolicyOf } from "./retry.js";
import { TaskAbortedError, type AbortCause } from "./signals.js";
import { closeAttempt, runTransition, transitionTask } from "./transitions.js";

export interface ExecutorOptions {
  workerId: string;
  leaseMs: number;
  /** How long a killed node that ignores its signal is waited for before it is abandoned. */
  killGraceMs: number;
  snapshotPolicy: SnapshotPolicy;
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
  | { kind: "stop"; cause: "shutdown" | "lease-lost" };

class Stopped extends Error {}

/**
 * Drives one claimed run, super-step by super-step, until it pauses, parks, ends or its lease is
 * lost. All of its decisions happen on one logical thread (a message loop), and every change is
 * committed through the store with the run's fencing token.
 */
export class RunExecutor {
  private run: RunRecord;
  private readonly fence: number;
  private head!: CheckpointRecord;
  private chain!: StateChain;
  /** Tasks of the step in progress (head step + 1). */
  private tasks = new Map<string, TaskRecord>();
  /** Interrupts of the run: pending ones, and resolved ones of the step in progress. */
  private interrupts = new Map<string, InterruptRecord>();
  private readonly inflight = new Map<string, { attempt: number; running: RunningAttempt; cause?: AbortCause }>();
  private batch = new Batch();
  private readonly inbox: Message[] = [];
  private wakeLoop: (() => void) | undefined;
  private readonly timers = new Set<NodeJS.Timeout>();
  private leaseTimer: NodeJS.Timeout | undefined;
  private flushTimer: NodeJS.Timeout | undefined;
  private readonly progressAt = new Map<string, number>();
  private cancelRequest: CommandRecord | undefined;
  private stopping: "shutdown" | "lease-lost" | undefined;
  private end: ExecutionEnd | undefined;
  private readonly events: EventFactory;
  private readonly calls: DurableCalls;
  readonly done: Promise<ExecutionEnd>;

  constructor(
    private readonly host: ExecutorHost,
    private readonly workflow: CompiledWorkflow,
    claim: Claim,
    private readonly options: ExecutorOptions,
  ) {
    this.run = claim.run;
    this.fence = claim.fence;
    this.events = new EventFactory(claim.run.id, `worker:${options.workerId}`, options.secretKeys);
    this.calls = new DurableCalls({
      submit: (batch) => new Promise((resolve, reject) => this.post({ kind: "submit", batch, done: (error) => (error ? reject(error) : resolve()) })),
      events: this.events,
      workerId: options.workerId,
    });
    this.done = this.execute(claim.recovered);
  }

  get runId(): string {
    return this.run.id;
  }

  /** Hands an operator command for this run to the executor. */
  command(command: CommandRecord): void {
    this.post({ kind: "command", command });
  }

  /** Graceful stop: running tasks are aborted and the run is released for another worker. */
  stop(): Promise<ExecutionEnd> {
    this.post({ kind: "stop", cause: "shutdown" });
    return this.done;
  }

  private post(message: Message): void {
    this.inbox.push(message);
    const wake = this.wakeLoop;
    this.wakeLoop = undefined;
    wake?.();
  }

  private async execute(recovered: boolean): Promise<ExecutionEnd> {
    this.leaseTimer = setInterval(() => void this.renewLease(), Math.max(50, this.options.leaseMs / 3));
    try {
      await this.load();
      if (recovered && this.run.recoveries > this.options.maxRecoveries) {
        await this.quarantine();
        return this.end!;
      }
      if (recovered) this.recover();
      this.resumeParked();
      for (const command of await this.host.store.listCommands({ runId: this.run.id, status: "pending" })) {
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
        this.abortAll("lease-lost");
        this.end = { status: this.run.status, why: `executor error: ${errorMessage(error)}` };
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

  private async load(): Promise<void> {
    const store = this.host.store;
    const run = await store.getRun(this.run.id);
    if (!run) throw new Error(`run ${this.run.id} vanished`);
    this.run = run;
    const head = run.head ? await store.getCheckpoint(run.head) : undefined;
    if (!head) throw new Error(`run ${run.id} has no head checkpoint`);
    this.head = head;
    this.chain = await loadStateChain(store, run.id, head.n, this.options.snapshotPolicy);
    const tasks = await store.listTasks(run.id, { step: head.step + 1 });
    this.tasks = new Map(tasks.filter((t) => t.parent === null).map((t) => [t.id, t]));
    this.calls.load(tasks.filter((t) => t.parent !== null));
    const interrupts = await store.listInterrupts({ runId: run.id });
    this.interrupts = new Map(interrupts.filter((i) => i.status === "pending" || i.step === head.step + 1).map((i) => [i.id, i]));
  }

  /** The previous owner died: its running tasks failed ("worker lost") and are retried by policy. */
  private recover(): void {
    const at = Date.now();
    this.calls.recoverLost(this.batch, at);
    for (const task of this.tasks.values()) {
      if (task.status !== "running") continue;
      const def = this.workflow.definition.nodes[task.node];
      if (def?.atMostOnce) {
        const interruptId = derivedId("int", task.id, "recovery", task.attempts.length);
        const attempts = closeAttempt(task, "interrupted", at, "worker lost", "WORKER_LOST");
        const interrupted = transitionTask(task, "interrupted", { attempts, waitingFor: { kind: "interrupt", interruptId } });
        this.batch.task(interrupted, this.events.task(interrupted, "task.interrupted", { node: task.node, waitingFor: interrupted.waitingFor! }));
        this.addInterrupt({
          id: interruptId,
          runId: this.run.id,
          taskId: task.id,
          node: task.node,
          step: task.step,
          kind: "recovery",
          request: {
            question: `Node "${task.node}" runs at most once, and its worker was lost while it ran. It may have done part of its work. Run it again, or skip it?`,
            decisions: ["retry", "skip"],
          },
          status: "pending",
          resolution: null,
          createdAt: at,
        });
      } else {
        this.fail(task, new Error(`worker lost while running "${task.node}" (attempt ${task.attempts.length})`), "WORKER_LOST", at);
      }
    }
  }

  /**
   * A run whose workers keep dying (it may be what kills them) pauses as `poison`: its running
   * tasks fail without a retry, so an operator decides whether to retry them.
   */
  private async quarantine(): Promise<void> {
    const at = Date.now();
    const lost = [...this.tasks.values()].filter((t) => t.status === "running");
    for (const task of lost) {
      const message = `worker lost while running "${task.node}"; run paused as poison after ${this.run.recoveries} lost workers`;
      const failed = transitionTask(task, "failed", {
        attempts: closeAttempt(task, "failed", at, message, "WORKER_LOST"),
        error: { message, code: "WORKER_LOST" },
        endedAt: at,
      });
      this.batch.task(failed, this.events.task(failed, "task.failed", { node: task.node, attempt: task.attempts.length, error: message, code: "WORKER_LOST", willRetry: false }));
    }
    this.pause("poison", lost.map((t) => t.node));
    await this.commit();
  }

  /** Tasks parked on a timer or a child run get another look whenever the run is claimed. */
  private resumeParked(): void {
    for (const task of this.tasks.values()) {
      if (task.status === "interrupted" && task.waitingFor && task.waitingFor.kind !== "interrupt") {
        const resumed = transitionTask(task, "pending", { waitingFor: null });
        this.batch.task(resumed, this.events.task(resumed, "task.scheduled", { node: task.node, why: "resume" }));
        this.tasks.set(resumed.id, resumed);
      }
    }
  }

  // ---------------------------------------------------------------- the loop

  private async handle(message: Message): Promise<void> {
    switch (message.kind) {
      case "outcome":
        return this.onOutcome(message.taskId, message.attempt, message.outcome);
      case "command":
        return this.onCommand(message.command);
      case "tick":
        if (!this.batch.empty) await this.commit();
        return;
      case "submit": {
        if (this.end || this.stopping === "lease-lost") {
          message.done(new TaskAbortedError("lease-lost", "the run's lease was lost"));
          return;
        }
        this.batch.absorb(message.batch);
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
    if (this.run.status !== "running") {
      this.finish(`run is ${this.run.status}`);
      return false;
    }
    if (this.cancelRequest) {
      if (this.inflight.size > 0) return false;
      await this.commitCancel(this.cancelRequest);
      return true;
    }
    if (this.stopping === "shutdown") {
      if (this.inflight.size > 0) return false;
      await this.release();
      return true;
    }
    if (this.tasks.size === 0) {
      this.planStep(this.chain.state, this.head.control, this.head.step + 1);
      await this.commit();
      return true;
    }
    const now = Date.now();
    const startable = this.startable(now);
    if (startable.length > 0) {
      this.startTasks(startable);
      await this.commit();
      return true;
    }
    const waiting = [...this.tasks.values()].filter((t) => t.status === "pending" && !this.inflight.has(t.id));
    const nextWake = Math.min(...waiting.map((t) => t.notBefore ?? Infinity));
    if (this.inflight.size > 0) {
      if (nextWake !== Infinity) this.tickAt(nextWake);
      if (!this.batch.empty) await this.commit();
      return false;
    }
    if (nextWake !== Infinity && nextWake - now <= this.options.holdBackoffMs) {
      this.tickAt(nextWake);
      if (!this.batch.empty) await this.commit();
      return false;
    }
    if ([...this.tasks.values()].every((t) => t.status === "succeeded")) {
      this.barrier();
    } else {
      this.settle(nextWake);
    }
    await this.commit();
    return true;
  }

  private startable(now: number): TaskRecord[] {
    const gated = new Set(
      [...this.interrupts.values()]
        .filter((i) => i.status === "pending" && (i.kind === "before" || i.kind === "breakpoint"))
        .map((i) => i.node),
    );
    const limit = this.workflow.definition.limits.concurrency;
    let free = limit - this.inflight.size;
    const perNode = new Map<string, number>();
    for (const id of this.inflight.keys()) {
      const node = this.tasks.get(id)?.node;
      if (node) perNode.set(node, (perNode.get(node) ?? 0) + 1);
    }
    const out: TaskRecord[] = [];
    for (const task of [...this.tasks.values()].sort(byNodeThenIndex)) {
      if (free <= 0) break;
      if (task.status !== "pending" || this.inflight.has(task.id) || gated.has(task.node)) continue;
      if (task.notBefore !== null && task.notBefore > now) continue;
      const mapLimit = this.workflow.definition.nodes[task.node]?.map?.concurrency;
      if (mapLimit !== undefined && (perNode.get(task.node) ?? 0) >= mapLimit) continue;
      perNode.set(task.node, (perNode.get(task.node) ?? 0) + 1);
      out.push(task);
      free--;
    }
    return out;
  }

  // ---------------------------------------------------------------- planning and starting

  /** Plans step `step` from a state and plan control, into the batch: tasks, gates, or the run's end. */
  private planStep(state: State, control: PlanControl, step: number): string[] {
    const plan = planNextStep(this.workflow, state, control);
    if (plan.kind === "error") {
      this.failRun(plan.error);
      return [];
    }
    if (plan.kind === "end") {
      this.batch.patchRun(runTransition(this.run, "succeeded"));
      this.batch.event(this.events.run("run.succeeded", { steps: this.head.step }));
      if (this.run.parentRunId) this.batch.wake.push(this.run.parentRunId);
      return [];
    }
    const maxSteps = this.workflow.definition.limits.maxSteps;
    const nodes = [...new Set(plan.tasks.map((t) => t.node))];
    if (step > maxSteps) {
      this.failRun({
        code: "MAX_STEPS",
        node: nodes[0]!,
        message: `run exceeded its step limit (maxSteps ${maxSteps}) before step ${step} (${nodes.join(", ")}); raise limits.maxSteps if the loop is expected`,
      });
      return [];
    }
    const now = Date.now();
    const tasks = plan.tasks.map((p) => this.newTask(p, step, now));
    for (const task of tasks) this.batch.task(task);
    this.batch.patchRun({ barriers: plan.control.barriers, current: nodes });
    this.tasks = new Map(tasks.map((t) => [t.id, t]));

    const before = new Set(this.run.interruptBefore ?? this.workflow.definition.interruptBefore);
    const breakpoints = new Set(this.run.breakpoints);
    const gates = nodes.filter((n) => before.has(n) || breakpoints.has(n));
    if (gates.length > 0) {
      for (const node of gates) {
        const kind = breakpoints.has(node) ? "breakpoint" : "before";
        this.addInterrupt({
          id: derivedId("int", this.run.id, step, node, kind),
          runId: this.run.id,
          taskId: tasks.find((t) => t.node === node)!.id,
          node,
          step,
          kind,
          request: {
            question: kind === "breakpoint" ? `Breakpoint: continue into "${node}"?` : `About to run "${node}". Continue?`,
            decisions: ["approve", "edit"],
          },
          status: "pending",
          resolution: null,
          createdAt: now,
        });
      }
      const reason: PauseReason = gates.some((n) => breakpoints.has(n)) ? "breakpoint" : "interrupt";
      this.pause(reason, gates);
      return nodes;
    }
    this.startTasks(this.startable(now));
    return nodes;
  }

  private newTask(planned: PlannedTask, step: number, now: number): TaskRecord {
    const id = makeTaskId(this.run.id, step, planned.node, planned.index);
    return {
      id,
      runId: this.run.id,
      step,
      node: planned.node,
      index: planned.index,
      ...(planned.index !== null ? { input: planned.input } : {}),
      status: "pending",
      attempts: [],
      idempotencyKey: id,
      writes: null,
      route: null,
      error: null,
      worker: null,
      createdAt: now,
      startedAt: null,
      endedAt: null,
      notBefore: null,
      retriesFrom: 0,
      waitingFor: null,
      parent: null,
      call: null,
    };
  }

  /** Marks tasks running in the batch; their attempts start once the batch is committed. */
  private startTasks(tasks: TaskRecord[]): void {
    const now = Date.now();
    const launch: TaskRecord[] = [];
    for (const task of tasks) {
      const attempt = task.attempts.length + 1;
      const running = transitionTask(task, "running", {
        attempts: [...task.attempts, { n: attempt, worker: this.options.workerId, startedAt: now, endedAt: null, outcome: null }],
        startedAt: task.startedAt ?? now,
        worker: this.options.workerId,
        notBefore: null,
      });
      if (this.skipRequested(task)) {
        const skipped = transitionTask(running, "succeeded", { writes: [], route: null, endedAt: now, attempts: closeAttempt(running, "succeeded", now) });
        this.batch.task(skipped, this.events.task(running, "task.started", { node: task.node, attempt }));
        this.batch.event(this.events.task(skipped, "task.succeeded", { node: task.node, attempt, durationMs: 0, keys: [], skipped: true }));
        this.tasks.set(skipped.id, skipped);
        continue;
      }
      this.batch.task(running, this.events.task(running, "task.started", { node: task.node, attempt, ...(task.index !== null ? { index: task.index } : {}) }));
      this.tasks.set(running.id, running);
      launch.push(running);
    }
    this.pendingLaunch.push(...launch);
  }

  private pendingLaunch: TaskRecord[] = [];

  /** An operator chose "skip" at the recovery interrupt of this task's last attempt. */
  private skipRequested(task: TaskRecord): boolean {
    const id = derivedId("int", task.id, "recovery", task.attempts.length);
    const interrupt = this.interrupts.get(id);
    return interrupt?.status === "resolved" && interrupt.resolution?.decision === "skip";
  }

  private launch(task: TaskRecord): void {
    const node = this.workflow.nodes.get(task.node)!;
    const def = node.definition;
    const attempt = task.attempts.length;
    const answers = new Map<string, InterruptAnswer>();
    for (const i of this.interrupts.values()) {
      if (i.taskId === task.id && i.status === "resolved" && i.resolution) {
        answers.set(i.id, {
          decision: i.resolution.decision,
          ...(i.resolution.response !== undefined ? { response: i.resolution.response } : {}),
          actor: i.resolution.actor,
        });
      }
    }
    const running = startAttempt(
      node,
      this.chain.state,
      {
        run: this.run,
        task,
        attempt,
        answers,
        progress: (fraction, message) => this.progress(task, fraction, message),
        log: (level, message, data) => this.deferEvent(this.events.task(task, "node.log", { node: task.node, level, message, ...(data !== undefined ? { data } : {}) })),
        artifact: (data, mediaType) => this.host.store.putArtifact(this.run.id, data, mediaType),
        childRun: (child, input, generation) => this.host.childRun(this.run, task, child, input, generation),
        childState: (child) => readState(this.host.store, child.id, child.headN),
        call: (key, fn, options, signal) => this.calls.run(task, key, fn, options, signal),
      },
      { ...(def.timeoutMs !== undefined ? { timeoutMs: def.timeoutMs } : {}), graceMs: this.options.killGraceMs },
    );
    this.inflight.set(task.id, { attempt, running });
    void running.done.then((outcome) => this.post({ kind: "outcome", taskId: task.id, attempt, outcome }));
  }

  // ---------------------------------------------------------------- outcomes

  private async onOutcome(taskId: string, attempt: number, outcome: AttemptOutcome): Promise<void> {
    const entry = this.inflight.get(taskId);
    if (!entry || entry.attempt !== attempt) return;
    this.inflight.delete(taskId);
    const task = this.tasks.get(taskId);
    if (!task || task.status !== "running" || this.stopping === "lease-lost") return;
    const now = Date.now();
    const durationMs = now - (task.attempts[task.attempts.length - 1]?.startedAt ?? now);
    switch (outcome.kind) {
      case "succeeded": {
        const problem = this.checkUpdate(task, outcome.update);
        if (problem) {
          this.fail(task, new Error(problem), "BAD_OUTPUT", now);
          break;
        }
        const writes = Object.entries(outcome.update);
        const done = transitionTask(task, "succeeded", {
          writes,
          route: outcome.route ?? null,
          endedAt: now,
          attempts: closeAttempt(task, "succeeded", now),
        });
        this.tasks.set(done.id, done);
        this.batch.task(
          done,
          this.events.task(done, "task.succeeded", {
            node: task.node,
            attempt,
            durationMs,
            keys: writes.map(([k]) => k),
            ...(outcome.route !== undefined ? { route: outcome.route } : {}),
          }),
        );
        break;
      }
      case "failed":
        this.fail(task, outcome.error, outcome.code, now);
        break;
      case "interrupted": {
        const { signal } = outcome;
        const interrupted = transitionTask(task, "interrupted", {
          attempts: closeAttempt(task, "interrupted", now),
          waitingFor: { kind: "interrupt", interruptId: signal.interruptId },
        });
        this.tasks.set(interrupted.id, interrupted);
        this.batch.task(interrupted, this.events.task(interrupted, "task.interrupted", { node: task.node, waitingFor: interrupted.waitingFor! }));
        this.addInterrupt({
          id: signal.interruptId,
          runId: this.run.id,
          taskId: task.id,
          node: task.node,
          step: task.step,
          kind: signal.kind,
          request: signal.request,
          status: "pending",
          resolution: null,
          createdAt: now,
        });
        break;
      }
      case "parked": {
        const parked = transitionTask(task, "interrupted", { attempts: closeAttempt(task, "interrupted", now), waitingFor: outcome.wait });
        this.tasks.set(parked.id, parked);
        this.batch.task(parked, this.events.task(parked, "task.interrupted", { node: task.node, waitingFor: outcome.wait }));
        break;
      }
      case "canceled": {
        const reason = outcome.cause === "killed" ? "killed by operator" : outcome.cause;
        const canceled = transitionTask(task, "canceled", { attempts: closeAttempt(task, "canceled", now, reason), endedAt: now });
        this.tasks.set(canceled.id, canceled);
        this.batch.task(canceled, this.events.task(canceled, "task.canceled", { node: task.node, reason }));
        if (outcome.cause === "shutdown") {
          const again = transitionTask(canceled, "pending");
          this.tasks.set(again.id, again);
          this.batch.task(again, this.events.task(again, "task.scheduled", { node: task.node, why: "queued" }));
        }
        break;
      }
    }
    // Results are made durable at once while siblings still run; the last one rides with the step.
    if (this.inflight.size > 0) await this.commit();
  }

  private checkUpdate(task: TaskRecord, update: State): string | undefined {
    for (const [key, value] of Object.entries(update)) {
      const reducer = this.workflow.reducerOf(key);
      const kind = typeof reducer === "function" ? "custom" : reducer;
      const problem = this.workflow.validator.checkWrite(key, value, kind, this.chain.state[key]);
      if (problem) return `node "${task.node}" wrote an invalid update: ${problem}`;
    }
    return undefined;
  }

  /** A failed attempt: retried by policy (back to pending with a backoff) or left failed. */
  private fail(task: TaskRecord, error: Error, code: string | undefined, now: number): void {
    const policy = retryPolicyOf(this.workflow.definition.nodes[task.node]?.retry);
    const attempt = task.attempts.length;
    const decision = retryDecision(policy, attempt - task.retriesFrom, { name: error.name, ...(code ? { code } : {}) });
    const failed = transitionTask(task, "failed", {
      attempts: closeAttempt(task, "failed", now, error.message, code),
      error: { message: error.message, name: error.name, ...(code ? { code } : {}), ...(error.stack ? { stack: error.stack } : {}) },
      endedAt: now,
    });
    this.batch.task(
      failed,
      this.events.task(failed, "task.failed", {
        node: task.node,
        attempt,
        error: error.message,
        ...(code ? { code } : {}),
        willRetry: decision.retry,
        ...(decision.retry ? { retryInMs: decision.delayMs } : {}),
      }),
    );
    if (!decision.retry) {
      this.tasks.set(failed.id, failed);
      return;
    }
    const retry = transitionTask(failed, "pending", { notBefore: now + decision.delayMs, endedAt: null });
    this.batch.task(retry, this.events.task(retry, "task.scheduled", { node: task.node, why: "retry", notBefore: retry.notBefore! }));
    this.tasks.set(retry.id, retry);
  }

  // ---------------------------------------------------------------- the barrier

  /** Every task of the step succeeded: their writes go through the reducers into one checkpoint. */
  private barrier(): void {
    const ordered = [...this.tasks.values()].sort(byNodeThenIndex);
    const writes: ChannelWrite[] = ordered.flatMap((t) =>
      (t.writes ?? []).map(([key, value]) => ({ key, value, writer: t.index === null ? t.node : `${t.node}[${t.index}]` })),
    );
    let reduced: { state: State; ops: ReturnType<typeof reduceWrites>["ops"] };
    try {
      reduced = reduceWrites(this.chain.state, writes, (key) => this.workflow.reducerOf(key));
    } catch (error) {
      const code = error instanceof WriteConflictError ? "WRITE_CONFLICT" : "BAD_OUTPUT";
      this.failRun({ code, message: errorMessage(error), node: ordered[0]!.node });
      return;
    }
    const step = this.head.step + 1;
    const n = this.head.n + 1;
    const nodes = [...new Set(ordered.map((t) => t.node))];
    const visits = { ...this.head.control.visits };
    for (const node of nodes) visits[node] = (visits[node] ?? 0) + 1;
    const control: PlanControl = {
      finished: nodes.map((node) => {
        const route = ordered.find((t) => t.node === node && t.route !== null)?.route;
        return route != null ? { node, route } : { node };
      }),
      barriers: this.run.barriers,
      visits,
    };
    const snapshot = this.chain.advance(n, reduced.ops, reduced.state);
    const id = checkpointId(this.run.id, n);
    const checkpoint: CheckpointRecord = {
      id,
      runId: this.run.id,
      n,
      step,
      parentId: this.head.id,
      source: "loop",
      actor: `worker:${this.options.workerId}`,
      nodes,
      next: [],
      control,
      delta: reduced.ops,
      ...(snapshot ? { snapshot } : {}),
      snapshotN: snapshot ? n : this.chain.snapshotN,
      createdAt: Date.now(),
      bytes: jsonBytes(reduced.ops) + (snapshot ? jsonBytes(snapshot) : 0),
    };
    this.batch.checkpoint = checkpoint;
    const completedAt = this.batch.events.length;
    const after = new Set(this.run.interruptAfter ?? this.workflow.definition.interruptAfter);
    const afterNodes = nodes.filter((node) => after.has(node));
    let next: string[] = [];
    if (afterNodes.length > 0) {
      for (const node of afterNodes) {
        this.addInterrupt({
          id: derivedId("int", this.run.id, step, node, "after"),
          runId: this.run.id,
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
      this.tasks = new Map();
      this.pause("interrupt", afterNodes);
    } else {
      this.head = checkpoint;
      next = this.planStep(reduced.state, control, step + 1);
    }
    checkpoint.next = next;
    this.batch.events.splice(
      completedAt,
      0,
      this.events.run("step.completed", { step, checkpointId: id, nodes, keys: [...new Set(reduced.ops.map(([k]) => k))], next }),
    );
    this.head = checkpoint;
  }

  /** Nothing can run and not everything succeeded: pause for an operator, park, or fail. */
  private settle(nextWake: number): void {
    const tasks = [...this.tasks.values()];
    const failed = tasks.filter((t) => t.status === "failed");
    const fatal = failed.find((t) => retryPolicyOf(this.workflow.definition.nodes[t.node]?.retry).onExhausted === "fail");
    if (fatal) {
      this.failRun({
        code: "TASK_FAILED",
        node: fatal.node,
        message: `node "${fatal.node}" failed after ${fatal.attempts.length} attempt(s): ${fatal.error?.message ?? "unknown error"}`,
      });
      return;
    }
    if (failed.length > 0) return this.pause("retries-exhausted", failed.map((t) => t.node));
    const waitingForPeople = tasks.filter((t) => t.status === "interrupted" && t.waitingFor?.kind === "interrupt");
    const pendingPeople = [...this.interrupts.values()].some((i) => i.status === "pending");
    if (waitingForPeople.length > 0 || pendingPeople) return this.pause("interrupt", waitingForPeople.map((t) => t.node));
    const canceled = tasks.filter((t) => t.status === "canceled");
    if (canceled.length > 0) return this.pause("killed", canceled.map((t) => t.node));
    const parked = tasks.filter((t) => t.status === "interrupted" && t.waitingFor && t.waitingFor.kind !== "interrupt");
    const times = parked.flatMap((t) => (t.waitingFor?.kind === "time" ? [t.waitingFor.until] : []));
    const wakeAt = Math.min(nextWake, ...times);
    const child = parked.find((t) => t.waitingFor?.kind === "run")?.waitingFor;
    const waitingOn = wakeAt === Infinity && child?.kind === "run" ? child.runId : null;
    this.batch.patchRun(runTransition(this.run, "queued", { wakeAt: wakeAt === Infinity ? null : wakeAt, waitingOn }));
    this.batch.event(
      this.events.run("run.released", {
        status: "queued",
        ...(wakeAt !== Infinity ? { wakeAt } : {}),
        ...(waitingOn ? { waitingOn } : {}),
        why: waitingOn ? `waiting for child run ${waitingOn}` : `waiting until ${new Date(wakeAt).toISOString()}`,
      }),
    );
  }

  private pause(reason: PauseReason, nodes: string[]): void {
    const interrupts = [...this.interrupts.values()].filter((i) => i.status === "pending").map((i) => i.id);
    this.batch.patchRun(runTransition(this.run, "paused", { reason, current: [] }));
    this.batch.event(this.events.run("run.paused", { reason, nodes, ...(interrupts.length > 0 ? { interrupts } : {}) }));
  }

  private failRun(error: RunError): void {
    this.batch.patchRun(runTransition(this.run, "failed", { error }));
    this.batch.event(this.events.run("run.failed", { error }));
    if (this.run.parentRunId) this.batch.wake.push(this.run.parentRunId);
  }

  private addInterrupt(interrupt: InterruptRecord): void {
    this.batch.interrupt(interrupt);
    this.batch.event(
      this.events.run("interrupt.created", {
        interruptId: interrupt.id,
        kind: interrupt.kind,
        node: interrupt.node,
        ...(interrupt.request.question ? { question: interrupt.request.question } : {}),
      }),
    );
    this.interrupts.set(interrupt.id, interrupt);
  }

  // ---------------------------------------------------------------- commands

  private async onCommand(command: CommandRecord): Promise<void> {
    const current = await this.host.store.getCommand(command.id);
    if (!current || current.status !== "pending") return;
    if (command.type === "kill") return this.onKill(command);
    if (command.type === "cancel") {
      this.cancelRequest = command;
      this.abortAll("canceled");
      return;
    }
    const view: RunView = {
      run: this.run,
      definition: this.workflow.definition,
      validator: this.workflow.validator,
      reducerOf: (key) => this.workflow.reducerOf(key),
      head: this.head,
      state: this.chain.state,
      tasks: [...this.tasks.values()],
      pending: [...this.interrupts.values()].filter((i) => i.status === "pending"),
      interrupt: (id) => this.host.store.getInterrupt(id),
      executing: this.inflight.size > 0,
    };
    const prepared = await prepareCommand(command, view);
    if (!prepared.ok) {
      await this.answer(refusal(command, prepared.error, command.actor));
      return;
    }
    await this.commit();
    this.batch = prepared.batch;
    const accepted = acceptance(command, prepared.effect, prepared.result ?? {}, command.actor);
    this.batch.commands.push(accepted.answer);
    this.batch.event(accepted.event);
    await this.commit(prepared.writesState ? { expectHead: this.head.id } : {});
    await this.load();
  }

  private async onKill(command: CommandRecord): Promise<void> {
    const taskId = command.args.taskId as string | undefined;
    const targets = [...this.inflight.keys()].filter((id) => taskId === undefined || id === taskId);
    if (targets.length === 0) {
      const error = new ConflictError(taskId ? `task ${taskId} is not running` : `run ${this.run.id} has no running task`);
      await this.answer(refusal(command, error, command.actor));
      return;
    }
    for (const id of targets) this.abortTask(id, "killed");
    const nodes = targets.map((id) => this.tasks.get(id)?.node ?? id);
    const effect = `killing ${nodes.join(", ")} (abandoned after ${this.options.killGraceMs} ms if it ignores its signal)`;
    await this.answer(acceptance(command, effect, {}, command.actor));
  }

  private async commitCancel(command: CommandRecord): Promise<void> {
    const pending = [...this.interrupts.values()].filter((i) => i.status === "pending");
    const batch = cancelBatch(this.run, [...this.tasks.values()], pending, command.actor, command.reason ?? "canceled by operator", new EventFactory(this.run.id, command.actor));
    this.batch.absorb(batch);
    const accepted = acceptance(command, "run canceled", {}, command.actor);
    this.batch.commands.push(accepted.answer);
    this.batch.event(accepted.event);
    this.cancelRequest = undefined;
    await this.commit();
    const children = await this.host.store.listRuns({ parentRunId: this.run.id, status: ["queued", "running", "paused"] });
    for (const child of children.runs) await this.host.cancelChild(child.id, command.actor, `parent run ${this.run.id} canceled`);
  }

  private async answer(answer: ReturnType<typeof acceptance> | ReturnType<typeof refusal>): Promise<void> {
    this.batch.commands.push(answer.answer);
    this.batch.event(answer.event);
    await this.commit();
  }

  // ---------------------------------------------------------------- stopping

  private async onStop(cause: "shutdown" | "lease-lost"): Promise<void> {
    this.stopping = cause;
    if (cause === "lease-lost") {
      this.abortAll("lease-lost");
      this.finish("lease lost: another worker took the run over");
      return;
    }
    this.abortAll("shutdown");
  }

  /** Hands the run back (queued) so another worker continues it. */
  private async release(): Promise<void> {
    this.batch.patchRun(runTransition(this.run, "queued"));
    this.batch.event(this.events.run("run.released", { status: "queued", why: "worker shutting down" }));
    await this.commit();
  }

  private abortAll(cause: AbortCause): void {
    for (const id of this.inflight.keys()) this.abortTask(id, cause);
  }

  private abortTask(id: string, cause: AbortCause): void {
    const entry = this.inflight.get(id);
    if (!entry || entry.cause) return;
    entry.cause = cause;
    entry.running.abort(cause);
  }

  private finish(why: string): void {
    this.end ??= { status: this.run.status, why };
  }

  // ---------------------------------------------------------------- events and commits

  private progress(task: TaskRecord, fraction: number | null, message?: string): void {
    const now = Date.now();
    const last = this.progressAt.get(task.id) ?? 0;
    if (now - last < this.options.progressIntervalMs && fraction !== 1) return;
    this.progressAt.set(task.id, now);
    this.deferEvent(
      this.events.task(task, "node.progress", { node: task.node, ...(fraction !== null ? { fraction } : {}), ...(message !== undefined ? { message } : {}) }),
    );
  }

  /** Progress and log lines ride with the next commit, or go on their own within ~100 ms. */
  private deferEvent(event: ReturnType<EventFactory["run"]>): void {
    if (this.end) return;
    this.batch.event(event);
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
    const timer = setTimeout(() => {
      this.timers.delete(timer);
      this.tickTimes.delete(time);
      this.post({ kind: "tick" });
    }, Math.max(0, time - Date.now()));
    this.timers.add(timer);
  }

  private readonly tickTimes = new Set<number>();

  /**
   * Sends the batch. A lost lease stops the executor without writing anything more; a failing
   * store is retried with the same commit id (so a commit whose reply was lost is not applied
   * twice) until the lease would have run out.
   */
  private async commit(expect: { expectHead?: string } = {}): Promise<void> {
    if (this.batch.empty) {
      this.launchPending();
      return;
    }
    const batch = this.batch;
    this.batch = new Batch();
    const commit = batch.toCommit(this.run.id, this.fence, expect);
    const deadline = Date.now() + this.options.leaseMs;
    for (let delay = 50; ; delay = Math.min(delay * 2, 2000)) {
      try {
        await this.host.store.commit(commit);
        break;
      } catch (error) {
        if (error instanceof StaleFenceError) {
          this.pendingLaunch = [];
          await this.onStop("lease-lost");
          throw new Stopped();
        }
        if (error instanceof ConflictError || isPitwallError(error) || Date.now() + delay > deadline) {
          this.pendingLaunch = [];
          this.abortAll("lease-lost");
          this.finish(`commit failed: ${errorMessage(error)}`);
          throw new Stopped();
        }
        await new Promise((resolve) => setTimeout(resolve, delay));
      }
    }
    if (batch.run) Object.assign(this.run, batch.run);
    for (const interrupt of batch.interrupts.values()) this.interrupts.set(interrupt.id, interrupt);
    if (this.run.status !== "running") {
      this.pendingLaunch = [];
      this.finish(`run ${this.run.status}${this.run.reason ? ` (${this.run.reason})` : ""}`);
      return;
    }
    this.launchPending();
  }

  private launchPending(): void {
    const launch = this.pendingLaunch;
    this.pendingLaunch = [];
    for (const task of launch) this.launch(task);
  }

  private async renewLease(): Promise<void> {
    if (this.end) return;
    try {
      await this.host.store.renewLease(this.run.id, this.options.workerId, this.fence, this.options.leaseMs);
    } catch (error) {
      if (error instanceof StaleFenceError) this.post({ kind: "stop", cause: "lease-lost" });
    }
  }
}

function byNodeThenIndex(a: TaskRecord, b: TaskRecord): number {
  return a.node < b.node ? -1 : a.node > b.node ? 1 : (a.index ?? -1) - (b.index ?? -1);
}

