import type { Store } from "../store/store.js";
import { secondsPast } from "../seconds-past.js";
import { runTakenAway, whatBecameOf } from "./lease-loss.js";

/**
 * Keeps an executor's lease on its run: renewed every third of the lease, and told lost when
 * another worker holds the run, or it was deleted. A renewal that comes late says the event loop
 * was held.
 */
export class Lease {
  private timer: NodeJS.Timeout | undefined;
  /** When the lease timer last fired: a gap longer than the lease means the event loop was held. */
  private tick = 0;
  /** The longest such gap seen, in ms (a node computing without awaiting holds the whole worker). */
  private heldMs = 0;

  constructor(
    private readonly store: Store,
    private readonly runId: string,
    private readonly workerId: string,
    private readonly fence: number,
    private readonly leaseMs: number,
    /** Whether the execution has ended (nothing to renew then). */
    private readonly ended: () => boolean,
    private readonly lost: () => void,
  ) {}

  start(): void {
    this.tick = Date.now();
    this.timer = setInterval(() => void this.renew(), Math.max(50, this.leaseMs / 3));
  }

  stop(): void {
    clearInterval(this.timer);
  }

  async renew(): Promise<void> {
    this.noteHeldLoop();
    this.tick = Date.now();
    if (this.ended()) return;
    try {
      await this.store.renewLease(this.runId, this.workerId, this.fence, this.leaseMs);
    } catch (error) {
      if (runTakenAway(error, this.runId)) this.lost();
    }
  }

  /**
   * Why the lease was lost, as an execution's end says it: what became of the run, from the store
   * (`whatBecameOf`), and a held event loop as the cause when the lease timer fired that late.
   */
  async lostWhy(): Promise<string> {
    this.noteHeldLoop();
    const what = await whatBecameOf(this.store, this.runId, this.workerId, this.fence);
    const lost = what
      ? `lease lost: ${what}; this worker's attempt was discarded`
      : "lease lost: the run is no longer this worker's (taken over, canceled or deleted: the store did not answer when asked what became of it); this worker's attempt was discarded";
    if (this.heldMs === 0) return lost;
    return `${lost}. This process's event loop was held for ${secondsPast(this.heldMs)} s (by a node computing without awaiting, or the process was stopped or suspended), past the ${this.leaseMs / 1000} s lease, so it could not renew it; a node that computes that long without awaiting holds its whole worker: await in the work, move it to a worker thread, or give workers a longer lease (pitwall worker --lease, WorkerOptions.leaseMs)`;
  }

  /** The lease timer fires every third of the lease unless the event loop is held: a longer gap says it was. */
  private noteHeldLoop(): void {
    const gap = Date.now() - this.tick;
    if (gap > this.leaseMs) this.heldMs = Math.max(this.heldMs, gap);
  }
}
