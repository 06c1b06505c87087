import { asError, errorCodeOf } from "../errors.js";
import type { CompiledNode } from "../graph/model.js";
import { hasRoutes } from "../graph/definition.js";
import { describeValueProblem, valueProblem } from "../state/limits.js";
import { copyData, isPlainObject, type State } from "../state/ops.js";
import type { TaskWait } from "../store/records.js";
import { AttemptContext, type AttemptServices } from "./context.js";
import { TIMED_OUT } from "./retry.js";
import { InterruptSignal, ParkSignal, TaskAbortedError, type AbortCause } from "./signals.js";

/** How one attempt of a task ended. */
export type AttemptOutcome =
  | { kind: "succeeded"; update: State; route?: string }
  | { kind: "failed"; error: Error; code?: string }
  | { kind: "interrupted"; signal: InterruptSignal }
  | { kind: "parked"; wait: TaskWait }
  | { kind: "canceled"; cause: AbortCause; abandoned?: true };

/** A running attempt: the executor can abort it; `done` always settles, even if the node never does. */
export interface RunningAttempt {
  readonly done: Promise<AttemptOutcome>;
  abort(cause: AbortCause): void;
}

export interface AttemptOptions {
  timeoutMs?: number;
  /** After an abort, how long a node that ignores its signal is waited for before it is abandoned. */
  graceMs: number;
}

/**
 * Runs one attempt of a node. Cancellation is cooperative (the node's `ctx.signal`); a node that
 * ignores it is abandoned after the grace period and whatever it returns later is discarded.
 */
export function startAttempt(
  node: CompiledNode,
  state: State,
  services: AttemptServices,
  options: AttemptOptions,
): RunningAttempt {
  return new Attempt(node, state, services, options);
}

/**
 * One attempt: `done` settles once, with the node's outcome or, after an abort ignored through
 * the grace period, with the abandonment. Its abort signal is made only when the node asks for it
 * (most nodes never do; a signal and its controller are a good part of a short step's cost).
 */
class Attempt implements RunningAttempt {
  readonly done: Promise<AttemptOutcome>;
  private resolve!: (outcome: AttemptOutcome) => void;
  private settled = false;
  private cause: AbortCause | undefined;
  private reason: TaskAbortedError | undefined;
  private controller: AbortController | undefined;
  private readonly timeout: NodeJS.Timeout | undefined;
  private graceTimer: NodeJS.Timeout | undefined;

  constructor(
    private readonly node: CompiledNode,
    state: State,
    services: AttemptServices,
    private readonly options: AttemptOptions,
  ) {
    this.done = new Promise((resolve) => (this.resolve = resolve));
    if (options.timeoutMs !== undefined) this.timeout = setTimeout(() => this.abort("timeout"), options.timeoutMs);
    this.execute(state, new AttemptContext(services, this));
  }

  get signal(): AbortSignal {
    if (!this.controller) {
      this.controller = new AbortController();
      if (this.reason) this.controller.abort(this.reason);
    }
    return this.controller.signal;
  }

  abort(why: AbortCause): void {
    if (this.cause) return;
    this.cause = why;
    this.reason = new TaskAbortedError(why, why === "timeout" ? `node "${this.node.name}" timed out after ${this.options.timeoutMs} ms` : undefined);
    this.controller?.abort(this.reason);
    if (this.settled) return;
    this.graceTimer = setTimeout(() => this.settle(outcomeOfAbort(why, this.node.name, this.options, true)), this.options.graceMs);
  }

  private settle(outcome: AttemptOutcome): void {
    if (this.settled) return;
    this.settled = true;
    clearTimeout(this.timeout);
    clearTimeout(this.graceTimer);
    this.resolve(outcome);
  }

  /**
   * A node that returns at once (no promise) is settled without waiting a turn of the event loop
   * for it: its outcome still reaches the executor through `done`, one hop instead of two.
   */
  private execute(state: State, ctx: AttemptContext): void {
    let result: unknown;
    try {
      result = this.node.run(state, ctx);
    } catch (error) {
      return this.settle(this.thrown(ctx, error));
    }
    if (!isThenable(result)) return this.settle(this.returned(ctx, result));
    result.then(
      (value) => this.settle(this.returned(ctx, value)),
      (error: unknown) => this.settle(this.thrown(ctx, error)),
    );
  }

