import { asError, errorCodeOf } from "../errors.js";
import { contentHash } from "../graph/canonical.js";
import type { RetryPolicy } from "../graph/definition.js";
import type { CallContext, CallOptions } from "../graph/model.js";
import type { TaskRecord } from "../store/records.js";
import { Batch } from "./batch.js";
import { boundedValue } from "./bounded.js";
import type { EventFactory } from "./event-factory.js";
import { TIMED_OUT, WORKER_LOST, failureOf, failuresCounted, lastFailedAttempt, retryDecision, retryPolicyOf } from "./retry.js";
import { TaskAbortedError } from "./signals.js";
import { closeAttempt, lostWithWorker, newTaskRecord, transitionTask } from "./transitions.js";
import { sleep } from "../sleep.js";

export interface CallHost {
  /** Commits a batch through the executor (serially, with its fence). */
  submit(batch: Batch): Promise<void>;
  readonly events: EventFactory;
  readonly workerId: string;
}

/**
 * Durable calls made inside nodes (`ctx.call`): each is a child task of the node's task, with
 * its own attempts and events. A succeeded call's output is recorded, so a node that runs again
 * — after an interrupt, a shutdown, a kill, a lost worker or a failed attempt — gets the recorded
 * output back instead of repeating the call (the agent loop's tool calls survive a crash this
 * way), as long as what the call depends on is the same (`dependsOn`: an operator may have edited
 * the state). A call made with `afterFailure: "again"` (a model's answer) is made again after a
 * failed attempt: replaying what led to the failure would only repeat it.
 */
export class DurableCalls {
  private readonly records = new Map<string, TaskRecord>();
  /** The kept results handed to a call of a node's attempt (by `<task id>#<attempt>`): each to one call. */
  private readonly taken = new Map<string, Set<string>>();
  private lastCreated = 0;
  /**
   * The step whose calls are being made. A step ends only once all its tasks have, so when a
   * node of a later step calls, the calls of earlier steps are forgotten: a long run's executor
   * keeps one step's calls, not every call it ever made.
   */
  private step = -1;

  constructor(private readonly host: CallHost) {}

  /** Replaces what is known with the store's child tasks of the step in progress. */
  load(records: readonly TaskRecord[]): void {
    this.records.clear();
    for (const record of records) this.records.set(record.id, record);
  }

  /**
   * What a node's attempt cut short had made (`task`, as it was: its last attempt the one cut):
   * the calls a retry gets back from the record, and those it left unfinished, which a retry
   * makes again — for an operator deciding whether an at-most-once node runs again.
   */
  madeBy(task: TaskRecord): CallsMade {
    const finished: string[] = [];
    const unfinished: CallsMade["unfinished"] = [];
    const failed = lastFailedAttempt(task);
    for (const record of this.records.values()) {
      if (record.parent !== task.id) continue;
      if (record.status === "succeeded" && (record.parentAttempt === undefined || record.parentAttempt > failed)) finished.push(record.call!);
      else if (record.status !== "succeeded" && record.parentAttempt === task.attempts.length) unfinished.push({ call: record.call!, ...(record.input !== undefined ? { input: record.input } : {}) });
    }
    return { finished, unfinished };
  }

  /** Calls a lost worker left running count as failed attempts ("worker lost"). */
  recoverLost(batch: Batch, at: number): void {
    for (const record of this.records.values()) {
      if (record.status !== "running") continue;
      const failed = lostWithWorker(record, at);
      this.records.set(failed.id, failed);
      batch.task(failed, this.host.events.task(failed, "task.failed", { node: record.node, attempt: record.attempts.length, error: "worker lost", code: WORKER_LOST, willRetry: true, call: record.call! }));
    }
  }

