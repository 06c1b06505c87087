import { hostname } from "node:os";
import { StoreError, errorMessage } from "../errors.js";
import type { CompiledWorkflow } from "../graph/model.js";
import { newId } from "../ids.js";
import { EventFactory } from "../runtime/event-factory.js";
import { RunExecutor, type ExecutorHost } from "../runtime/executor.js";
import { runTransition } from "../runtime/transitions.js";
import type { State } from "../state/ops.js";
import { snapshotPolicy, type SnapshotPolicy } from "../state/snapshot.js";
import { RUN_STATUSES, type CommandRecord, type RunRecord, type RunStatus, type TaskRecord } from "../store/records.js";
import type { Claim, ClaimOptions, Store } from "../store/store.js";
import { Operator } from "../operator/operator.js";
import { UnheldRuns } from "../operator/unheld-runs.js";
import { WorkflowVersions } from "../operator/workflow-versions.js";
import type { WorkflowRegistry } from "./registry.js";
import type { AbortCause } from "../runtime/signals.js";
import type { TakenOver } from "../runtime/recovery.js";
import { StoreContact, watchedStore } from "./contact.js";
import { FailureReport } from "./failure-report.js";
import { Heartbeat } from "./heartbeat.js";
import { leftBehindText, watchLeftBehind } from "./left-behind.js";
import { abandoned, takeoversHeld, tookOver, type WorkerNotice } from "./notices.js";
import { drainExecutors } from "./drain.js";
import { WORKER_DEFAULTS, type StopOptions, type WorkerOptions, type WorkerStats } from "./options.js";
import { startRetention } from "./retention.js";
import { sweepUnansweredCommands } from "./command-sweep.js";
import { startChildRun } from "./child-runs.js";
import { DeadlineWatch } from "./deadline-watch.js";
import { ScheduleWatch } from "./schedule-watch.js";
import { EventWatch } from "./event-watch.js";
import { sayUnknownWorkflows } from "./workflow-names.js";

export type { StopOptions, WorkerOptions, WorkerStats } from "./options.js";

/**
 * Claims runnable runs from the store (with a lease and a fencing token) and executes them.
 * Any number of workers, in any number of processes, may share one store.
 */
export class Worker implements ExecutorHost {
  readonly id: string;
  private readonly executors = new Map<string, RunExecutor>();
  /** Settles when an executor has ended and left `executors`. */
  private readonly finished = new Set<Promise<void>>();
  private readonly options: Required<Omit<WorkerOptions, "id" | "onRunEnd" | "onError" | "onNotice" | "onStoreGone" | "onLeftBehind" | "snapshotPolicy" | "workflows" | "retainMs">> &
    Pick<WorkerOptions, "onRunEnd" | "onError" | "onNotice" | "onStoreGone" | "onLeftBehind" | "workflows" | "retainMs"> & { snapshotPolicy: SnapshotPolicy };
  readonly store: Store;
  private readonly contact: StoreContact;
  private readonly heartbeat: Heartbeat;
  private readonly events: EventWatch;
  /** Where the commands its executors had not applied when they let go of their runs are answered. */
  private readonly unheld: UnheldRuns;
  /** Answers the interrupts nobody answered by their deadline, and cancels the runs past theirs. */
  private readonly deadlines: DeadlineWatch;
  /** Starts the runs of the schedules whose times come. */
  private readonly schedules: ScheduleWatch;
  private readonly counts = { claimed: 0, takenOver: 0, errors: 0, ended: Object.fromEntries(RUN_STATUSES.map((s) => [s, 0])) as Record<RunStatus, number> };
  private stopping = false;
  private abort = new AbortController();
  private kick: (() => void) | undefined;
  private kicked = false;
  private loop: Promise<void> | undefined;

