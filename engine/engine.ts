import { NotFoundError, RunExistsError, ValidationError } from "./errors.js";
import { parseCheckpointId } from "./ids.js";
import { actionRegistry, extendRegistry } from "./graph/actions.js";
import type { Tool } from "./llm/tools.js";
import type { ModelProvider } from "./llm/types.js";
import type { ActionRegistry, CompiledWorkflow } from "./graph/model.js";
import { MAX_TIMER_MS } from "./graph/definition.js";
import type { ChannelOp, State } from "./state/ops.js";
import { readState } from "./state/read.js";
import { MemoryStore } from "./store/memory/memory-store.js";
import type { CheckpointSummary, EventRecord, InterruptRecord, RunRecord } from "./store/records.js";
import type { Store } from "./store/store.js";
import { Operator, defaultActor, type CommandOutcome, type OperatorOptions, type SignalResult } from "./operator/operator.js";
import { startRun } from "./operator/start.js";
import { continueRun } from "./operator/continue-run.js";
import { followRun } from "./operator/reads.js";
import { pausedOnFailure, pendingInterruptsOf, waitForRun, type Diagnosis, type WaitOptions } from "./operator/run-wait.js";
import { WorkflowRegistry } from "./worker/registry.js";
import { Worker, type StopOptions, type WorkerOptions } from "./worker/worker.js";

export interface EngineOptions {
  /**
   * Where runs are kept (default: an in-memory store of this engine's). A store given here stays
   * the caller's: `engine.close()` leaves it open (other engines, workers or operators may share
   * it), and the caller closes it when done with it.
   */
  store?: Store;
  /** Workflows built in code that this process can run. */
  workflows?: readonly CompiledWorkflow[];
  /** Actions for workflows written as JSON (by name). */
  actions?: ActionRegistry | Record<string, unknown>;
  /** Tools for llm, tool and agent nodes (by name), beside those of the actions modules. */
  tools?: Record<string, Tool>;
  /**
   * The model of llm, tool and agent nodes. Default: from the environment — an OpenAI-compatible
   * server (PITWALL_LLM_BASE_URL, PITWALL_LLM_API_KEY), else a script (PITWALL_LLM_SCRIPT).
   */
  model?: ModelProvider;
  /** The in-process worker; `false` to only start runs and let other processes execute them. */
  worker?: WorkerOptions | false;
  /** Recorded as the actor of the runs this engine starts, and of the commands its run handles send (`run.cancel`). */
  actor?: string;
  /**
   * Names of secrets, added to the default ones (`apiKey`, `token`, `password`, `secret`, ...):
   * events and records people read never hold their values. Used by this engine's worker (unless
   * `worker.secretKeys` says otherwise) and its operators.
   */
  secretKeys?: readonly string[];
}

export interface StartOptions {
  /**
   * The run's id (letters, digits, '.', '_' and '-', at most 128; default: a random `run-…`): a key
   * of the caller's (an order number) that makes a retried start safe. A second start with an id
   * a run has throws `RunExistsError`.
   */
  id?: string;
  /**
   * With `id`: "reuse" takes a run that has the id already as this start when it is the same
   * start (same workflow name, input and interrupt lists: `RunExistsError.sameStart`) and returns
   * its handle, as a start retried after a lost reply expects; another run with that id still
   * throws. Default "error".
   */
  ifExists?: "error" | "reuse";
  /**
   * A run that has ended: the new run goes on from its final state, with the input applied as an
   * update through the reducers (a message appended to a list), and runs the workflow from its
   * start node — a new turn of a conversation (LangGraph's thread invoked again). Recorded as a
   * fork of the ended run's last checkpoint.
   */
  from?: string;
  /** Per-run overrides of the workflow's interrupt lists. */
  interruptBefore?: string[];
  interruptAfter?: string[];
  /**
   * Names to find the run by (`listRuns({ tags })`, `pitwall runs --tag`), Temporal's search
   * attributes at their simplest: at most 16, names of letters, digits, '.', '_' and '-', text
   * values. Its forks and continuations keep them (`from`: these are added).
   */
  tags?: Record<string, string>;
  /**
   * A run not ended this long after it starts is canceled by a worker (actor `timeout`), its
   * nodes aborted and its child runs canceled; default the workflow's `limits.deadlineSeconds`.
   */
  deadlineSeconds?: number;
  actor?: string;
}

/**
 * The embedding API: start runs, await them, follow their events, and act on them as an
 * operator. An engine runs its own worker unless told not to.
 */
