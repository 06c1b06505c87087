import { canonicalJson } from "../graph/canonical.js";
import { derivedId } from "../ids.js";
import type { CallContext, CallOptions, CompiledWorkflow, InterruptAnswer, InterruptOptions, NodeContext, NodeLogger } from "../graph/model.js";
import type { State } from "../state/ops.js";
import type { ArtifactRef, InterruptKind, InterruptRequest, RunRecord, SignalRecord, TaskRecord, TaskWait } from "../store/records.js";
import { deadlineAsked } from "./deadlines.js";
import { MAX_DEADLINE_SECONDS } from "./deadlines.js";
import { checkSignalName } from "./signal-inbox.js";
import { InterruptSignal, ParkSignal } from "./signals.js";
import type { StoreClock } from "./store-clock.js";
import { jsonSchemaOf, zod } from "../zod.js";

/** What the executor lends a node's context for one attempt. */
export interface AttemptServices {
  run: RunRecord;
  task: TaskRecord;
  attempt: number;
  /** Answers to this task's resolved interrupts, by interrupt id. */
  answers: ReadonlyMap<string, RecordedAnswer>;
  progress(fraction: number | null, message?: string): void;
  log(level: "debug" | "info" | "warn" | "error", message: string, data?: unknown): void;
  artifact(data: Uint8Array, mediaType: string): Promise<ArtifactRef>;
  /** The child run of this task for `generation` (created on first call), for sub-workflow nodes. */
  childRun(child: CompiledWorkflow, input: State, generation: number): Promise<RunRecord>;
  /** A child run's state at checkpoint `n` (its head when not given). */
  childState(run: RunRecord, n?: number): Promise<State>;
  call(key: string, fn: (ctx: CallContext) => unknown, options: CallOptions, signal: AbortSignal): Promise<unknown>;
  /** The signal the call `key` (`name#k`) of this task took, or takes now from the run's inbox; undefined while there is none. */
  receive(key: string, name: string): SignalRecord | undefined;
  /** Records that the call `key` gave up waiting for `name` (its timeout passed). */
  receiveTimedOut(key: string, name: string): void;
  /** A result kept from before the node's last failure that a call made with `options` is handed (DurableCalls.kept). */
  kept(key: string, options: CallOptions): { call: string; output: unknown } | undefined;
  /** A value without the values of secret-looking keys, as the run's records keep what people read. */
  redact(value: unknown): unknown;
  /** Now as the run's store sees it, which judges timers. */
  readonly clock: StoreClock;
}

/** An operator's answer, with what it answered and whether the state is still the one it was given on. */
export interface RecordedAnswer {
  answer: InterruptAnswer;
  request: InterruptRequest;
  /**
   * The node runs again on the state its question was made from, or on that state with only the
   * answer's own edit (or the interrupt predates that record): the answer stands as it is.
   */
  sameState: boolean;
}

/** The context built-in node kinds see: the public one plus parking and child runs. */
export interface InternalContext extends NodeContext {
  readonly task: TaskRecord;
  readonly clock: StoreClock;
  interruptAs(kind: InterruptKind, request: InterruptOptions): Promise<InterruptAnswer>;
  /**
   * Counts a question this attempt does not ask where the attempts before asked one (the
   * approval of a tool call whose kept result it is handed), so that the questions after it keep
   * the ids their answers are recorded under.
   */
  skipInterrupt(): void;
  park(wait: TaskWait): never;
  /** `receive`, telling a wait that timed out from a signal that came without data. */
  awaitSignal(name: string, options?: { timeoutSeconds?: number }): Promise<{ timedOut: true } | { timedOut: false; data: unknown }>;
  /**
   * The result a call of `key` made now with `options` would be handed from a call made under
   * another key before the node's last failure, taken for it; undefined when none is left.
   */
  keptCall(key: string, options: CallOptions): { call: string; output: unknown } | undefined;
  childRun(child: CompiledWorkflow, input: State, generation: number): Promise<RunRecord>;
  childState(run: RunRecord, n?: number): Promise<State>;
}