  /**
   * A node's attempt ended (killed and abandoned, failed, returned) with calls of it still marked
   * running: nothing waits for them any more, so they end with it, canceled.
   */
  closeRunning(parentId: string, batch: Batch, reason: string, at: number): void {
    for (const record of this.records.values()) {
      if (record.parent !== parentId || record.status !== "running") continue;
      const canceled = transitionTask(record, "canceled", { attempts: closeAttempt(record, "canceled", at, reason), endedAt: at });
      this.records.set(canceled.id, canceled);
      batch.task(canceled, this.host.events.task(canceled, "task.canceled", { node: record.node, reason, call: record.call! }));
    }
  }

  /**
   * The result a call made now with `options` is handed without being made: the first, in the
   * order they were made, of the results kept from before the node's last failure (see `run`)
   * whose `dependsOn` is the same, under any key, that no call of this attempt was handed yet.
   * An agent asks before a tool call and its approval: a call the model repeats at another turn
   * than before the failure (a tool's name and arguments are its `dependsOn`) is not made twice.
   */
  kept(task: TaskRecord, key: string, options: CallOptions): { call: string; output: unknown } | undefined {
    if ((options.afterFailure ?? "keep") !== "keep" || options.dependsOn === undefined) return undefined;
    this.forgetBefore(task.step);
    const dependsOn = dependsOnHash(key, options.dependsOn);
    const taken = this.taken.get(attemptOf(task));
    const same = [...this.records.values()].filter((r) => r.parent === task.id && r.dependsOn === dependsOn && succeededBeforeFailure(r, task) && !taken?.has(r.id));
    const first = same.sort((a, b) => a.createdAt - b.createdAt || (a.id < b.id ? -1 : 1))[0];
    return first && this.take(task, first) ? { call: first.call!, output: first.output } : undefined;
  }

