import { isDeepStrictEqual } from "node:util";
import {
  RUN_STATUSES,
  errorMessage,
  leaseRanOut,
  nextRetry,
  runsAtOnceOf,
  type EventRecord,
  type InterruptRecord,
  type RetryWait,
  type RunRecord,
  type RunStatus,
  type RunsAtOnce,
  type Store,
  type StoreRoom,
  type TaskRecord,
  type WorkerRecord,
  type WorkflowDefinition,
} from "../../engine/index.js";
import { signalWaits, type SignalWait } from "../text/signal-text.js";
import { doneInStep } from "./current-nodes.js";
import type { Change, LiveFeed } from "./live.js";

export interface ConsoleSnapshot {
  /** Every loaded run by id. */
  runs: ReadonlyMap<string, RunRecord>;
  /** When each run last changed while the console watched (for the flash). */
  changedAt: ReadonlyMap<string, number>;
  counts: Record<RunStatus, number>;
  /** Pending interrupts, oldest first. */
  interrupts: readonly InterruptRecord[];
  /** The first page of runs has been read. */
  ready: boolean;
  /** The counts and the pending interrupts have been read (after the first page of runs). */
  queueRead: boolean;
  /** More runs exist than the console keeps in memory. */
  capped: boolean;
  /**
   * Running runs whose lease had run out when they were last read from the store: their worker
   * is gone or stalled, and nobody has taken them over yet.
   */
  orphans: ReadonlySet<string>;
  /**
   * When each paused run without a pause time of its own (`RunRecord.pausedAt`, which runs paused
   * by an earlier release lack) paused, from its latest run.paused event: what it ran is counted to
   * then. Not `updatedAt`, which an operator's edit or breakpoint on the paused run moves.
   */
  pausedAt: ReadonlyMap<string, number>;
  /** For running runs with parallel nodes: those of the step in progress that already succeeded (not "now"). */
  doneInStep: ReadonlyMap<string, ReadonlySet<string>>;
  /** For runs paused with nothing but signals to wait for (reason `signal`): what their nodes wait for. */
  signalWaits: ReadonlyMap<string, readonly SignalWait[]>;
  /** For queued runs parked until a time: the retry they wait out, when it is a retry's backoff (not a timer). */
  retries: ReadonlyMap<string, RetryWait>;
  /** Room left for the store to grow, read with the counts (undefined where the store cannot tell). */
  room?: StoreRoom | undefined;
  /** For the workflows of the queued runs that have a `limits.runsAtOnce`: it, and their running runs (why such a run is not claimed). */
  runsAtOnce?: ReadonlyMap<string, RunsAtOnce> | undefined;
  /** The workers' heartbeats, read with the counts: why a queued run is not claimed (undefined: not known). */
  workers?: WorkerRecord[] | undefined;
  error?: string | undefined;
}

const PAGE = 500;
/** Above this many changed runs in one window, one listing is cheaper than that many reads. */
const RELIST_ABOVE = 200;

const emptyCounts = (): Record<RunStatus, number> => Object.fromEntries(RUN_STATUSES.map((s) => [s, 0])) as Record<RunStatus, number>;

/**
 * Runs deleted by another process (`pitwall prune`) leave no event behind: this often the counts
 * are read again even when nothing happened, and fewer runs than shown means a new listing.
 */
const RECOUNT_MS = 5_000;
const NOTHING: Change = { runs: new Set(), events: [], overflow: false, interrupts: false };

/**
 * The console's shared picture of the store: runs, counts by status and the interrupt queue,
 * read once and then kept current from the live feed (changed runs are re-read one by one).
 * Reads never block the screen: it draws whatever the last completed read gave.
 */
