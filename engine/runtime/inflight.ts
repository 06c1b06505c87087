import type { AttemptServices, RecordedAnswer } from "./context.js";
import type { CallContext, CallOptions, CompiledWorkflow } from "../graph/model.js";
import type { State } from "../state/ops.js";
import { readState } from "../state/read.js";
import type { ArtifactRef, NewEvent, RunRecord, SignalRecord, TaskRecord } from "../store/records.js";
import { startAttempt, type AttemptOutcome, type RunningAttempt } from "./attempt.js";
import type { DurableCalls } from "./calls.js";
import type { EventFactory } from "./event-factory.js";
import type { ExecutorHost, ExecutorOptions } from "./executor-host.js";
import { lastFailedAttempt } from "./retry.js";
import type { RunState } from "./run-state.js";
import type { AbortCause } from "./signals.js";

/** Log data beyond this size is stored as an artifact rather than in the event. */
const MAX_EVENT_DATA_BYTES = 8 * 1024;

export interface InflightDeps {
  rs: RunState;
  host: ExecutorHost;
  calls: DurableCalls;
  events: EventFactory;
  options: ExecutorOptions;
  /** How an attempt ended; `attempt` tells stale outcomes apart. */
  onOutcome(taskId: string, attempt: number, outcome: AttemptOutcome): void;
  /** A progress or log event, to commit with the next batch. */
  onEvent(event: NewEvent): void;
}

/**
 * The attempts of a run's tasks running in this process: started with their context, aborted
 * on kill, cancel, shutdown or a lost lease, and reported when they end.
 */
export class InflightTasks {
  private readonly running = new Map<string, { attempt: number; attemptRun: RunningAttempt; cause?: AbortCause }>();
  private readonly runningIds = new Set<string>();
  private readonly progressAt = new Map<string, number>();

  constructor(private readonly deps: InflightDeps) {}

  get size(): number {
    return this.running.size;
  }

  /** The tasks running now (live: copy it to keep it). */
  ids(): ReadonlySet<string> {
    return this.runningIds;
  }

  /** Forgets an attempt that ended; false when it is not the current attempt of that task. */
  settle(taskId: string, attempt: number): boolean {
    const entry = this.running.get(taskId);
    if (!entry || entry.attempt !== attempt) return false;
    this.running.delete(taskId);
    this.runningIds.delete(taskId);
    return true;
  }

  launch(task: TaskRecord): void {
    const { rs, options } = this.deps;
    const node = rs.workflow.nodes.get(task.node)!;
    const attempt = task.attempts.length;
    const attemptRun = startAttempt(node, rs.chain.state, new TaskServices(this, this.deps, rs.run, task, attempt, answersOf(rs, task)), {
      ...(node.definition.timeoutMs !== undefined ? { timeoutMs: node.definition.timeoutMs } : {}),
      graceMs: options.killGraceMs,
    });
    this.running.set(task.id, { attempt, attemptRun });
    this.runningIds.add(task.id);
    void attemptRun.done.then((outcome) => this.deps.onOutcome(task.id, attempt, outcome));
  }

  abort(taskId: string, cause: AbortCause): void {
    const entry = this.running.get(taskId);
    if (!entry || entry.cause) return;
    entry.cause = cause;
    entry.attemptRun.abort(cause);
  }

  abortAll(cause: AbortCause): void {
    for (const id of this.running.keys()) this.abort(id, cause);
  }

  progress(task: TaskRecord, fraction: number | null, message?: string): void {
    const now = Date.now();
    const last = this.progressAt.get(task.id) ?? 0;
    if (now - last < this.deps.options.progressIntervalMs && fraction !== 1) return;
    this.progressAt.set(task.id, now);
    this.deps.onEvent(
      this.deps.events.task(task, "node.progress", { node: task.node, ...(fraction !== null ? { fraction } : {}), ...(message !== undefined ? { message } : {}) }),
    );
  }

  /** A log line's data larger than an event should hold goes to an artifact; the event keeps a reference. */
  async log(task: TaskRecord, level: "debug" | "info" | "warn" | "error", message: string, data: unknown): Promise<void> {
    let payload = data;
    const text = data === undefined ? undefined : JSON.stringify(this.deps.events.redact(data));
    if (text !== undefined && text.length > MAX_EVENT_DATA_BYTES) {
      try {
        payload = { artifact: await this.deps.host.store.putArtifact(this.deps.rs.run.id, new TextEncoder().encode(text), "application/json") };
      } catch {
        payload = { truncated: `${text.slice(0, MAX_EVENT_DATA_BYTES)}…` };
      }
    }
    this.deps.onEvent(this.deps.events.task(task, "node.log", { node: task.node, level, message, ...(payload !== undefined ? { data: payload } : {}) }));
  }
}

