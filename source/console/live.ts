import { errorMessage, type EventRecord, type Store } from "../../engine/index.js";

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
}

export type ChangeListener = (change: Change) => void;

const INTERRUPT_EVENTS = new Set(["interrupt.created", "interrupt.resolved", "run.paused", "run.resumed", "run.canceled"]);

/**
 * One live subscription to the store for the whole console. Events are gathered for
 * `coalesceMs` after the first one arrives and handed to listeners together, so a worker
 * writing hundreds of events a second causes a handful of renders, and an idle store none.
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
  private probe: Promise<unknown> | undefined;
  onError: ((message: string | undefined) => void) | undefined;

  constructor(
    private readonly store: Store,
    private readonly options: { coalesceMs?: number; maxEvents?: number; retryMs?: number; heartbeatMs?: number; answerMs?: number } = {},
  ) {}

  /** What is wrong with the live updates (shown in the footer until it recovers), if anything. */
  get error(): string | undefined {
    return this.followError ?? this.healthError;
  }

  /**
   * Starts following the store from now (or from `after`). A subscription cannot tell a quiet
   * store from one it lost (Redis reconnects silently), so the store is also asked every few
   * seconds whether it still answers.
   */
  start(after?: number): void {
    this.loop ??= this.follow(after);
    this.heartbeat ??= setInterval(() => void this.checkStore(), this.options.heartbeatMs ?? 5_000);
    this.heartbeat.unref?.();
  }

  private async checkStore(): Promise<void> {
    // One question at a time: while the store does not answer, asking again only queues more.
    this.probe ??= this.store.lastEventSeq().finally(() => (this.probe = undefined));
    const answerMs = this.options.answerMs ?? 3_000;
    let timer: NodeJS.Timeout | undefined;
    const silence = new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new Error(`no answer within ${answerMs / 1000} s`)), answerMs)));
    try {
      await Promise.race([this.probe, silence]);
      this.setHealth(undefined);
    } catch (error) {
      if (!this.abort.signal.aborted) this.setHealth(`store not answering: ${errorMessage(error)}; what is shown may be out of date`);
    } finally {
      clearTimeout(timer);
    }
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
        if (!started) this.lastSeq = after ?? (await this.store.lastEventSeq());
        started = true;
        for await (const event of this.store.subscribe({ after: this.lastSeq, signal })) {
          this.lastSeq = event.seq;
          this.take(event);
          if (this.error) this.setError(undefined);
        }
        return;
      } catch (error) {
        if (signal.aborted) return;
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
    this.timer ??= setTimeout(() => this.flush(), this.options.coalesceMs ?? 100);
  }

  private flush(): void {
    this.timer = undefined;
    const change: Change = { runs: this.runs, events: this.events, overflow: this.overflow, interrupts: this.interrupts };
    this.runs = new Set();
    this.events = [];
    this.overflow = false;
    this.interrupts = false;
    for (const listener of this.listeners) listener(change);
  }
}