  private returned(ctx: AttemptContext, result: unknown): AttemptOutcome {
    // A kill, a cancel or a timeout discards a late result; a worker shutting down keeps one
    // that came back within its grace period (the work is done: running it again would repeat it).
    if (this.cause && this.cause !== "shutdown") return outcomeOfAbort(this.cause, this.node.name, this.options);
    if (ctx.raised) return pauseOutcome(ctx.raised);
    try {
      return normalizeResult(this.node, result);
    } catch (error) {
      return this.thrown(ctx, error);
    }
  }

  private thrown(ctx: AttemptContext, error: unknown): AttemptOutcome {
    if (this.cause) return outcomeOfAbort(this.cause, this.node.name, this.options);
    if (ctx.raised) return pauseOutcome(ctx.raised);
    const err = explained(asError(error));
    const code = errorCodeOf(err);
    return { kind: "failed", error: err, ...(code ? { code } : {}) };
  }
}

/** `abandoned`: the node ignored its signal through the grace period, and was left running. */
function outcomeOfAbort(cause: AbortCause, node: string, options: AttemptOptions, abandoned = false): AttemptOutcome {
  if (cause === "timeout") {
    // The attempt's time then runs to the abandonment, not to the timeout: say why.
    const left = abandoned ? `; abandoned ${seconds(options.graceMs)} later (it ignored its signal), its result discarded` : "";
    const error = new TaskAbortedError("timeout", `node "${node}" timed out after ${options.timeoutMs} ms${left}`);
    return { kind: "failed", error, code: TIMED_OUT };
  }
  return { kind: "canceled", cause, ...(abandoned ? { abandoned: true as const } : {}) };
}

function seconds(ms: number): string {
  return ms % 1000 === 0 ? `${ms / 1000} s` : `${ms} ms`;
}

function pauseOutcome(raised: InterruptSignal | ParkSignal): AttemptOutcome {
  return raised instanceof InterruptSignal ? { kind: "interrupted", signal: raised } : { kind: "parked", wait: raised.wait };
}

/**
 * A node with routes chooses one with `{ route, update }`; any other object, and anything a node
 * without routes returns, is the update itself. A key written `undefined` is not written (as in
 * JSON, where it does not exist): `{ n: found ? 1 : undefined }` leaves `n` as it is.
 */
function isThenable(value: unknown): value is PromiseLike<unknown> {
  return typeof (value as PromiseLike<unknown> | null)?.then === "function";
}

function normalizeResult(node: CompiledNode, result: unknown): AttemptOutcome {
  if (result === undefined || result === null) return { kind: "succeeded", update: {} };
  if (!isPlainObject(result)) {
    const what = Array.isArray(result) ? "an array" : typeof result;
    return { kind: "failed", error: new Error(`node "${node.name}" returned ${what}; a node returns an object of state updates`), code: "BAD_OUTPUT" };
  }
  const keys = Object.keys(result);
  if (hasRoutes(node.definition) && typeof result.route === "string" && keys.every((k) => k === "route" || k === "update")) {
    const update = result.update ?? {};
    if (!isPlainObject(update)) {
      return { kind: "failed", error: new Error(`node "${node.name}" returned a non-object update`), code: "BAD_OUTPUT" };
    }
    return written(node, update, result.route);
  }
  return written(node, result);
}

function written(node: CompiledNode, update: Record<string, unknown>, route?: string): AttemptOutcome {
  const defined = hasUndefined(update) ? Object.fromEntries(Object.entries(update).filter(([, v]) => v !== undefined)) : update;
  // Measured before it is copied: a value nested thousands of levels deep would overflow the
  // stack of the copy, or of the commit after it (then no step could be saved).
  const problem = valueProblem(defined);
  if (problem) return { kind: "failed", error: new Error(describeValueProblem(`node "${node.name}" returned a value that`, problem)), code: "BAD_OUTPUT" };
  // A copy: the node may go on changing the objects it returned, which become the state's. What
  // passed the look above is plain data (objects, arrays, strings, finite numbers, booleans,
  // null), which a plain copy takes as structuredClone would, some thirty times faster.
  return { kind: "succeeded", update: copyData(defined), ...(route !== undefined ? { route } : {}) };
}

function hasUndefined(update: Record<string, unknown>): boolean {
  for (const key in update) if (Object.hasOwn(update, key) && update[key] === undefined) return true;
  return false;
}

/** A node that changed the (read-only) state it was given in place is told how to write instead. */
function explained(error: Error): Error {
  if (!(error instanceof TypeError) || !/read.only property|not extensible|Cannot delete property/.test(error.message)) return error;
  error.message = `${error.message}: the state a node is given is read-only; return the change instead (e.g. { items: [item] } for a key with the append reducer)`;
  return error;
}