/**
 * What one attempt of a task gets from the executor: methods rather than a dozen closures made
 * for every attempt. `run` is the run as the attempt started; child runs and artifacts belong to
 * the run as it is when they are made.
 */
class TaskServices implements AttemptServices {
  constructor(
    private readonly inflight: InflightTasks,
    private readonly deps: InflightDeps,
    readonly run: RunRecord,
    readonly task: TaskRecord,
    readonly attempt: number,
    readonly answers: ReadonlyMap<string, RecordedAnswer>,
  ) {}

  progress(fraction: number | null, message?: string): void {
    this.inflight.progress(this.task, fraction, message);
  }

  log(level: "debug" | "info" | "warn" | "error", message: string, data?: unknown): void {
    void this.inflight.log(this.task, level, message, data);
  }

  artifact(data: Uint8Array, mediaType: string): Promise<ArtifactRef> {
    return this.deps.host.store.putArtifact(this.deps.rs.run.id, data, mediaType);
  }

  childRun(child: CompiledWorkflow, input: State, generation: number): Promise<RunRecord> {
    return this.deps.host.childRun(this.deps.rs.run, this.task, child, input, generation);
  }

  childState(child: RunRecord, n?: number): Promise<State> {
    return readState(this.deps.host.store, child.id, n ?? child.headN);
  }

  call(key: string, fn: (ctx: CallContext) => unknown, options: CallOptions, signal: AbortSignal): Promise<unknown> {
    return this.deps.calls.run(this.task, key, fn, options, signal);
  }

  receive(key: string, name: string): SignalRecord | undefined {
    return this.deps.rs.signals.take(this.task, key, name, this.deps.rs.run.inbox ?? []);
  }

  receiveTimedOut(key: string, name: string): void {
    this.deps.rs.signals.timeOut(this.task, key, name, this.deps.rs.clock.now());
  }

  kept(key: string, options: CallOptions): { call: string; output: unknown } | undefined {
    return this.deps.calls.kept(this.task, key, options);
  }

  redact(value: unknown): unknown {
    return this.deps.events.redact(value);
  }

  get clock() {
    return this.deps.rs.clock;
  }
}

/**
 * Whether a node runs again on the state its answered request was made from — or on that state
 * with only the answer's own edit — so that the answer stands whatever the request says now (a
 * node may word it differently each time). An edit between the question and the answer, or
 * after the answer, is not that state: the request is compared (context.ts).
 */
function sameStateAsAnswered(head: number, raisedOn: number | undefined, answeredOn: number | undefined, answerEdited: boolean): boolean {
  if (raisedOn === undefined) return answeredOn === undefined || answeredOn === head;
  return head === raisedOn || (answerEdited && answeredOn === raisedOn + 1 && head === answeredOn);
}

const NO_ANSWERS: ReadonlyMap<string, RecordedAnswer> = new Map();

/**
 * The answers to a task's resolved interrupts, which `ctx.interrupt` returns when the node runs
 * again. A question asked before the node's last failed attempt answers only the same question:
 * the attempts since ask their model and tools again (calls.ts), and may ask something else.
 */
function answersOf(rs: RunState, task: TaskRecord): ReadonlyMap<string, RecordedAnswer> {
  if (rs.interrupts.size === 0) return NO_ANSWERS;
  const answers = new Map<string, RecordedAnswer>();
  const failed = lastFailedAttempt(task);
  for (const i of rs.interrupts.values()) {
    if (i.taskId === task.id && i.status === "resolved" && i.resolution) {
      const { decision, response, actor, reason, headN: answeredOn, checkpointId, timedOut } = i.resolution;
      answers.set(i.id, {
        answer: { decision, ...(response !== undefined ? { response } : {}), actor, ...(reason ? { reason } : {}), ...(timedOut ? { timedOut } : {}) },
        request: i.request,
        sameState: (i.attempt === undefined || i.attempt > failed) && sameStateAsAnswered(rs.head.n, i.headN, answeredOn, checkpointId !== undefined),
      });
    }
  }
  return answers;
}
