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
  /** The subscription's last failure, shown in the footer until it recovers. */
  error: string | undefined;
  onError: ((message: string | undefined) => void) | undefined;

  constructor(
    private readonly store: Store,
    private readonly options: { coalesceMs?: number; maxEvents?: number; retryMs?: number } = {},
  ) {}

  /** Starts following the store from now (or from `after`). */
  start(after?: number): void {
    this.loop ??= this.follow(after);
  }

  listen(listener: ChangeListener): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  async stop(): Promise<void> {
    this.abort.abort();
    clearTimeout(this.timer);
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
    this.error = message;
    this.onError?.(message);
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
