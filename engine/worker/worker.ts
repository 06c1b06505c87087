import { hostname } from "node:os";
import { ConflictError, StoreError, errorMessage } from "../errors.js";
import type { CompiledWorkflow } from "../graph/model.js";
import { derivedId, newId } from "../ids.js";
import { EventFactory } from "../runtime/event-factory.js";
import type { EventType } from "../runtime/events.js";
import { RunExecutor, type ExecutionEnd, type ExecutorHost, type ExecutorOptions } from "../runtime/executor.js";
import { newRun } from "../runtime/new-run.js";
import { runTransition } from "../runtime/transitions.js";
import type { State } from "../state/ops.js";
import { snapshotPolicy, type SnapshotPolicy } from "../state/snapshot.js";
import type { RunRecord, TaskRecord } from "../store/records.js";
import type { Claim, Store } from "../store/store.js";
import { Operator } from "../operator/operator.js";
import { storeWorkflow } from "../operator/workflows.js";
import type { WorkflowRegistry } from "./registry.js";
import { FailureReport } from "./failure-report.js";
import { leftBehindKey, leftBehindText, runsLeftBehind, type LeftBehind } from "./left-behind.js";

export interface WorkerOptions extends Partial<Omit<ExecutorOptions, "workerId" | "snapshotPolicy">> {
  /**
   * When a checkpoint also stores a snapshot: every `every` checkpoints (default 64: reading any
   * state folds at most that many deltas) or once the deltas since the last one outgrow both the
   * state and `minBytes`.
   */
  snapshotPolicy?: Partial<SnapshotPolicy>;
  /** Shown as `worker:<id>` in events; default host-pid-random. */
  id?: string;
  /** How many runs this worker executes at once. */
  concurrency?: number;
  /** Without notifications, how often to look for due timers and expired leases. */
  pollMs?: number;
  /** Called when a run's execution ends in this worker (for logs). */
  onRunEnd?: (runId: string, end: ExecutionEnd | { error: string }) => void;
  /** Called when the worker itself hits a problem (the store unreachable...); it keeps trying. */
  onError?: (message: string) => void;
  /**
   * Called once when the worker stops itself because its store is gone or damaged (the SQLite
   * file deleted, replaced or corrupt under it: `StoreError.gone`, `damaged`). It claims nothing
   * more; the runs it held are left to their leases. Without it, `onError` hears of it.
   */
  onStoreGone?: (error: StoreError) => void;
  /**
   * Called once per workflow version (and per queued/orphaned) whose waiting runs this worker
   * cannot take, with why (an action no module exports, code changed since the run started):
   * looked for soon after `start()` and every 30 s. Without it, `onError` hears of it.
   */
  onLeftBehind?: (left: LeftBehind) => void;
}

/** When a running worker first looks for runs it cannot take, then how often. */
const LEFT_BEHIND_FIRST_MS = 2_000;
const LEFT_BEHIND_EVERY_MS = 30_000;

/** Events after which there may be a run to claim. */
const WORK_EVENTS = new Set<EventType>(["run.created", "run.resumed", "run.released", "run.succeeded", "run.failed", "run.canceled"]);
/** What the worker follows: new work, and commands for the runs it owns. */
const WATCHED: readonly EventType[] = [...WORK_EVENTS, "operator.requested"];

const DEFAULTS = {
  concurrency: 16,
  leaseMs: 15_000,
  killGraceMs: 5_000,
  pollMs: 1_000,
  progressIntervalMs: 250,
  holdBackoffMs: 5_000,
  maxRecoveries: 5,
};

/**
 * Claims runnable runs from the store (with a lease and a fencing token) and executes them.
 * Any number of workers, in any number of processes, may share one store.
 */
export class Worker implements ExecutorHost {
  readonly id: string;
  private readonly executors = new Map<string, RunExecutor>();
  /** Settles when an executor has ended and left `executors`. */
  private readonly finished = new Set<Promise<void>>();
  private readonly options: Required<Omit<WorkerOptions, "id" | "onRunEnd" | "onError" | "onStoreGone" | "onLeftBehind" | "snapshotPolicy">> &
    Pick<WorkerOptions, "onRunEnd" | "onError" | "onStoreGone" | "onLeftBehind"> & { snapshotPolicy: SnapshotPolicy };
  /** Versions (and statuses) whose left-behind runs were reported. */
  private readonly toldLeftBehind = new Set<string>();
  private abort = new AbortController();
  private kick: (() => void) | undefined;
  private kicked = false;
  private loop: Promise<void> | undefined;