  /**
   * Makes a call, or hands back its recorded outcome. A result kept from before the node's last
   * failure (a succeeded call made with `afterFailure: "keep"`) is never replaced: the same call
   * is handed it, once per attempt; another call of that key — other `dependsOn`, or asked again
   * once it was handed — is a new one, `<key>@<first attempt since the failure>`, with its own
   * idempotency key, so that the result is still there for the call that repeats it (`kept`).
   */
  async run(task: TaskRecord, key: string, fn: (ctx: CallContext) => unknown, options: CallOptions, signal: AbortSignal): Promise<unknown> {
    this.forgetBefore(task.step);
    const afterFailure = options.afterFailure ?? "keep";
    const dependsOn = options.dependsOn === undefined ? undefined : dependsOnHash(key, options.dependsOn);
    const own = `${task.id}/${key}@${lastFailedAttempt(task) + 1}`;
    let id = this.records.has(own) ? own : `${task.id}/${key}`;
    let known = this.records.get(id);
    if (known && afterFailure === "keep" && succeededBeforeFailure(known, task)) {
      // A record made without a hash is taken at its key.
      if ((dependsOn === undefined || known.dependsOn === undefined || known.dependsOn === dependsOn) && this.take(task, known)) return known.output;
      id = own;
      known = undefined;
    }
    const policy = retryPolicyOf(options.retry);
    let inputChanged = (known?.status === "succeeded" || known?.status === "failed") && dependsOn !== undefined && known.dependsOn !== undefined && known.dependsOn !== dependsOn;
    // A result from before the failure that is still here is made again (`afterFailure: "again"`).
    if (known?.status === "succeeded" && !inputChanged && !succeededBeforeFailure(known, task)) return known.output;
    if (known?.status === "failed" && !inputChanged && failedForGood(known, task, policy)) throw recordedFailure(known);
    let record = !known ? this.fresh(task, key, id) : known.status === "succeeded" ? this.again(known) : known;
    // What it is called with, for people: kept from its first attempt, as it may be running a while.
    const input = options.input === undefined ? undefined : boundedValue(this.host.events.redact(normalize(options.input)));
    // Each run of the node gives its calls a fresh retry budget.
    record = await this.toPending(record, { retriesFrom: record.attempts.length, ...(input !== undefined ? { input } : {}), ...(dependsOn !== undefined ? { dependsOn } : {}) });
    for (;;) {
      if (signal.aborted) throw signal.reason ?? new TaskAbortedError("canceled");
      const attempt = record.attempts.length + 1;
      const startedAt = Date.now();
      record = transitionTask(record, "running", {
        attempts: [...record.attempts, { n: attempt, worker: this.host.workerId, startedAt, endedAt: null, outcome: null }],
        startedAt: record.startedAt ?? startedAt,
        worker: this.host.workerId,
        parentAttempt: task.attempts.length,
      });
      await this.save(record, this.host.events.task(record, "task.started", { node: record.node, attempt, call: key, ...(inputChanged ? { inputChanged } : {}) }));
      inputChanged = false;
      try {
        const output = normalize(await withTimeout(fn({ signal, attempt, idempotencyKey: id }), options.timeoutMs, key, signal));
        const now = Date.now();
        record = transitionTask(record, "succeeded", { output, endedAt: now, attempts: closeAttempt(record, "succeeded", now) });
        await this.save(record, this.host.events.task(record, "task.succeeded", { node: record.node, attempt, durationMs: now - startedAt, keys: [], call: key }));
        return output;
      } catch (error) {
        const err = asError(error);
        const now = Date.now();
        if (signal.aborted) {
          // Closed already with its node (see closeRunning).
          if (this.records.get(id)?.status !== "running") throw err;
          record = transitionTask(record, "canceled", { endedAt: now, attempts: closeAttempt(record, "canceled", now, err.message) });
          await this.save(record, this.host.events.task(record, "task.canceled", { node: record.node, reason: err.message, call: key })).catch(() => undefined);
          throw err;
        }
        const code = errorCodeOf(err);
        record = transitionTask(record, "failed", {
          endedAt: now,
          error: { message: err.message, name: err.name, ...(code ? { code } : {}) },
          attempts: closeAttempt(record, "failed", now, err.message, code),
        });
        const decision = retryDecision(policy, failuresCounted(record), failureOf(err, code));
        await this.save(
          record,
          this.host.events.task(record, "task.failed", {
            node: record.node,
            attempt,
            error: err.message,
            ...(code ? { code } : {}),
            willRetry: decision.retry,
            ...(decision.retry ? { retryInMs: decision.delayMs } : {}),
            call: key,
          }),
        );
        if (!decision.retry) throw err;
        await sleep(decision.delayMs, signal);
        record = await this.toPending(record, {});
      }
    }
  }

  private forgetBefore(step: number): void {
    if (step <= this.step) return;
    this.step = step;
    for (const [id, record] of this.records) if (record.step < step) this.records.delete(id);
    // Results are handed only to calls of the step in progress, which has made none yet.
    this.taken.clear();
  }

  /** Hands a kept result to a call of the task's attempt; false when a call of it was handed it already. */
  private take(task: TaskRecord, record: TaskRecord): boolean {
    const attempt = attemptOf(task);
    const taken = this.taken.get(attempt) ?? new Set<string>();
    if (taken.has(record.id)) return false;
    this.taken.set(attempt, taken.add(record.id));
    return true;
  }

  private fresh(task: TaskRecord, key: string, id: string): TaskRecord {
    // Stores list a step's tasks by creation time: a call made within the millisecond of the one
    // before it (a fast tool, then the model's next turn) is still listed after it.
    const createdAt = Math.max(Date.now(), this.lastCreated + 1);
    this.lastCreated = createdAt;
    return newTaskRecord({ id, runId: task.runId, step: task.step, node: task.node, index: task.index, parent: task.id, call: key, createdAt });
  }

  /** A succeeded call asked again by a later attempt of its node: a new call under the same key, its earlier attempts kept. */
  private again(record: TaskRecord): TaskRecord {
    const { id, runId, step, node, index, parent, call, createdAt, attempts } = record;
    return newTaskRecord({ id, runId, step, node, index, parent, call, createdAt, attempts });
  }