export class AttemptContext implements InternalContext {
  /** A pause the node asked for, kept even if the node caught the exception. */
  raised: InterruptSignal | ParkSignal | undefined;
  private interruptCalls = 0;
  /** How many times the node has received each signal name so far in this attempt. */
  private receiveCalls: Map<string, number> | undefined;
  private callKeys: Set<string> | undefined;
  private logger: NodeLogger | undefined;

  constructor(
    private readonly services: AttemptServices,
    /** The attempt's abort signal, read when the node first asks for it (made then: most nodes never do). */
    private readonly aborts: { readonly signal: AbortSignal },
  ) {}

  get log(): NodeLogger {
    const services = this.services;
    return (this.logger ??= {
      debug: (message, data) => services.log("debug", message, data),
      info: (message, data) => services.log("info", message, data),
      warn: (message, data) => services.log("warn", message, data),
      error: (message, data) => services.log("error", message, data),
    });
  }

  get runId() {
    return this.services.run.id;
  }
  get taskId() {
    return this.services.task.id;
  }
  get node() {
    return this.services.task.node;
  }
  get step() {
    return this.services.task.step;
  }
  get attempt() {
    return this.services.attempt;
  }
  get idempotencyKey() {
    return this.services.task.idempotencyKey;
  }
  get signal() {
    return this.aborts.signal;
  }
  get item() {
    return this.services.task.input;
  }
  get index() {
    return this.services.task.index;
  }
  get task() {
    return this.services.task;
  }
  get clock() {
    return this.services.clock;
  }

  progress(fraction: number | null, message?: string): void {
    this.services.progress(fraction, message);
  }

  interrupt<R = unknown>(request: InterruptOptions<R>): Promise<InterruptAnswer<R>> {
    // The response was checked against the request's schema when the operator gave it.
    return this.interruptAs("node", request as InterruptOptions) as Promise<InterruptAnswer<R>>;
  }

  /**
   * The answer recorded for this call, when it still answers it: the state is the one it was
   * given on (unless the request is `exact`), or the node asks exactly what was answered. Otherwise — an operator edited the
   * state while the question was pending or after it was answered, or retried with a patch, and
   * the request now shows other values —
   * the operator is asked again, under the call's next id: an approval covers what it saw.
   */
  async interruptAs(kind: InterruptKind, options: InterruptOptions): Promise<InterruptAnswer> {
    const call = this.interruptCalls++;
    const request = withoutSecrets(toRequest(options), (value) => this.services.redact(value));
    const deadline = deadlineAsked(options.deadline, request);
    for (let revision = 0, previous: string | undefined; ; revision++) {
      const id = interruptIdFor(this.services.task.id, call, revision);
      const recorded = this.services.answers.get(id);
      if (!recorded) {
        const signal = new InterruptSignal(id, kind, request, previous, deadline);
        this.raised = signal;
        throw signal;
      }
      // A deadline's answer was given to no one's reading of the request: asking again protects nobody.
      if (((recorded.sameState || recorded.answer.timedOut) && !options.exact) || sameRequest(recorded.request, request)) return recorded.answer;
      previous = id;
    }
  }

  receive<T = unknown>(name: string): Promise<T>;
  receive<T = unknown>(name: string, options: { timeoutSeconds: number }): Promise<T | undefined>;
  async receive<T = unknown>(name: string, options: { timeoutSeconds?: number } = {}): Promise<T | undefined> {
    const got = await this.awaitSignal(name, options);
    return got.timedOut ? undefined : (got.data as T);
  }