  constructor(
    store: Store,
    private readonly registry: WorkflowRegistry,
    options: WorkerOptions = {},
  ) {
    this.id = options.id ?? `${hostname()}-${process.pid}-${newId("w", 4).slice(2)}`;
    this.options = {
      ...WORKER_DEFAULTS,
      secretKeys: [],
      ...Object.fromEntries(Object.entries(options).filter(([, v]) => v !== undefined)),
      snapshotPolicy: snapshotPolicy(options.snapshotPolicy),
    } as typeof this.options;
    this.contact = new StoreContact(this.options.leaseMs, this.options.pollMs, (silentMs) => this.regained(silentMs));
    this.store = watchedStore(store, this.contact);
    this.unheld = new UnheldRuns({ store: this.store, actor: `worker:${this.id}`, secretKeys: this.options.secretKeys }, new WorkflowVersions(this.store));
    this.deadlines = new DeadlineWatch(
      this.store,
      this.options.secretKeys,
      (notice) => this.notify(notice),
      (run) => run.status === "running" && run.owner === this.id && !this.executors.has(run.id),
    );
    this.schedules = new ScheduleWatch(this.store, `worker:${this.id}`, (notice) => {
      this.notify(notice);
      if (notice.runId) this.nudge();
    });
    this.events = new EventWatch({
      store: this.store,
      registry,
      executes: (runId) => this.executors.has(runId),
      deliver: (runId, command) => this.executors.get(runId)?.command(command),
      nudge: () => this.nudge(),
      deadlineEvent: (event) => this.deadlines.seen(event),
      notify: (notice) => this.notify(notice),
    });
    this.heartbeat = new Heartbeat(
      this.store,
      {
        id: this.id,
        startedAt: Date.now(),
        leaseMs: this.options.leaseMs,
        concurrency: this.options.concurrency,
        only: this.options.workflows ? [...this.options.workflows] : null,
        actions: registry.actionNames(),
      },
      async () => ({ running: this.executors.size, workflows: this.registry.named(await this.claimableVersions()) }),
      (notice) => this.notify(notice),
    );
  }

  get running(): number {
    return this.executors.size;
  }

  /** What the worker has done since it started, and what it does now. */
  stats(): WorkerStats {
    return {
      ...this.counts,
      ended: { ...this.counts.ended },
      running: this.executors.size,
      nodesRunning: this.runningNodes().length,
      storeFailures: this.contact.failures,
      lastStoreAnswer: this.contact.lastAnswer,
      stopping: this.stopping,
    };
  }

  /** The nodes running now, with their runs. */
  runningNodes(): { runId: string; node: string }[] {
    return [...this.executors.values()].flatMap((e) => e.runningNodes().map((node) => ({ runId: e.runId, node })));
  }

  /**
   * Refuses (ConflictError) when a live worker of another process has this worker's id, as its
   * heartbeat in the store says (`pitwall worker` asks before it starts). A worker started anyway
   * says so (`duplicate-id`) at its first heartbeat.
   */
  checkIdFree(): Promise<void> {
    return this.heartbeat.checkIdFree();
  }

  /** Starts claiming in the background, and writing the worker's heartbeat to the store. */
  start(): void {
    if (this.loop) return;
    this.abort = new AbortController();
    this.stopping = false;
    void this.events.follow(this.abort.signal);
    void this.checkWorkflowNames();
    this.loop = this.claimLoop(this.abort.signal);
    this.lookForLeftBehind(this.abort.signal);
    // Beats on through a drain, until the worker has stopped.
    this.beating = new AbortController();
    this.heartbeat.start(this.beating.signal);
    sweepUnansweredCommands(this.store, `worker:${this.id}`, this.options.secretKeys, this.abort.signal, (notice) => this.notify(notice));
    this.deadlines.start(this.abort.signal);
    this.schedules.start(this.abort.signal);
    if (this.options.retainMs !== undefined) startRetention(this.store, this.options.retainMs, this.abort.signal, (notice) => this.notify(notice));
  }

  /**
   * Says something to whoever listens: `onNotice`, else `onError`; with neither, what someone
   * should look at (a warning or an error) goes to stderr, as Temporal's and DBOS's workers log
   * by default: a service that passed no listener is not left deaf to a store that fails.
   */
  private notify(notice: WorkerNotice): void {
    if (this.options.onNotice) this.options.onNotice(notice);
    else if (this.options.onError) this.options.onError(notice.message);
    else if (notice.level !== "info") console.warn(`pitwall worker ${this.id}: ${notice.message}`);
  }

  /**
   * The store answers again after a silence longer than a lease: this worker's runs are renewed
   * at once (their leases ran out meanwhile, and other workers regaining the store hold off their
   * take-overs for a lease, `StoreContact`), and it takes over none itself for a lease.
   */
  private regained(silentMs: number): void {
    for (const executor of this.executors.values()) executor.renewNow();
    this.notify(takeoversHeld(silentMs, this.options.leaseMs, this.executors.size));
  }

  /** The versions this worker claims: what it can run, narrowed to `workflows` when given. */
  private async claimableVersions(): Promise<string[]> {
    const versions = await this.registry.runnableVersions();
    if (!this.options.workflows) return versions;
    const allowed = new Set(this.registry.versionsOf(this.options.workflows));
    return versions.filter((v) => allowed.has(v));
  }

  private namesChecked: Promise<void> | undefined;

  /** Says, once, which of the workflows it is limited to are unknown. */
  private checkWorkflowNames(): Promise<void> {
    return (this.namesChecked ??= sayUnknownWorkflows(this.store, this.registry, this.options.workflows, (notice) => this.notify(notice)));
  }