export class Engine {
  readonly store: Store;
  readonly registry: WorkflowRegistry;
  readonly worker: Worker | undefined;
  private readonly actor: string;
  private readonly givenActor: string | undefined;
  private readonly secretKeys: readonly string[];
  /** Whether this engine made its store (the default memory store), and so closes it. */
  private readonly ownsStore: boolean;

  constructor(options: EngineOptions = {}) {
    this.store = options.store ?? new MemoryStore();
    this.ownsStore = options.store === undefined;
    let actions = isRegistry(options.actions) ? options.actions : actionRegistry(options.actions ?? {});
    if (options.tools || options.model) {
      actions = extendRegistry(actions, { ...(options.tools ? { tools: options.tools } : {}), ...(options.model ? { model: options.model } : {}) }, "engine option");
    }
    this.registry = new WorkflowRegistry(this.store, actions, options.workflows ?? []);
    this.givenActor = options.actor;
    this.actor = options.actor ?? "engine";
    this.secretKeys = options.secretKeys ?? [];
    if (options.worker !== false) {
      this.worker = new Worker(this.store, this.registry, { secretKeys: this.secretKeys, ...(options.worker ?? {}) });
      this.worker.start();
    }
  }

  /** Stores the workflow's version and creates a queued run of it; the input is validated first. */
  start<S extends State>(workflow: CompiledWorkflow<S>, input?: Partial<S>, options?: StartOptions): Promise<RunHandle<S>>;
  /** A workflow by name: the last one registered in code, or a stored version. */
  start(workflow: string, input?: unknown, options?: StartOptions): Promise<RunHandle>;
  async start(workflow: CompiledWorkflow | string, input: unknown = {}, options: StartOptions = {}): Promise<RunHandle> {
    const compiled = typeof workflow === "string" ? this.registry.byName(workflow) ?? (await this.registry.resolve(workflow)) : workflow;
    if (!compiled) throw new NotFoundError("workflow", String(workflow));
    this.registry.register(compiled);
    if (options.from !== undefined) return this.goOn(compiled, options.from, input, options);
    if (options.ifExists !== undefined && options.ifExists !== "error" && options.ifExists !== "reuse") {
      throw new ValidationError(`ifExists ${JSON.stringify(options.ifExists)}: give "error" or "reuse"`);
    }
    let id: string;
    try {
      id = await startRun(this.store, compiled, input, {
        actor: options.actor ?? this.actor,
        ...(options.id !== undefined ? { id: options.id } : {}),
        interruptBefore: options.interruptBefore ?? null,
        interruptAfter: options.interruptAfter ?? null,
        ...(options.tags !== undefined ? { tags: options.tags } : {}),
        ...(options.deadlineSeconds !== undefined ? { deadlineSeconds: options.deadlineSeconds } : {}),
      });
    } catch (error) {
      if (!(options.ifExists === "reuse" && error instanceof RunExistsError && error.sameStart)) throw error;
      id = error.run.id;
    }
    this.worker?.nudge();
    return this.run(id);
  }

  private async goOn(workflow: CompiledWorkflow, from: string, input: unknown, options: StartOptions): Promise<RunHandle> {
    if (options.id !== undefined || options.ifExists !== undefined) {
      throw new ValidationError("a run started from another gets its id from the fork: give `from` without id or ifExists");
    }
    const runId = await continueRun(this.store, workflow, from, input, {
      actor: options.actor ?? this.actor,
      secretKeys: this.secretKeys,
      ...(options.interruptBefore !== undefined ? { interruptBefore: options.interruptBefore } : {}),
      ...(options.interruptAfter !== undefined ? { interruptAfter: options.interruptAfter } : {}),
      ...(options.tags !== undefined ? { tags: options.tags } : {}),
      ...(options.deadlineSeconds !== undefined ? { deadlineSeconds: options.deadlineSeconds } : {}),
    });
    this.worker?.nudge();
    return this.run(runId);
  }

  /**
   * A handle on an existing run. Given the run's workflow, the handle is typed by its state (the
   * run is checked to be of that workflow when read); or name the type: `engine.run<StateOf<typeof wf>>(id)`.
   */
  run<S extends State = State>(id: string, workflow?: CompiledWorkflow<S>): RunHandle<S> {
    return new RunHandle<S>(this.store, id, (run) => this.whyNotRunning(run), { actor: this.actor, secretKeys: this.secretKeys }, workflow?.name);
  }

  /** A queued run that the worker of this engine cannot run: the version it cannot, and why. */
  private async whyNotRunning(run: RunRecord): Promise<string | undefined> {
    if (!this.worker || run.status !== "queued" || run.waitingOn !== null || (await this.registry.resolve(run.version))) return undefined;
    return `this engine's worker cannot run it: ${this.registry.whyUnusable(run.version) ?? `version ${run.version} is not in the store`}; register the workflow as it was when the run started, or fork the run onto a version this engine has (operator.fork(runId, n, { workflow }))`;
  }