export class ConsoleData {
  private snap: ConsoleSnapshot = { runs: new Map(), changedAt: new Map(), counts: emptyCounts(), interrupts: [], ready: false, queueRead: false, capped: false, orphans: new Set(), pausedAt: new Map(), doneInStep: new Map(), signalWaits: new Map(), retries: new Map() };
  private readonly listeners = new Set<() => void>();
  private readonly workflows = new Map<string, Promise<WorkflowDefinition | undefined>>();
  private pending: Change[] = [];
  private busy = false;
  private stopListening: (() => void) | undefined;
  private recount: NodeJS.Timeout | undefined;

  constructor(
    readonly store: Store,
    private readonly feed: LiveFeed,
    private readonly maxRuns = 20_000,
    private readonly recountMs = RECOUNT_MS,
  ) {}

  async start(): Promise<void> {
    this.stopListening = this.feed.listen((change) => this.enqueue(change));
    const runs = await this.relist(true);
    this.set({ ...runs, ...(await this.readSide(true)), queueRead: true, orphans: this.orphans(runs.runs!, undefined),
      pausedAt: await this.pausedTimes(runs.runs!, []),
      doneInStep: await this.stepsDone(runs.runs!, undefined),
      signalWaits: await this.signalsAwaited(runs.runs!, undefined),
      retries: await this.retryWaits(runs.runs!),
      runsAtOnce: await this.limitsHolding(runs.runs!),
    });
    this.recount = setInterval(() => this.enqueue(NOTHING), this.recountMs);
    this.recount.unref?.();
  }

  stop(): void {
    this.stopListening?.();
    clearInterval(this.recount);
  }

  snapshot = (): ConsoleSnapshot => this.snap;

  subscribe = (listener: () => void): (() => void) => {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  };

  /** Reads these runs again soon: this console changed them in a way no event tells (deleted them). */
  refresh(runIds: readonly string[]): void {
    this.enqueue({ ...NOTHING, runs: new Set(runIds), interrupts: true });
  }

  /** A workflow version's canonical definition (read once, then cached: versions never change). */
  workflow(version: string): Promise<WorkflowDefinition | undefined> {
    let found = this.workflows.get(version);
    if (!found) {
      found = this.store.getWorkflow(version).then((r) => r?.definition);
      found.catch(() => this.workflows.delete(version));
      this.workflows.set(version, found);
    }
    return found;
  }

  private set(patch: Partial<ConsoleSnapshot>): void {
    this.snap = { ...this.snap, ...patch };
    for (const listener of this.listeners) listener();
  }

  private enqueue(change: Change): void {
    this.pending.push(change);
    if (!this.busy) void this.drain();
  }

