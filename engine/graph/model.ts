import type { z } from "zod";
import type { BoundTool } from "../llm/tools.js";
import type { ModelProvider } from "../llm/types.js";
import type { ArtifactRef } from "../store/records.js";
import type { Reducer, State } from "../state/ops.js";
import type { StateValidator } from "../state/schema.js";
import type { NodeDefinition, WorkflowDefinition } from "./definition.js";
import type { Problem } from "./problems.js";

/** What `ctx.interrupt` returns once an operator has answered. */
/** `R`: the response's type, as the request's zod `responseSchema` gives it (checked when it is given). */
export interface InterruptAnswer<R = unknown> {
  decision: string;
  response?: R;
  actor: string;
  /** Why, in the operator's words, when they gave a reason (`resolve --reason`). */
  reason?: string;
  /** Nobody answered in time: the decision (and response) are the request's `deadline`'s, given by a worker as actor `timeout`. */
  timedOut?: true;
}

/**
 * How long a person has to answer, and what the answer is when nobody has by then: a worker gives
 * it (as actor `timeout`), and the run goes on — an approval left for a day is rejected, or routed
 * to someone else, instead of waiting for ever.
 */
export interface InterruptDeadlineOptions<R = unknown> {
  /** From when the question is asked. */
  seconds: number;
  /** One of the request's decisions, not `edit` (nobody edits). */
  decision: string;
  /** The response the deadline answers with (needed for `respond`); checked against `responseSchema`. */
  response?: R;
}

export interface InterruptOptions<R = unknown> {
  question?: string;
  show?: Record<string, unknown>;
  /** Decisions the operator may take; default `["approve", "reject"]`. */
  decisions?: string[];
  /**
   * A response given must match this schema (zod or JSON Schema); others are refused. A decision
   * may come without one (approve: as proposed), except `respond`, which needs one.
   */
  responseSchema?: z.ZodType<R> | Record<string, unknown>;
  data?: unknown;
  /**
   * An answer stands only for this very request. Without it, an answer also stands when the node
   * runs again on the state it was given on, or on that state with the answer's own edit, whatever
   * the request says then (a node may word its question differently each time); with it, a
   * request that differs in anything (another tool call proposed on the edited state) is asked
   * again: an approval covers what the operator saw.
   */
  exact?: boolean;
  deadline?: InterruptDeadlineOptions<R>;
}

export interface NodeLogger {
  debug(message: string, data?: unknown): void;
  info(message: string, data?: unknown): void;
  warn(message: string, data?: unknown): void;
  error(message: string, data?: unknown): void;
}

export interface CallOptions {
  /** Retries of this call, within one attempt of its node. */
  retry?: import("./definition.js").RetryPolicyInput;
  timeoutMs?: number;
  /**
   * What the call is made with (a model's prompt, a tool's arguments), kept on its record for
   * people to read, never to replay: secret-looking keys hidden as in events, long text cut.
   */
  input?: unknown;
  /**
   * What the call's result depends on (a model's whole request, a tool's name and arguments).
   * Given, a recorded output is handed back only while this is the same (compared by a hash of
   * its JSON, keys in any order): a node that runs again on a state an operator edited makes
   * again the calls whose inputs the edit changed, instead of replaying answers to another
   * question. Absent, the key alone decides.
   */
  dependsOn?: unknown;
  /**
   * A call that succeeded in an attempt of its node that then failed: `"keep"` (the default) is
   * not made again by the node's next attempt — its recorded output is handed back (with
   * `dependsOn`, only while that is the same: with another, the call is a new one beside it, its
   * idempotency key `<task id>/<key>@<attempt>`), so a side effect happens once per node run;
   * `"again"` is made again (a model's answer, which may be what failed the node).
   */
  afterFailure?: "again" | "keep";
}

/** What the function of a durable call receives. */
export interface CallContext {
  readonly signal: AbortSignal;
  readonly attempt: number;
  /** The same for every attempt of this call: hand it to the system the call talks to. */
  readonly idempotencyKey: string;
}