  private lookForLeftBehind(signal: AbortSignal): void {
    const onLeftBehind = this.options.onLeftBehind;
    watchLeftBehind(this.store, this.registry, signal, onLeftBehind ?? ((left) => this.notify({ level: "warn", kind: "left-behind", message: leftBehindText(left) })));
  }

  /** Wakes the claim loop now (a run was just started or resumed in this process). */
  nudge(): void {
    this.kicked = true;
    const kick = this.kick;
    this.kick = undefined;
    kick?.();
  }

  /**
   * Stops claiming; running runs are released for other workers after their tasks stop. With
   * `drainMs`, the nodes running now first get that long to finish (their results committed),
   * and only those still running then are aborted.
   */
  async stop(options: StopOptions = {}): Promise<void> {
    this.stopping = true;
    this.abort.abort();
    this.nudge();
    await this.loop;
    this.loop = undefined;
    if ((options.drainMs ?? 0) > 0) await drainExecutors([...this.executors.values()], options.drainMs!, this.options.killGraceMs, (notice) => this.notify(notice));
    await Promise.allSettled([...this.executors.values()].map((e) => e.stop()));
    if (this.beating) {
      this.beating.abort();
      this.beating = undefined;
      await this.heartbeat.stopped();
    }
  }

  private beating: AbortController | undefined;

  /**
   * Claims and executes runs until none is runnable and none is executing (`pitwall worker --once`),
   * acting on the deadlines that passed on the way (interrupts answered, runs canceled) and firing
   * the schedules that are due. Runs that are waiting for a timer, a child or a person are left for later.
   */
  async drain(): Promise<void> {
    const signal = new AbortController();
    void this.events.follow(signal.signal);
    // Deadlines that pass while the drain runs are acted on then, not once it is idle.
    this.deadlines.start(signal.signal);
    this.schedules.start(signal.signal);
    await this.checkWorkflowNames();
    try {
      for (;;) {
        const acted = this.deadlines.acted + this.schedules.fired;
        await this.claimAvailable();
        if (this.executors.size > 0) await Promise.race(this.finished);
        // Idle: done, unless a deadline was acted on or a schedule fired meanwhile (a run answered, canceled or started may be claimable now).
        else if ((await Promise.all([this.deadlines.reload(), this.schedules.reload()]), this.deadlines.acted + this.schedules.fired === acted)) return;
      }
    } finally {
      signal.abort();
    }
  }

  private async claimLoop(signal: AbortSignal): Promise<void> {
    const report = new FailureReport("claiming", (message, failing) => this.notify({ level: failing ? "warn" : "info", kind: failing ? "store-failing" : "store-recovered", message }));
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
    this.stopping = true;
    this.abort.abort();
    for (const executor of this.executors.values()) void executor.stop();
    if (this.options.onStoreGone) this.options.onStoreGone(error);
    else this.notify({ level: "error", kind: "store-gone", message: `stopped: ${error.message}` });
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
    let wave = 1;
    while (this.executors.size < this.options.concurrency && !this.abort.signal.aborted) {
      const versions = await this.claimableVersions();
      if (versions.length === 0) {
        // Nothing to claim yet; still ask the store something each poll (as the console's health
        // check does), so that a store gone from under an idle worker is noticed.
        await this.store.lastEventSeq();
        return;
      }
      // Whether every command recorded from here on reaches this worker (its executor counts on it).
      const followed = this.events.following;
      const runsAtOnce = await this.registry.runsAtOnce(versions);
      const options: ClaimOptions = {
        owner: this.id,
        leaseMs: this.options.leaseMs,
        versions,
        ...(Object.keys(runsAtOnce).length > 0 ? { runsAtOnce } : {}),
        exclude: [...this.executors.keys()],
        ...(this.contact.takeOversAllowed() ? {} : { takeOver: false }),
      };
      // A wave's claims are made at once, so that they share the store's group transaction with
      // the steps of the runs in flight; each run claimed is executed whatever befell the others
      // (one left unexecuted would wait for its lease to run out), then the first failure is thrown.
      const size = Math.min(wave, this.options.concurrency - this.executors.size);
      const outcomes = await Promise.allSettled(Array.from({ length: size }, () => this.store.claimRun(options)));
      const failures = outcomes.flatMap((o) => (o.status === "rejected" ? [o.reason as unknown] : []));
      let claimed = 0;
      for (const outcome of outcomes) {
        if (outcome.status !== "fulfilled" || !outcome.value) continue;
        claimed++;
        this.deadlines.clockFrom(outcome.value);
        this.counted(outcome.value);
        try {
          await this.execute(outcome.value, followed);
        } catch (error) {
          failures.push(error);
        }
      }
      if (failures.length > 0) throw failures[0];
      if (claimed < size) return;
      wave *= 2;
    }
  }