  /**
   * Operator actions (resolve, kill, retry, cancel, breakpoints, fork, state edits), recorded as
   * `operator:<name>` when a name is given, else as the engine's `actor` when it was given one
   * (what `run.cancel` records too), else as `operator:<the user running this process>`.
   */
  operator(options: OperatorOptions | string = {}): Operator {
    const opts = typeof options === "string" ? { actor: defaultActor(options) } : options;
    return new Operator(this.store, { secretKeys: this.secretKeys, ...(this.givenActor !== undefined ? { actor: this.givenActor } : {}), ...opts });
  }

  /**
   * Stops the worker (draining its running nodes for `drainMs` when given: `Worker.stop`), and
   * closes the store if this engine made it: a store passed in `EngineOptions.store` is left open
   * for the caller, who owns it.
   */
  async close(options: StopOptions = {}): Promise<void> {
    await this.worker?.stop(options);
    if (this.ownsStore) await this.store.close();
  }
}

/** The longest wait a timer can hold (setTimeout's limit, about 24.8 days). */
export const MAX_WAIT_MS = MAX_TIMER_MS;

/** A run's state at one of its checkpoints, as `RunHandle.values()` gives it. */
export interface StateAt<S extends State = State> {
  checkpointId: string;
  n: number;
  /** The store-wide sequence number of the event that announced it: `after` resumes a stream past it (a client that reconnects). */
  seq: number;
  /** The nodes whose writes the checkpoint holds (none for the input; the node an edit was made as). */
  nodes: string[];
  state: S;
}

/** What a checkpoint changed, as `RunHandle.updates()` gives it. */
export interface UpdateAt {
  checkpointId: string;
  n: number;
  /** As `StateAt.seq`: give it as `after` to go on from here. */
  seq: number;
  /** The nodes whose writes these are (several for a step of parallel nodes; the node an edit was made as). */
  nodes: string[];
  /** The writes as the reducers applied them: `[key, "set", value]`, `[key, "append", items]`, `[key, "merge", patch]`; an edit that leaves a key out, `[key, "delete"]`. */
  writes: ChannelOp[];
}

/** Where a live read of a run's history starts and when it ends (see `RunHandle.events`). */
export interface FollowOptions {
  /** Only events after this store-wide sequence number. */
  after?: number;
  signal?: AbortSignal;
  until?: "settled" | "end";
}

export class RunHandle<S extends State = State> {
  /** `operator`: the actor and secret keys of the commands this handle sends (an engine's handles have the engine's). */
  constructor(
    private readonly store: Store,
    readonly id: string,
    private readonly diagnose?: Diagnosis,
    private readonly operator: Pick<OperatorOptions, "actor" | "secretKeys"> = {},
    /** The workflow the handle's state type is of (`Engine.run(id, workflow)`): a run of another is refused. */
    private readonly workflow?: string,
  ) {}

  async get(): Promise<RunRecord> {
    const run = await this.store.getRun(this.id);
    if (!run) throw new NotFoundError("run", this.id);
    if (this.workflow !== undefined && run.workflow !== this.workflow) {
      throw new ValidationError(`run ${this.id} is a run of workflow ${run.workflow}, not of ${this.workflow}: its state is not of that workflow's type`);
    }
    return run;
  }

  /**
   * Resolves when the run has ended, or (unless `until: "end"`) when it paused for an operator:
   * itself, or the child run it waits on (a sub-workflow whose node asked a person), whose id its
   * `waitingOn` gives. A run waiting for a timer, or for a child run still going, is in progress.
   * Past `timeoutMs` it throws a WaitTimeoutError (code TIMEOUT) holding the run as it then was;
   * an aborted `signal` throws the signal's reason.
   */
  wait(options: WaitOptions = {}): Promise<RunRecord> {
    return waitForRun(this.store, this.id, options, this.diagnose);
  }

  /**
   * The run, or the sub-workflow run it waits on, when it is paused on a failure an operator must
   * repair (retries exhausted, poison, a node killed, an at-most-once node's recovery interrupt),
   * with why; undefined when it is not (a pause for a person's answer is not a failure).
   */
  async pausedOnFailure(): Promise<{ run: RunRecord; why: string } | undefined> {
    return pausedOnFailure(this.store, await this.get());
  }

  /** The interrupts the run waits on people for: its own, and those of the sub-workflow runs it waits on. */
  pendingInterrupts(): Promise<InterruptRecord[]> {
    return pendingInterruptsOf(this.store, this.id);
  }

