import { ConflictError } from "../errors.js";
import type { WorkerRecord } from "../store/records.js";
import { workerLive } from "../store/rules.js";
import type { Store } from "../store/store.js";
import { ofThisHost, pidGone, thisProcess } from "../local-process.js";
import type { WorkerNotice } from "./notices.js";

/** How long a stopping worker waits for its last heartbeat to be written. */
const STOPPED_WAIT_MS = 1_000;

/** How often a duplicate id is said again while it goes on. */
const DUPLICATE_REPEAT_MS = 60_000;

/** What a heartbeat says that changes while the worker runs. */
export interface HeartbeatState {
  running: number;
  workflows: { name: string; version: string }[];
}

/** What a heartbeat says that does not change. */
export type WorkerIdentity = Omit<WorkerRecord, "lastSeen" | "stoppedAt" | "heartbeatMs" | "running" | "workflows" | "host" | "pid" | "instance">;

/**
 * A worker's record in the store (`Store.putWorker`), written every `intervalMs` while it runs and
 * once more, marked stopped, when it stops: what `pitwall workers` lists and what tells why a
 * queued run waits. Each write hands back the record it replaced, so a record another process
 * wrote with this worker's id since the last beat is seen: two live workers with one id.
 */
export class Heartbeat {
  readonly instance = `${process.pid}-${Math.random().toString(36).slice(2, 10)}`;
  readonly intervalMs: number;
  private lastBeat = 0;
  private toldDuplicateAt = 0;

  constructor(
    private readonly store: Store,
    private readonly identity: WorkerIdentity,
    private readonly state: () => Promise<HeartbeatState>,
    private readonly notify: (notice: WorkerNotice) => void,
  ) {
    this.intervalMs = Math.min(5_000, Math.max(50, Math.round(identity.leaseMs / 3)));
  }

  /**
   * Refuses (ConflictError) when a live worker of another process has this id: two workers with
   * one id would renew each other's leases and their events could not be told apart. A record of
   * an earlier process of this id on this host (the same process id, or one no longer running) is
   * not one.
   */
  async checkIdFree(): Promise<void> {
    const other = (await this.store.listWorkers()).find((w) => w.id === this.identity.id && w.instance !== this.instance);
    if (other && workerLive(other, Date.now()) && !earlierHere(other)) throw new ConflictError(duplicateText(this.identity.id, other));
  }

  /** Beats until the signal aborts. */
  start(signal: AbortSignal): void {
    void this.beat();
    const timer = setInterval(() => void this.beat(), this.intervalMs);
    timer.unref();
    signal.addEventListener("abort", () => clearInterval(timer), { once: true });
  }

  /** The last beat: stopped, running nothing. Waits a second at most: a stopping worker does not wait on a store that does not answer. */
  async stopped(): Promise<void> {
    let timer: NodeJS.Timeout | undefined;
    const beat = (async () => this.store.putWorker(this.record(Date.now(), { running: 0, workflows: (await this.state()).workflows })))().catch(() => {
      // A store that does not answer at the end: the record goes stale on its own.
    });
    await Promise.race([beat, new Promise((resolve) => (timer = setTimeout(resolve, STOPPED_WAIT_MS)))]);
    clearTimeout(timer);
  }

  private async beat(): Promise<void> {
    try {
      const sent = Date.now();
      const replaced = await this.store.putWorker(this.record(null, await this.state()));
      // Written by another process since this one's last beat, and that process is alive.
      if (replaced && replaced.instance !== this.instance && replaced.lastSeen >= this.lastBeat && !earlierHere(replaced) && workerLive(replaced, Date.now())) {
        if (Date.now() - this.toldDuplicateAt >= DUPLICATE_REPEAT_MS) {
          this.toldDuplicateAt = Date.now();
          this.notify({ level: "error", kind: "duplicate-id", message: duplicateText(this.identity.id, replaced) });
        }
      }
      this.lastBeat = sent;
    } catch {
      // The claim loop says when the store fails; a heartbeat is only a courtesy to operators.
    }
  }

  private record(stoppedAt: number | null, state: HeartbeatState): WorkerRecord {
    return {
      ...this.identity,
      instance: this.instance,
      ...thisProcess(),
      lastSeen: Date.now(),
      stoppedAt,
      heartbeatMs: this.intervalMs,
      ...state,
    };
  }
}

/** An earlier process of this host: this process's own id (a container restarted), or one that is no longer running. */
function earlierHere(record: Pick<WorkerRecord, "host" | "pid">): boolean {
  return ofThisHost(record) && (record.pid === process.pid || pidGone(record.pid));
}

function duplicateText(id: string, other: WorkerRecord): string {
  const seen = Math.max(0, Math.round((Date.now() - other.lastSeen) / 1000));
  return `worker id ${id} is in use by a live worker on host ${other.host} (pid ${other.pid}, started ${new Date(other.startedAt).toISOString()}, last seen ${seen} s ago): two workers with one id would renew each other's leases; give this one another --id, or stop that one`;
}