  constructor(
    readonly store: Store,
    private readonly registry: WorkflowRegistry,
    options: WorkerOptions = {},
  ) {
    this.id = options.id ?? `${hostname()}-${process.pid}-${newId("w", 4).slice(2)}`;
    this.options = {
      ...DEFAULTS,
      secretKeys: [],
      ...Object.fromEntries(Object.entries(options).filter(([, v]) => v !== undefined)),
      snapshotPolicy: snapshotPolicy(options.snapshotPolicy),
    } as typeof this.options;
  }

  get running(): number {
    return this.executors.size;
  }

  /** Starts claiming in the background. */
  start(): void {
    if (this.loop) return;
    this.abort = new AbortController();
    void this.watch(this.abort.signal);
    this.loop = this.claimLoop(this.abort.signal);
    this.lookForLeftBehind(this.abort.signal);
  }

  private lookForLeftBehind(signal: AbortSignal): void {
    const report = this.options.onLeftBehind ?? (this.options.onError && ((left: LeftBehind) => this.options.onError!(leftBehindText(left))));
    if (!report) return;
    const look = async () => {
      try {
        for (const left of await runsLeftBehind(this.store, this.registry)) {
          const key = leftBehindKey(left);
          if (this.toldLeftBehind.has(key) || signal.aborted) continue;
          this.toldLeftBehind.add(key);
          report(left);
        }
      } catch {
        // The claim loop reports a failing store; this look is only a courtesy.
      }
    };
    const first = setTimeout(look, LEFT_BEHIND_FIRST_MS);
    const again = setInterval(look, LEFT_BEHIND_EVERY_MS);
    first.unref();
    again.unref();
    signal.addEventListener("abort", () => (clearTimeout(first), clearInterval(again)), { once: true });
  }

  /** Wakes the claim loop now (a run was just started or resumed in this process). */
  nudge(): void {
    this.kicked = true;
    const kick = this.kick;
    this.kick = undefined;
    kick?.();
  }

  /** Stops claiming; running runs are released for other workers after their tasks stop. */
  async stop(): Promise<void> {
    this.abort.abort();
    this.nudge();
    await this.loop;
    this.loop = undefined;
    await Promise.allSettled([...this.executors.values()].map((e) => e.stop()));
  }

  /**
   * Claims and executes runs until none is runnable and none is executing (`pitwall worker --once`).
   * Runs that are waiting for a timer or a child are left for later.
   */
  async drain(): Promise<void> {
    const signal = new AbortController();
    void this.watch(signal.signal);
    try {
      for (;;) {
        await this.claimAvailable();
        if (this.executors.size === 0) return;
        await Promise.race(this.finished);
      }
    } finally {
      signal.abort();
    }
  }

  private async claimLoop(signal: AbortSignal): Promise<void> {
    const report = new FailureReport("claiming", (message) => this.options.onError?.(message));
    while (!signal.aborted) {
      try {
        await this.claimAvailable();
        report.succeeded();
      } catch (error) {
        if (error instanceof StoreError && (error.gone || error.damaged)) return this.storeGone(error);
        report.failed(error);
      }
      if (signal.aborted) break;
      await this.sleep(this.options.pollMs);
    }
  }

  private storeGone(error: StoreError): void {
    this.abort.abort();
    for (const executor of this.executors.values()) void executor.stop();
    if (this.options.onStoreGone) this.options.onStoreGone(error);
    else this.options.onError?.(`stopped: ${error.message}`);
  }

  private sleep(ms: number): Promise<void> {
    if (this.kicked) {
      this.kicked = false;
      return Promise.resolve();
    }
    return new Promise((resolve) => {
      const timer = setTimeout(done, ms);
      function done() {
        clearTimeout(timer);
        resolve();
      }
      this.kick = () => {
        this.kicked = false;
        done();
      };
    });
  }

  private async claimAvailable(): Promise<void> {
    while (this.executors.size < this.options.concurrency && !this.abort.signal.aborted) {
      const versions = await this.registry.runnableVersions();
      if (versions.length === 0) {
        // Nothing to claim yet; still ask the store something each poll (as the console's health
        // check does), so that a store gone from under an idle worker is noticed.
        await this.store.lastEventSeq();
        return;
      }
      const claim = await this.store.claimRun({ owner: this.id, leaseMs: this.options.leaseMs, versions, exclude: [...this.executors.keys()] });
      if (!claim) return;
      await this.execute(claim);
    }
  }

