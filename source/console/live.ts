import { StoreError, errorMessage, type EventRecord, type Store } from "../../engine/index.js";

/** What changed in the store during one coalescing window. */
export interface Change {
  /** Runs that had at least one event. */
  runs: ReadonlySet<string>;
  /** The window's events, oldest first (cut to the newest `maxEvents` when there were more). */
  events: readonly EventRecord[];
  /** Events were left out of `events`: readers that need them all must read the store again. */
  overflow: boolean;
  /** An interrupt was created or resolved, or a run paused or resumed. */
  interrupts: boolean;
  /** The store lost data the console had read (its event log went back): everything is read again. */
  reset?: true;
}

export type ChangeListener = (change: Change) => void;

const INTERRUPT_EVENTS = new Set(["interrupt.created", "interrupt.resolved", "run.paused", "run.resumed", "run.canceled"]);

/**
 * One live subscription to the store for the whole console. Events are gathered for
 * `coalesceMs` after the first one arrives and handed to listeners together; while they keep
 * coming, a window ends no sooner than `busyMs` after the one before. A worker writing hundreds of
 * events a second causes a few redraws a second (each redraw, not each event, is what the console
 * costs), an event after a quiet moment shows within `coalesceMs`, and an idle store costs nothing.
 */
export class LiveFeed {
  private readonly listeners = new Set<ChangeListener>();
  private readonly abort = new AbortController();
  private runs = new Set<string>();
  private events: EventRecord[] = [];
  private overflow = false;
  private interrupts = false;
  private timer: NodeJS.Timeout | undefined;
  private loop: Promise<void> | undefined;
  private lastSeq = 0;
  private followError: string | undefined;
  private healthError: string | undefined;
  private heartbeat: NodeJS.Timeout | undefined;
  private probe: Promise<void> | undefined;
  /** Why the last question to the store failed: said again while it stays silent, until it answers. */
  private probeFailure: string | undefined;
  /** The highest event number seen: a store whose log is behind it lost what the console read. */
  private seen = 0;
  /** Set when the store lost data, until its log is back where the console had seen it. */
  private lost: { message: string; upTo: number } | undefined;
  /** Ends the current subscription alone (to follow the store again from where its log now is). */
  private resubscribe = new AbortController();
  onError: ((message: string | undefined) => void) | undefined;

  constructor(
    private readonly store: Store,
    private readonly options: { coalesceMs?: number; busyMs?: number; maxEvents?: number; retryMs?: number; heartbeatMs?: number; answerMs?: number; label?: string } = {},
  ) {}

  /** What is wrong with the live updates (shown in the footer until it recovers), if anything. */
  get error(): string | undefined {
    return this.lost?.message ?? this.followError ?? this.healthError;
  }

  /**
   * Starts following the store from now (or from `after`). A subscription cannot tell a quiet
   * store from one it lost (Redis reconnects silently, and a frozen server holds its blocking read
   * open), so the store is also asked every 2 s whether it still answers: a store that does not
   * is said to within a few seconds (one cheap read each time).
   */
  start(after?: number): void {
    this.loop ??= this.follow(after);
    this.heartbeat ??= setInterval(() => void this.checkStore(), this.options.heartbeatMs ?? 2_000);
    this.heartbeat.unref?.();
  }

  /**
   * Asks the store for the number of its last event. No answer within `answerMs` says so (naming
   * the store); the question's own failure, when it comes, says why (a refused connection, a file
   * deleted) and stands until the store answers again. A log behind what was seen means the store
   * lost data (a Redis flushed, or restarted without its data or from an older snapshot).
   */
  private async checkStore(): Promise<void> {
    // One question at a time: while the store does not answer, asking again only queues more.
    // Events seen before it is asked were in the log when it answers (later ones may arrive first).
    const seenBefore = this.seen;
    this.probe ??= this.store.lastEventSeq().then(
      (seq) => {
        if (this.abort.signal.aborted) return;
        this.probeFailure = undefined;
        this.setHealth(undefined);
        this.checkSequence(seq, seenBefore);
      },
      (error: unknown) => {
        if (this.abort.signal.aborted) return;
        this.probeFailure = healthText(error);
        this.setHealth(this.probeFailure);
      },
    ).finally(() => (this.probe = undefined));
    const probe = this.probe;
    const answerMs = this.options.answerMs ?? 3_000;
    const silence = setTimeout(() => {
      if (this.probe !== probe || this.abort.signal.aborted) return;
      const store = this.options.label ?? "the store";
      this.setHealth(this.probeFailure ?? `store not answering: no answer from ${store} within ${answerMs / 1000} s (its server down or frozen, or the connection lost); what is shown may be out of date`);
    }, answerMs);
    try {
      await probe;
    } finally {
      clearTimeout(silence);
    }
  }