  /** One read at a time; changes that arrive meanwhile are merged into the next read. */
  private async drain(): Promise<void> {
    this.busy = true;
    try {
      while (this.pending.length > 0) {
        const batch = this.pending;
        this.pending = [];
        const ids = new Set<string>();
        let interrupts = false;
        // The store lost what was read from it: nothing known before is kept.
        let reset = false;
        const events: EventRecord[] = [];
        const cut = new Set<string>();
        for (const change of batch) {
          for (const id of change.runs) ids.add(id);
          interrupts ||= change.interrupts;
          reset ||= change.reset === true;
          events.push(...change.events);
          if (change.overflow) for (const id of change.runs) cut.add(id);
        }
        // Renewing a lease writes no event: a run whose lease seems to have run out is read again,
        // to tell a renewed lease from a worker that is gone.
        const now = Date.now();
        for (const run of this.snap.runs.values()) if (leaseRanOut(run, now)) ids.add(run.id);
        try {
          if (reset) {
            this.retriesRead.clear();
            this.snap = { ...this.snap, pausedAt: new Map(), doneInStep: new Map(), signalWaits: new Map(), orphans: new Set() };
          }
          // One new snapshot per window, so that one burst of events is one redraw.
          let relisted = reset || ids.size > RELIST_ABOVE;
          let runs = relisted ? await this.relist(false) : await this.reread([...ids]);
          const side = await this.readSide(interrupts);
          const total = Object.values(side.counts).reduce((a, b) => a + b, 0);
          if (!this.snap.capped && total < (runs.runs ?? this.snap.runs).size) {
            runs = await this.relist(false);
            relisted = true;
          }
          const orphans = this.orphans(runs.runs ?? this.snap.runs, relisted ? undefined : ids);
          const pausedAt = runs.runs ? await this.pausedTimes(runs.runs, events, cut) : this.snap.pausedAt;
          const doneInStep = runs.runs ? await this.stepsDone(runs.runs, relisted ? undefined : ids) : this.snap.doneInStep;
          const signalWaits = runs.runs ? await this.signalsAwaited(runs.runs, relisted ? undefined : ids) : this.snap.signalWaits;
          const retries = runs.runs ? await this.retryWaits(runs.runs) : this.snap.retries;
          // Runs changing are what moves a workflow's running count: read again only then.
          const runsAtOnce = runs.runs ? await this.limitsHolding(runs.runs) : this.snap.runsAtOnce;
          // A quiet recount changes nothing: no new snapshot, no redraw.
          const same =
            !runs.runs &&
            !interrupts &&
            !this.snap.error &&
            isDeepStrictEqual(orphans, this.snap.orphans) &&
            sameRoom(side.room, this.snap.room) &&
            sameWorkers(side.workers, this.snap.workers) &&
            RUN_STATUSES.every((status) => side.counts[status] === this.snap.counts[status]);
          if (!same) this.set({ ...runs, ...side, orphans, pausedAt, doneInStep, signalWaits, retries, runsAtOnce, error: undefined });
          // Heartbeats alone (the same workers, seen again) redraw nothing, but are what the next draw reads.
          else this.snap = { ...this.snap, workers: side.workers };
        } catch (error) {
          this.set({ error: errorMessage(error) });
        }
      }
    } finally {
      this.busy = false;
    }
  }

  private async relist(first: boolean): Promise<Partial<ConsoleSnapshot>> {
    const runs = new Map<string, RunRecord>();
    const changedAt = new Map(this.snap.changedAt);
    const now = Date.now();
    let cursor: string | undefined;
    let capped = false;
    for (;;) {
      const page = await this.store.listRuns({ limit: PAGE, ...(cursor ? { cursor } : {}) });
      for (const run of page.runs) {
        const before = this.snap.runs.get(run.id);
        if (!first && before?.updatedAt !== run.updatedAt) changedAt.set(run.id, now);
        runs.set(run.id, run);
      }
      cursor = page.nextCursor;
      // The first page is drawn at once (a large store lists for a while), its orphans marked with it.
      if (first && runs.size <= PAGE) this.set({ runs: new Map(runs), ready: true, orphans: this.orphans(runs, undefined) });
      if (!cursor) break;
      if (runs.size >= this.maxRuns) {
        capped = true;
        break;
      }
    }
    return { runs, changedAt, ready: true, capped };
  }

  /** Reads these runs again; nothing when none of them changed (no new snapshot, no redraw). */
  private async reread(ids: string[]): Promise<Partial<ConsoleSnapshot>> {
    if (ids.length === 0) return {};
    const found = await Promise.all(ids.map((id) => this.store.getRun(id)));
    if (found.every((run, i) => isDeepStrictEqual(run, this.snap.runs.get(ids[i]!)))) return {};
    const runs = new Map(this.snap.runs);
    const changedAt = new Map(this.snap.changedAt);
    const now = Date.now();
    found.forEach((run, i) => {
      if (!run) {
        runs.delete(ids[i]!);
        return;
      }
      if (runs.get(run.id)?.updatedAt !== run.updatedAt) changedAt.set(run.id, now);
      runs.set(run.id, run);
    });
    for (const [id, at] of changedAt) if (now - at > 5_000) changedAt.delete(id);
    return { runs, changedAt };
  }