  private counted(claim: Claim): void {
    this.counts.claimed++;
    if (claim.recovered) this.counts.takenOver++;
  }

  private async execute(claim: Claim, followed: boolean): Promise<void> {
    // A run past its deadline starts nothing more: it is let go, and canceled — by the cancel a
    // deadline watch sent while this worker held it, if one did, answered here as it lets go.
    if (this.deadlines.overdue(claim)) {
      await this.release(claim, "its deadline has passed: it is canceled");
      await this.answerLeft(claim.run.id, await this.store.listCommands({ runId: claim.run.id, status: "pending" }));
      await this.deadlines.cancelOverdue(claim.run.id);
      return;
    }
    const workflow = await this.registry.resolve(claim.run.version);
    if (!workflow) {
      if (claim.recovered) this.notify(tookOver(claim.run.id, claim.takenFrom));
      await this.release(claim, `this worker cannot run version ${claim.run.version}: ${this.registry.whyUnusable(claim.run.version) ?? "unknown version"}`);
      return;
    }
    // In one turn with the executor's making: a command that comes later reaches the executor.
    const arrived = followed ? this.events.arrivedFor(claim.run.id) : undefined;
    const executor = new RunExecutor(this, workflow, claim, { ...this.options, workerId: this.id }, arrived);
    this.executors.set(claim.run.id, executor);
    const finished = executor.done
      .then(
        (end) => {
          this.counts.ended[end.status]++;
          this.options.onRunEnd?.(claim.run.id, end);
        },
        (error) => {
          this.counts.errors++;
          if (this.options.onRunEnd) this.options.onRunEnd(claim.run.id, { error: errorMessage(error) });
          else this.notify({ level: "error", kind: "run-error", runId: claim.run.id, message: `run ${claim.run.id} stopped executing here: ${errorMessage(error)}` });
        },
      )
      .finally(() => {
        this.executors.delete(claim.run.id);
        this.finished.delete(finished);
        this.nudge();
      });
    this.finished.add(finished);
  }

  /** Hands a claimed run back, queued, without executing it. */
  private async release(claim: Claim, why: string): Promise<void> {
    await this.store.commit({
      id: newId("c", 12),
      runId: claim.run.id,
      fence: claim.fence,
      run: runTransition(claim.run, "queued"),
      events: [new EventFactory(claim.run.id, `worker:${this.id}`, this.options.secretKeys).run("run.released", { status: "queued", why })],
    });
  }

  // ExecutorHost

  async childRun(parent: RunRecord, task: TaskRecord, child: CompiledWorkflow, input: State, generation: number): Promise<RunRecord> {
    const run = await startChildRun(this.store, { parent, task, child, input, generation }, `worker:${this.id}`, this.options.secretKeys);
    this.nudge();
    return run;
  }

  /**
   * One line when the store stops taking commits, and one when it takes them again: not one per
   * run, which at a concurrency of 16 would be 32 lines for one outage.
   */
  commitWaiting(runId: string, error: string): void {
    if (this.waitingCommits.size === 0) {
      this.notify({ level: "warn", kind: "store-failing", runId, message: `commit failed: ${error}; trying again until the store answers (run ${runId}, and any other that commits meanwhile)` });
    }
    this.waitingCommits.add(runId);
  }

  commitSettled(runId: string, through: boolean): void {
    if (!this.waitingCommits.delete(runId) || this.waitingCommits.size > 0 || !through) return;
    this.notify({ level: "info", kind: "store-recovered", message: "the store answers again: the commits that waited went through" });
  }

  nodeAbandoned(runId: string, task: TaskRecord, cause: AbortCause): void {
    this.notify(abandoned(runId, task, cause, this.options.killGraceMs));
  }

  tookOver(runId: string, from: string | undefined, taken: TakenOver | undefined): void {
    this.notify(tookOver(runId, from, taken));
  }

  private readonly waitingCommits = new Set<string>();

  async answerLeft(runId: string, commands: readonly CommandRecord[]): Promise<void> {
    for (const command of commands) {
      try {
        await this.unheld.answer(command);
      } catch (error) {
        this.notify({
          level: "warn",
          kind: "command-answered",
          runId,
          message: `${command.type} ${command.id} of run ${runId} (by ${command.actor}) came as this worker let go of the run, and answering it failed: ${errorMessage(error)}; it is answered within a minute by a worker's look for commands left unanswered`,
        });
      }
    }
  }

  async cancelChild(runId: string, actor: string, reason: string): Promise<void> {
    try {
      await new Operator(this.store, { actor, secretKeys: this.options.secretKeys }).cancel(runId, { reason });
    } catch {
      // A child that ended meanwhile needs nothing.
    }
  }
}