  /**
   * The run's checkpoints, oldest first (LangGraph's state history): what each step, edit or
   * fork recorded, without the state itself — `state(n)` reads that.
   */
  checkpoints(options: { limit?: number; afterN?: number } = {}): Promise<CheckpointSummary[]> {
    return this.store.listCheckpointSummaries(this.id, options);
  }

  /**
   * Ends the run as canceled (an operator command, recorded with the reason). The actor is
   * `operator:<actor>` when given, else the engine's (`EngineOptions.actor`).
   */
  cancel(reason: string, actor?: string): Promise<CommandOutcome> {
    return new Operator(this.store, { ...this.operator, ...(actor ? { actor: defaultActor(actor) } : {}) }).cancel(this.id, { reason });
  }

  /**
   * Sends the run a signal (`Operator.signal`): a node waiting for `name` goes on with `data`, or
   * the first to ask for it later takes it (`ctx.receive`).
   */
  signal(name: string, data?: unknown, options: { reason?: string; actor?: string } = {}): Promise<CommandOutcome<SignalResult>> {
    const { actor, ...rest } = options;
    return new Operator(this.store, { ...this.operator, ...(actor ? { actor: defaultActor(actor) } : {}) }).signal(this.id, name, data, rest);
  }

  /** The run's current state (or at a checkpoint number). */
  async state(checkpoint?: number): Promise<S> {
    const run = await this.get();
    if (checkpoint !== undefined && !(Number.isInteger(checkpoint) && checkpoint >= 0 && checkpoint <= run.headN)) {
      throw new NotFoundError("checkpoint", `${checkpoint} of run ${this.id} (its checkpoints are 0 to ${run.headN})`);
    }
    return (await readState(this.store, this.id, checkpoint ?? run.headN)) as S;
  }

  /**
   * The run's events, live: past ones first (after `after`), then new ones as they happen; the
   * iteration ends when the run ends or pauses for an operator, as `wait()` settles (`until:
   * "end"`: only when it ends; `signal` stops it sooner).
   */
  events(options: FollowOptions = {}): AsyncIterable<EventRecord> {
    return followRun(this.store, this.id, { ...options, until: options.until ?? "settled" });
  }

  /**
   * The run's state at each checkpoint it records (LangGraph's `streamMode: "values"`): its input
   * (checkpoint 0), then after each step and each operator's edit, live, with the nodes whose
   * writes it holds. Takes the options of `events()` and ends as it does.
   */
  async *values(options: FollowOptions = {}): AsyncGenerator<StateAt<S>> {
    if (this.workflow !== undefined) await this.get();
    for await (const at of this.checkpointsAsRecorded(options)) {
      yield { ...at, state: (await readState(this.store, this.id, at.n)) as S };
    }
  }

  /**
   * What each checkpoint changed (LangGraph's `streamMode: "updates"`), live: the writes of each
   * step and each operator's edit as the reducers applied them, with the nodes that made them.
   * Takes the options of `events()` and ends as it does.
   */
  async *updates(options: FollowOptions = {}): AsyncGenerator<UpdateAt> {
    for await (const at of this.checkpointsAsRecorded(options)) {
      if (at.n === 0) continue;
      const checkpoint = await this.store.getCheckpoint(at.checkpointId);
      if (!checkpoint) throw new NotFoundError("checkpoint", at.checkpointId);
      yield { ...at, writes: checkpoint.delta };
    }
  }

  /** Each checkpoint as its event announces it, live. */
  private async *checkpointsAsRecorded(options: FollowOptions): AsyncGenerator<Omit<StateAt, "state">> {
    for await (const event of this.events(options)) {
      const at =
        event.type === "step.completed"
          ? { id: event.payload.checkpointId, nodes: event.payload.nodes }
          : event.type === "state.edited"
            ? { id: event.payload.checkpointId, nodes: event.payload.asNode ? [event.payload.asNode] : [] }
            : event.type === "run.created"
              ? { id: `${this.id}:0`, nodes: [] }
              : undefined;
      const n = at && parseCheckpointId(at.id)?.n;
      if (at === undefined || n === undefined) continue;
      yield { checkpointId: at.id, n, seq: event.seq, nodes: at.nodes };
    }
  }
}

function isRegistry(value: unknown): value is ActionRegistry {
  return typeof value === "object" && value !== null && typeof (value as ActionRegistry).get === "function" && typeof (value as ActionRegistry).names === "function";
}

/** Creates an engine; see EngineOptions. */
export function createEngine(options: EngineOptions = {}): Engine {
  return new Engine(options);
}