  /**
   * The orphans among `runs`: those just read (`read`; all of them after a listing) whose lease
   * had run out, and those known before that were not read again and still seem so.
   */
  private orphans(runs: ReadonlyMap<string, RunRecord>, read: ReadonlySet<string> | undefined): Set<string> {
    const now = Date.now();
    const orphans = new Set<string>();
    const ranOut = (id: string) => {
      const run = runs.get(id);
      return run !== undefined && leaseRanOut(run, now);
    };
    for (const id of read ?? runs.keys()) if (ranOut(id)) orphans.add(id);
    if (read) for (const id of this.snap.orphans) if (!read.has(id) && ranOut(id)) orphans.add(id);
    return orphans;
  }

  /**
   * When each paused run of `runs` that does not keep its own pause time (`pausedAt`, which a run
   * paused by an earlier release lacks, and which the durations read first) paused: from the
   * window's run.paused events (the newest kept, so the latest), else as known from before while
   * it stayed paused (unless events of it were `cut`: it may have paused again), else read (its
   * latest run.paused event).
   */
  private async pausedTimes(runs: ReadonlyMap<string, RunRecord>, events: readonly EventRecord[], cut: ReadonlySet<string> = new Set()): Promise<Map<string, number>> {
    const seen = new Map<string, number>();
    for (const event of events) if (event.type === "run.paused") seen.set(event.runId, event.time);
    const pausedAt = new Map<string, number>();
    const unknown: string[] = [];
    for (const run of runs.values()) {
      if (run.status !== "paused" || typeof run.pausedAt === "number") continue;
      const wasPaused = this.snap.runs.get(run.id)?.status === "paused" && !cut.has(run.id);
      const at = seen.get(run.id) ?? (wasPaused ? this.snap.pausedAt.get(run.id) : undefined);
      if (at === undefined) unknown.push(run.id);
      else pausedAt.set(run.id, at);
    }
    const read = await Promise.all(unknown.map((runId) => this.store.readEvents({ runId, types: ["run.paused"], last: 1 })));
    // A run whose run.paused event is gone (trimmed, or never written by an older release) counts
    // to its last update, and is not read again at every refresh while it stays paused.
    read.forEach(([event], i) => pausedAt.set(unknown[i]!, event?.time ?? runs.get(unknown[i]!)!.updatedAt));
    return pausedAt;
  }

  /** `doneInStep` for the running runs of `runs` with parallel nodes: those just `read` (all after a listing) read again. */
  private stepsDone(runs: ReadonlyMap<string, RunRecord>, read: ReadonlySet<string> | undefined): Promise<Map<string, ReadonlySet<string>>> {
    return this.fromStepTasks(runs, read, (run) => run.status === "running" && run.current.length >= 2, this.snap.doneInStep, doneInStep);
  }

  /** `signalWaits` for the runs of `runs` paused for signals: those just `read` (all after a listing) read again. */
  private signalsAwaited(runs: ReadonlyMap<string, RunRecord>, read: ReadonlySet<string> | undefined): Promise<Map<string, readonly SignalWait[]>> {
    return this.fromStepTasks(runs, read, (run) => run.status === "paused" && run.reason === "signal", this.snap.signalWaits, signalWaits);
  }

  /**
   * What `derive` tells from the tasks of the step in progress, for each run of `runs` that `wants`
   * it: read for those just `read` (all after a listing) and those not `known`, kept for the others.
   */
  private async fromStepTasks<T>(
    runs: ReadonlyMap<string, RunRecord>,
    read: ReadonlySet<string> | undefined,
    wants: (run: RunRecord) => boolean,
    known: ReadonlyMap<string, T>,
    derive: (run: RunRecord, tasks: TaskRecord[]) => T,
  ): Promise<Map<string, T>> {
    const found = new Map<string, T>();
    const toRead: RunRecord[] = [];
    for (const run of runs.values()) {
      if (!wants(run)) continue;
      const before = known.get(run.id);
      if (read && !read.has(run.id) && before !== undefined) found.set(run.id, before);
      else toRead.push(run);
    }
    const tasks = await Promise.all(toRead.map((run) => this.store.listTasks(run.id, { step: run.step + 1 })));
    toRead.forEach((run, i) => found.set(run.id, derive(run, tasks[i]!)));
    return found;
  }