  async awaitSignal(name: string, options: { timeoutSeconds?: number } = {}): Promise<{ timedOut: true } | { timedOut: false; data: unknown }> {
    checkSignalName(name);
    const timeout = options.timeoutSeconds;
    if (timeout !== undefined && !(typeof timeout === "number" && timeout > 0 && timeout <= MAX_DEADLINE_SECONDS)) {
      throw new Error(`receive "${name}": timeoutSeconds must be a number above 0 and at most ${MAX_DEADLINE_SECONDS} (100 years), not ${JSON.stringify(timeout)}`);
    }
    this.receiveCalls ??= new Map();
    const k = (this.receiveCalls.get(name) ?? 0) + 1;
    this.receiveCalls.set(name, k);
    const key = `${name}#${k}`;
    const signal = this.services.receive(key, name);
    if (signal) return signal.timedOut ? { timedOut: true } : { timedOut: false, data: signal.data };
    if (timeout === undefined) return this.park({ kind: "signal", name });
    // Counted from when the node's task was scheduled, as a wait node's seconds are.
    const until = this.services.clock.fromLocal(this.services.task.createdAt) + Math.round(timeout * 1000);
    if (this.services.clock.now() < until) return this.park({ kind: "signal", name, until });
    this.services.receiveTimedOut(key, name);
    return { timedOut: true };
  }

  skipInterrupt(): void {
    this.interruptCalls++;
  }

  park(wait: TaskWait): never {
    const signal = new ParkSignal(wait);
    this.raised = signal;
    throw signal;
  }

  async artifact(data: string | Uint8Array, mediaType?: string): Promise<ArtifactRef> {
    const bytes = typeof data === "string" ? new TextEncoder().encode(data) : data;
    return this.services.artifact(bytes, mediaType ?? (typeof data === "string" ? "text/plain; charset=utf-8" : "application/octet-stream"));
  }

  async call<T>(key: string, fn: (ctx: CallContext) => T | Promise<T>, options: CallOptions = {}): Promise<T> {
    if (!key || key.includes("/")) throw new Error(`call key ${JSON.stringify(key)} must be non-empty and without "/"`);
    this.callKeys ??= new Set();
    if (this.callKeys.has(key)) throw new Error(`call key "${key}" is used twice in one run of node "${this.node}"; keys must be unique`);
    if (options.afterFailure !== undefined && options.afterFailure !== "keep" && options.afterFailure !== "again") {
      throw new Error(`call "${key}": afterFailure ${JSON.stringify(options.afterFailure)} is neither "keep" nor "again"`);
    }
    this.callKeys.add(key);
    return (await this.services.call(key, fn, options, this.signal)) as T;
  }

  keptCall(key: string, options: CallOptions): { call: string; output: unknown } | undefined {
    return this.services.kept(key, options);
  }

  childRun(child: CompiledWorkflow, input: State, generation: number): Promise<RunRecord> {
    return this.services.childRun(child, input, generation);
  }

  childState(run: RunRecord, n?: number): Promise<State> {
    return this.services.childState(run, n);
  }
}

/**
 * The k-th `ctx.interrupt` call of a task always has the same id, across re-runs; asked again
 * because its answer no longer applies, it takes the next revision's.
 */
export function interruptIdFor(taskId: string, call: number, revision = 0): string {
  return revision === 0 ? derivedId("int", taskId, call) : derivedId("int", taskId, call, revision);
}

/** Two requests ask the same, as stored (JSON, keys in any order). */
function sameRequest(stored: InterruptRequest, asked: InterruptRequest): boolean {
  return canonicalJson(stored) === canonicalJson(JSON.parse(JSON.stringify(asked)));
}

/**
 * A request as it is stored, shown and compared: the values it shows and its data (an agent's
 * tool arguments) without secrets. Two requests that differ only there ask the same.
 */
function withoutSecrets(request: InterruptRequest, redact: (value: unknown) => unknown): InterruptRequest {
  return {
    ...request,
    ...(request.show !== undefined ? { show: redact(request.show) as Record<string, unknown> } : {}),
    ...(request.data !== undefined ? { data: redact(request.data) } : {}),
  };
}

function toRequest(options: InterruptOptions): InterruptRequest {
  const schema = options.responseSchema;
  return {
    ...(options.question !== undefined ? { question: options.question } : {}),
    ...(options.show !== undefined ? { show: options.show } : {}),
    decisions: options.decisions ?? ["approve", "reject"],
    ...(schema !== undefined
      ? { responseSchema: schema instanceof zod().ZodType ? jsonSchemaOf(schema) : schema }
      : {}),
    ...(options.data !== undefined ? { data: options.data } : {}),
  };
}
