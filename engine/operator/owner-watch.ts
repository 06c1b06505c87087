import type { CommandRecord, RunRecord } from "../store/records.js";
import type { Store } from "../store/store.js";
import { pause } from "../sleep.js";

/** What a command waiting on the worker that owns its run is told (`OperatorOptions.onWaiting`). */
export interface OwnerWaiting {
  runId: string;
  owner: string;
  leaseUntil: number | null;
  commandId: string;
  /**
   * What the worker's lease shows of it: renewed since the command was sent (`alive`), not
   * renewed by when a live worker would have (`not-renewing`: gone or stalled, and the command
   * is applied here when its lease runs out), or not known yet.
   */
  worker: "alive" | "not-renewing" | "unknown";
  /** For a cancel held by a live worker: the nodes it is stopping (one that ignores its signal is abandoned after the worker's grace period). */
  stopping: string[];
}

/** How long a command waits for a run's owner before it is told. */
const WAITING_NOTICE_MS = 1_000;
const LOOK_EVERY_MS = 250;

/**
 * Tells a command's wait on the worker that owns its run: after a moment, then once more when its
 * lease shows more — the worker is alive and stopping nodes, or it did not renew its lease in time.
 * A live worker renews every third of its lease, so before half of what was left when the command
 * was sent has passed (a fifth more allows for timers running late).
 */
export async function watchOwner(store: Store, command: CommandRecord, sentTo: RunRecord, signal: AbortSignal, tell: (waiting: OwnerWaiting) => void): Promise<void> {
  const sentAt = Date.now();
  const leaseAtSend = sentTo.leaseUntil ?? sentAt;
  const renewalDue = sentAt + ((leaseAtSend - sentAt) / 2) * 1.2;
  let told: OwnerWaiting["worker"] | undefined;
  await pause(WAITING_NOTICE_MS, signal);
  while (!signal.aborted) {
    const run = await store.getRun(command.runId);
    if (signal.aborted || !run || run.status !== "running" || run.owner !== sentTo.owner) return;
    const worker = (run.leaseUntil ?? 0) > leaseAtSend ? "alive" : Date.now() > renewalDue ? "not-renewing" : "unknown";
    const stopping = worker === "alive" && command.type === "cancel" ? await runningNodes(store, run) : [];
    // Said again only when it adds something: a worker not renewing, or one alive and stopping nodes.
    if (told === undefined || (told === "unknown" && (worker === "not-renewing" || stopping.length > 0))) {
      if (signal.aborted) return;
      tell({ runId: run.id, owner: run.owner ?? "?", leaseUntil: run.leaseUntil, commandId: command.id, worker, stopping });
      told = worker;
    }
    if (worker !== "unknown") return;
    await pause(LOOK_EVERY_MS, signal);
  }
}

async function runningNodes(store: Store, run: RunRecord): Promise<string[]> {
  const tasks = await store.listTasks(run.id, { step: run.step + 1 });
  return [...new Set(tasks.filter((t) => t.parent === null && t.status === "running").map((t) => t.node))];
}