  /** What `retryWaits` found per queued run, for the time it is parked until (read again when that moves). */
  private readonly retriesRead = new Map<string, { wakeAt: number; retry: RetryWait | undefined }>();

  /** `retries` for the queued runs of `runs` parked until a time, their tasks read once per such time. */
  private async retryWaits(runs: ReadonlyMap<string, RunRecord>): Promise<Map<string, RetryWait>> {
    const retries = new Map<string, RetryWait>();
    const toRead: RunRecord[] = [];
    const now = Date.now();
    const parked = new Set<string>();
    for (const run of runs.values()) {
      if (run.status !== "queued" || run.waitingOn !== null || run.wakeAt === null || run.wakeAt <= now) continue;
      parked.add(run.id);
      const known = this.retriesRead.get(run.id);
      if (known?.wakeAt !== run.wakeAt) toRead.push(run);
      else if (known.retry) retries.set(run.id, known.retry);
    }
    for (const id of this.retriesRead.keys()) if (!parked.has(id)) this.retriesRead.delete(id);
    const tasks = await Promise.all(toRead.map((run) => this.store.listTasks(run.id, { step: run.step + 1 })));
    toRead.forEach((run, i) => {
      const found = nextRetry(tasks[i]!, undefined, now);
      // A wait node's timer beside a retry that comes sooner: the run wakes for the retry.
      const retry = found && found.at <= run.wakeAt! ? found : undefined;
      this.retriesRead.set(run.id, { wakeAt: run.wakeAt!, retry });
      if (retry) retries.set(run.id, retry);
    });
    return retries;
  }

  /** The `limits.runsAtOnce` of the queued runs' workflows, with their running runs; undefined if the store does not answer. */
  private async limitsHolding(runs: ReadonlyMap<string, RunRecord>): Promise<ReadonlyMap<string, RunsAtOnce> | undefined> {
    const queued = [...runs.values()].filter((r) => r.status === "queued").map((r) => r.workflow);
    // Not knowing them is no reason to show nothing else.
    return runsAtOnceOf(this.store, queued, (version) => this.workflow(version)).catch(() => undefined);
  }

  private async readSide(interrupts: boolean): Promise<Pick<ConsoleSnapshot, "counts" | "interrupts" | "room" | "workers">> {
    const [counts, pending, room, workers] = await Promise.all([
      this.store.countRuns(),
      interrupts ? this.store.listInterrupts({ status: "pending" }) : Promise.resolve(this.snap.interrupts),
      // Not knowing the room, or the workers, is no reason to show nothing else.
      this.store.room().catch(() => undefined),
      this.store.listWorkers().catch(() => undefined),
    ]);
    return { counts: { ...emptyCounts(), ...counts }, interrupts: pending, room, workers };
  }
}

/** Whether the header would say the same of the room: its state, whether it evicts, and while short of room, the MiB left. */
function sameRoom(a: StoreRoom | undefined, b: StoreRoom | undefined): boolean {
  if (a?.state !== b?.state || a?.evicting !== b?.evicting) return false;
  return a === undefined || a.state === "ok" || Math.floor(a.freeBytes / 2 ** 20) === Math.floor(b!.freeBytes / 2 ** 20);
}

/** The same workers, as busy, with the same versions, whenever each was last seen (a heartbeat alone changes nothing shown now). */
function sameWorkers(a: readonly WorkerRecord[] | undefined, b: readonly WorkerRecord[] | undefined): boolean {
  const shape = (workers: readonly WorkerRecord[] | undefined) => workers?.map((w) => ({ ...w, lastSeen: 0 }));
  return isDeepStrictEqual(shape(a), shape(b));
}