  private async execute(claim: Claim): Promise<void> {
    const workflow = await this.registry.resolve(claim.run.version);
    if (!workflow) {
      await this.store.commit({
        id: newId("c", 12),
        runId: claim.run.id,
        fence: claim.fence,
        run: runTransition(claim.run, "queued"),
        events: [
          new EventFactory(claim.run.id, `worker:${this.id}`, this.options.secretKeys).run("run.released", {
            status: "queued",
            why: `this worker cannot run version ${claim.run.version}: ${this.registry.whyUnusable(claim.run.version) ?? "unknown version"}`,
          }),
        ],
      });
      return;
    }
    const executor = new RunExecutor(this, workflow, claim, { ...this.options, workerId: this.id });
    this.executors.set(claim.run.id, executor);
    const finished = executor.done
      .then(
        (end) => this.options.onRunEnd?.(claim.run.id, end),
        (error) => this.options.onRunEnd?.(claim.run.id, { error: errorMessage(error) }),
      )
      .finally(() => {
        this.executors.delete(claim.run.id);
        this.finished.delete(finished);
        this.nudge();
      });
    this.finished.add(finished);
  }

  /**
   * Follows the store's events: new work wakes the claim loop, commands reach their run's
   * executor. A broken subscription (a store restart) is resumed from the last event seen.
   */
  private async watch(signal: AbortSignal): Promise<void> {
    let after: number | undefined;
    while (!signal.aborted) {
      try {
        for await (const event of this.store.subscribe({ signal, types: WATCHED, ...(after !== undefined ? { after } : {}) })) {
          after = event.seq;
          if (event.type === "operator.requested") {
            const executor = this.executors.get(event.runId);
            const command = executor ? await this.store.getCommand((event.payload as { commandId: string }).commandId) : undefined;
            if (executor && command) executor.command(command);
          }
          // A run of a version this worker has not seen may be one it can run (a JSON workflow).
          if (event.type === "run.created" && !this.registry.knows((event.payload as { version: string }).version)) this.registry.invalidate();
          if (WORK_EVENTS.has(event.type)) this.nudge();
        }
        // A subscription ends by itself only when its store was closed under this worker: going
        // straight back to it would spin without ever yielding to timers.
        if (!signal.aborted) throw new Error("the store ended it (was the store closed?)");
      } catch (error) {
        if (signal.aborted) return;
        this.options.onError?.(`event subscription interrupted: ${errorMessage(error)}`);
        await new Promise((resolve) => setTimeout(resolve, 500));
      }
    }
  }

  // ExecutorHost

  async childRun(parent: RunRecord, task: TaskRecord, child: CompiledWorkflow, input: State, generation: number): Promise<RunRecord> {
    const id = derivedId("run", task.id, generation);
    const existing = await this.store.getRun(id);
    if (existing) return existing;
    await storeWorkflow(this.store, child);
    const init = newRun({
      id,
      workflow: child,
      state: child.initialState(input),
      actor: `worker:${this.id}`,
      parentRunId: parent.id,
      parentTaskId: task.id,
      secretKeys: this.options.secretKeys,
      next: [child.definition.start],
    });
    try {
      await this.store.createRun(init);
    } catch (error) {
      if (!(error instanceof ConflictError)) throw error;
    }
    this.nudge();
    return (await this.store.getRun(id))!;
  }

  /**
   * One line when the store stops taking commits, and one when it takes them again: not one per
   * run, which at a concurrency of 16 would be 32 lines for one outage.
   */
  commitWaiting(runId: string, error: string): void {
    if (this.waitingCommits.size === 0) this.options.onError?.(`commit failed: ${error}; trying again until the store answers (run ${runId}, and any other that commits meanwhile)`);
    this.waitingCommits.add(runId);
  }

  commitSettled(runId: string, through: boolean): void {
    if (!this.waitingCommits.delete(runId) || this.waitingCommits.size > 0 || !through) return;
    this.options.onError?.("the store answers again: the commits that waited went through");
  }

  private readonly waitingCommits = new Set<string>();

  async cancelChild(runId: string, actor: string, reason: string): Promise<void> {
    try {
      await new Operator(this.store, { actor, secretKeys: this.options.secretKeys }).cancel(runId, { reason });
    } catch {
      // A child that ended meanwhile needs nothing.
    }
  }
}
