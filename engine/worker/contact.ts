import { StoreError } from "../errors.js";
import type { Store } from "../store/store.js";

/**
 * When this worker last heard from its store, through any call (a claim, a commit, a lease
 * renewal, an idle poll), and what follows from a silence longer than a lease.
 *
 * A worker cut off from its store for longer than a lease finds, when it answers again, the
 * leases of runs it does not hold run out. Their workers were most likely cut off too (one Redis
 * restarted, one network partition), not dead: taking their runs over would run again the nodes
 * they finished meanwhile. So for one lease period after such a silence the worker takes over no
 * run (it claims queued runs only), which gives their owners, who renew at once when they hear
 * from the store again (`onRegained`), the time to renew. A worker that is really gone does not,
 * and its runs are taken over a lease later than they would have been. This needs nothing of the
 * store, so it holds on every store.
 */
export class StoreContact {
  private last: number | undefined;
  private regainedAt: number | undefined;
  /** Calls that failed because the store did not answer. */
  failures = 0;

  /** A silence longer than this is an outage: the lease, or two polls of an idle worker when longer. */
  private readonly silentMs: number;

  constructor(
    private readonly leaseMs: number,
    pollMs: number,
    private readonly onRegained: (silentMs: number) => void,
  ) {
    this.silentMs = Math.max(leaseMs, 2 * pollMs);
  }

  /** When the store last answered (epoch ms), if it has. */
  get lastAnswer(): number | undefined {
    return this.last;
  }

  answered(now = Date.now()): void {
    const silent = this.last === undefined ? 0 : now - this.last;
    this.last = Math.max(this.last ?? 0, now);
    if (silent > this.silentMs) {
      this.regainedAt = now;
      this.onRegained(silent);
    }
  }

  failed(): void {
    this.failures++;
  }

  /**
   * Whether a claim may take over runs whose lease ran out: not while the store has been silent
   * for longer than a lease (this process may just have been resumed), nor within a lease of
   * regaining it.
   */
  takeOversAllowed(now = Date.now()): boolean {
    if (this.last !== undefined && now - this.last > this.silentMs) return false;
    return this.regainedAt === undefined || now - this.regainedAt >= this.leaseMs;
  }
}

/**
 * `store` with every call noted in `contact`: an answer (even a refusal: the store answered) or
 * a failure to answer (a StoreError). Subscriptions are not calls and pass through as they are.
 */
export function watchedStore(store: Store, contact: StoreContact): Store {
  const answered = <T>(answer: T) => {
    contact.answered();
    return answer;
  };
  const failed = (error: unknown) => {
    if (error instanceof StoreError) contact.failed();
    else contact.answered();
    throw error;
  };
  // One wrapper per method, made on first use: the worker calls these on every step.
  const wrapped = new Map<PropertyKey, unknown>();
  return new Proxy(store, {
    get(target, key, receiver) {
      const known = wrapped.get(key);
      if (known) return known;
      const value = Reflect.get(target, key, receiver) as unknown;
      if (typeof value !== "function" || key === "subscribe" || key === "close") return value;
      const method = (...args: unknown[]) => {
        const result = (value as (...a: unknown[]) => unknown).apply(target, args);
        return result instanceof Promise ? result.then(answered, failed) : result;
      };
      wrapped.set(key, method);
      return method;
    },
  });
}