  /** The store's last event number against the highest seen before it was asked: behind it, the store lost data. */
  private checkSequence(seq: number, seenBefore: number): void {
    if (this.lost && seq >= this.lost.upTo) {
      this.lost = undefined;
      this.onError?.(this.error);
    }
    if (seq >= seenBefore) return;
    const store = this.options.label ?? "the store";
    const message =
      seq === 0
        ? `the pitwall store at ${store} is gone (its keys or file were deleted: the server restarted without its data, or was flushed): what the console showed of it is dropped; restore it, or start over on a new store (workers stop on it)`
        : `the store at ${store} lost data: its event log ends at #${seq}, the console had seen #${this.seen} (restarted from an older snapshot?): runs and interrupts were read again`;
    this.lost = { message, upTo: this.seen };
    this.seen = seq;
    this.lastSeq = seq;
    // The subscription waits for events after what it had seen: it follows the log from where it is now.
    this.resubscribe.abort();
    clearTimeout(this.timer);
    this.timer = undefined;
    this.runs = new Set();
    this.events = [];
    this.onError?.(this.error);
    for (const listener of this.listeners) listener({ runs: new Set(), events: [], overflow: false, interrupts: true, reset: true });
  }

  listen(listener: ChangeListener): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  async stop(): Promise<void> {
    this.abort.abort();
    clearTimeout(this.timer);
    clearInterval(this.heartbeat);
    await this.loop?.catch(() => undefined);
  }

  private async follow(after?: number): Promise<void> {
    const signal = this.abort.signal;
    let started = false;
    while (!signal.aborted) {
      try {
        if (!started) this.lastSeq = this.seen = after ?? (await this.store.lastEventSeq());
        started = true;
        this.resubscribe = new AbortController();
        const subscription = this.resubscribe.signal;
        for await (const event of this.store.subscribe({ after: this.lastSeq, signal: AbortSignal.any([signal, subscription]) })) {
          if (subscription.aborted) break;
          this.lastSeq = event.seq;
          this.seen = Math.max(this.seen, event.seq);
          this.take(event);
          if (this.followError) this.setError(undefined);
        }
        if (subscription.aborted && !signal.aborted) continue;
        return;
      } catch (error) {
        if (signal.aborted) return;
        if (this.resubscribe.signal.aborted) continue;
        this.setError(`live updates stopped: ${errorMessage(error)} (retrying)`);
        await new Promise((resolve) => setTimeout(resolve, this.options.retryMs ?? 1000).unref?.());
      }
    }
  }

  private setError(message: string | undefined): void {
    this.followError = message;
    this.onError?.(this.error);
  }

  private setHealth(message: string | undefined): void {
    if (message === this.healthError) return;
    this.healthError = message;
    this.onError?.(this.error);
  }

  private take(event: EventRecord): void {
    this.runs.add(event.runId);
    if (INTERRUPT_EVENTS.has(event.type)) this.interrupts = true;
    this.events.push(event);
    const max = this.options.maxEvents ?? 2000;
    if (this.events.length > max) {
      this.events = this.events.slice(-Math.floor(max / 2));
      this.overflow = true;
    }
    this.timer ??= setTimeout(() => this.flush(), this.window());
  }

  /** When the last window ended: a window that follows it closely waits out `busyMs` from it. */
  private lastFlush = 0;

  private window(): number {
    const coalesce = this.options.coalesceMs ?? 100;
    const busy = Math.max(coalesce, this.options.busyMs ?? 200);
    const since = Date.now() - this.lastFlush;
    return since < 2 * busy ? Math.max(coalesce, busy - since) : coalesce;
  }

  private flush(): void {
    this.timer = undefined;
    this.lastFlush = Date.now();
    const change: Change = { runs: this.runs, events: this.events, overflow: this.overflow, interrupts: this.interrupts };
    this.runs = new Set();
    this.events = [];
    this.overflow = false;
    this.interrupts = false;
    for (const listener of this.listeners) listener(change);
  }
}

/** A failed question to the store, for the footer: a store that is gone is not one that does not answer. */
function healthText(error: unknown): string {
  if (error instanceof StoreError && error.gone) return `store gone: ${errorMessage(error)}`;
  return `store not answering: ${errorMessage(error)}; what is shown may be out of date`;
}