/** What a node receives beside the state; `I`, a mapped node's item (the element type of the key it maps over). */
export interface NodeContext<I = unknown> {
  readonly runId: string;
  readonly taskId: string;
  readonly node: string;
  readonly step: number;
  /** 1 for the first attempt, 2 for the first retry... */
  readonly attempt: number;
  /** The same for every attempt of this task: use it to deduplicate side effects elsewhere. */
  readonly idempotencyKey: string;
  /** Aborted on kill, cancel, timeout or lost lease. Pass it to fetch and friends. */
  readonly signal: AbortSignal;
  /** For a mapped (fan-out) node: the item this task works on, and its position. */
  readonly item: I;
  readonly index: number | null;
  /** Reports progress of a long node (`fraction` 0..1); becomes a `node.progress` event. */
  progress(fraction: number | null, message?: string): void;
  /** Lines become `node.log` events. */
  readonly log: NodeLogger;
  /**
   * Pauses the run for a person. On resume the node runs again from its start and this call
   * returns the operator's answer. Do not catch the exception it throws to pause.
   */
  interrupt<R = unknown>(request: InterruptOptions<R>): Promise<InterruptAnswer<R>>;
  /** Stores bytes or text as a content-addressed artifact of this run. */
  artifact(data: string | Uint8Array, mediaType?: string): Promise<ArtifactRef>;
  /**
   * A durable call inside the node (a tool call, a model call): a child task with its own
   * attempts, retry policy, idempotency key and events. Its result is recorded once it succeeds;
   * when the node runs again (after a crash, a retry or an interrupt), the recorded result is
   * returned instead of calling again. Keys must be unique within the node and deterministic.
   */
  call<T>(key: string, fn: (ctx: CallContext) => T | Promise<T>, options?: CallOptions): Promise<T>;
  /**
   * The data of a signal named `name` sent to the run (`Operator.signal`, `pitwall signal`): the
   * oldest not yet taken. With none, the node parks (no worker holds the run) until one is sent,
   * and runs again from its start; the signals it took are kept on its task, so each `receive` of
   * a name gets the same one every time the node runs. Do not catch the exception it throws to park.
   * With `timeoutSeconds`, undefined once that long has passed since the node's task was scheduled
   * with none come (kept too: a node that runs again is told the same).
   */
  receive<T = unknown>(name: string): Promise<T>;
  receive<T = unknown>(name: string, options: { timeoutSeconds: number }): Promise<T | undefined>;
}

/** A node may return a partial state, or `{ route, update }` to choose its route (SuperAGI style). */
export type NodeResult<S extends State = State, W extends State = S> = Partial<W> | { route: string; update?: Partial<W> } | void | undefined;

// `any` state keeps node functions written for a specific state assignable to the generic form.
// eslint-disable-next-line @typescript-eslint/no-explicit-any
// `W`: what a node may write per key — the key's type, or what its reducer takes (an item of an
// `append` list, a custom reducer's update).
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export type NodeFunction<S extends State = any, W extends State = S, I = unknown> = (state: Readonly<S>, ctx: NodeContext<I>) => NodeResult<S, W> | Promise<NodeResult<S, W>>;

export type Router<S extends State = State> = (state: Readonly<S>) => string | undefined;

export interface CompiledNode {
  readonly name: string;
  readonly definition: NodeDefinition;
  readonly run: NodeFunction;
  readonly router?: Router;
}

/**
 * A workflow ready to run: its canonical definition and version plus the code behind its nodes.
 * Built by `workflow(...).compile()` from code or by `loadWorkflow` from data.
 */
export interface CompiledWorkflow<S extends State = State> {
  readonly name: string;
  readonly version: string;
  readonly definition: WorkflowDefinition;
  readonly validator: StateValidator;
  readonly nodes: ReadonlyMap<string, CompiledNode>;
  /** Sub-workflows, by version. */
  readonly children: ReadonlyMap<string, CompiledWorkflow>;
  /**
   * What checking it warned of (a join a route can leave short, routes without a default...):
   * the warnings `pitwall validate` prints, which compiling does not throw for.
   */
  readonly warnings: readonly Problem[];
  reducerOf(key: string): Reducer;
  /** Validates a run's input (a partial state) and fills in defaults. */
  initialState(input: unknown): S;
  /**
   * The same workflow (same version) whose model nodes, and its sub-workflows', use `model` when
   * it was compiled without one of its own: the model of the engine or worker that runs it.
   */
  withModel(model: ModelProvider): CompiledWorkflow<S>;
  /** A marker for the state type only. */
  readonly __state?: S;
}

/** The state type of a compiled workflow: `StateOf<typeof myWorkflow>`. */
export type StateOf<W> = W extends CompiledWorkflow<infer S> ? S : never;

export type ActionMap = Record<string, NodeFunction>;

/**
 * What the operator chose to load: actions by name, and — for llm, tool and agent nodes — tools
 * by name and a model provider.
 */
export interface ActionRegistry {
  /** An action's function; undefined when no loaded module exports it. */
  get(name: string): NodeFunction | undefined;
  names(): string[];
  /**
   * Why a name a loaded module exports is no action (`it is the number 42, not a function`);
   * undefined when no module exports anything under it. A registry without this method cannot tell.
   */
  whyNotAction?(name: string): string | undefined;
  /** A tool; undefined when no loaded module exports it. A registry without this method cannot tell. */
  tool?(name: string): BoundTool | undefined;
  toolNames?(): string[];
  /** The model of model nodes; absent: the environment's (PITWALL_LLM_*). */
  readonly model?: ModelProvider;
}