  private async toPending(record: TaskRecord, patch: Partial<TaskRecord>): Promise<TaskRecord> {
    if (record.status === "pending") return { ...record, ...patch };
    if (record.status === "running") {
      // Still marked running from an attempt nobody finished: count it as lost.
      record = lostWithWorker(record, Date.now());
    }
    const pending = transitionTask(record, "pending", { ...patch, error: null, endedAt: null });
    this.records.set(pending.id, pending);
    return pending;
  }

  private async save(record: TaskRecord, event: ReturnType<EventFactory["task"]>): Promise<void> {
    this.records.set(record.id, record);
    await this.host.submit(new Batch().task(record, event));
  }
}

/** The durable calls of a node's attempt that was cut short (`DurableCalls.madeBy`). */
export interface CallsMade {
  /** Keys of the calls that finished: a retry gets their results back. */
  finished: string[];
  /** The calls that had not (running when the worker was lost, or failed): a retry makes them again. */
  unfinished: { call: string; input?: unknown }[];
}

/** A succeeded call made by an attempt of its node that failed, or by one before it. */
function succeededBeforeFailure(record: TaskRecord, task: TaskRecord): boolean {
  return record.status === "succeeded" && record.parentAttempt !== undefined && record.parentAttempt <= lastFailedAttempt(task);
}

function attemptOf(task: TaskRecord): string {
  return `${task.id}#${task.attempts.length}`;
}

/**
 * Whether a failed call stays failed for a node that runs again: it failed past its retries in an
 * attempt of the node that went on (caught the error) and then paused or was stopped, so the
 * node gets the same error back, as Temporal's history hands a workflow its activity's failure
 * again, rather than a new outcome the rest of its recorded calls were not made on. After an
 * attempt of the node that failed, or a failure the retries were not done with (its worker was
 * lost while it waited to try again), it is made again.
 */
function failedForGood(known: TaskRecord, task: TaskRecord, policy: RetryPolicy): boolean {
  if (known.parentAttempt === undefined || known.parentAttempt <= lastFailedAttempt(task) || !known.error || known.error.code === WORKER_LOST) return false;
  const { name, code } = known.error;
  return !retryDecision(policy, failuresCounted(known), { ...(name !== undefined ? { name } : {}), ...(code ? { code } : {}) }).retry;
}

/** The error a call failed with, as its record keeps it. */
function recordedFailure(known: TaskRecord): Error {
  const { message, name, code } = known.error!;
  return Object.assign(new Error(message), { ...(name !== undefined ? { name } : {}), ...(code ? { code } : {}) });
}

/** What a call depends on, hashed; a value that is not JSON is refused naming the call. */
function dependsOnHash(key: string, dependsOn: unknown): string {
  let json: unknown;
  try {
    json = normalize(dependsOn);
  } catch (error) {
    throw new Error(`call "${key}": its dependsOn cannot be written as JSON (${(error as Error).message}); give the JSON values the call's result depends on`);
  }
  return contentHash(json);
}

/** The recorded output must survive a round trip through the store. */
function normalize(value: unknown): unknown {
  if (value === undefined) return null;
  return JSON.parse(JSON.stringify(value)) as unknown;
}

async function withTimeout<T>(value: T | Promise<T>, timeoutMs: number | undefined, key: string, signal: AbortSignal): Promise<T> {
  if (timeoutMs === undefined) return value;
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_resolve, reject) => {
    timer = setTimeout(() => reject(Object.assign(new Error(`call "${key}" timed out after ${timeoutMs} ms`), { code: TIMED_OUT })), timeoutMs);
  });
  const onAbort = () => clearTimeout(timer);
  signal.addEventListener("abort", onAbort, { once: true });
  try {
    return await Promise.race([value, timeout]);
  } finally {
    clearTimeout(timer);
    signal.removeEventListener("abort", onAbort);
  }
}
