import { errorMessage } from "../errors.js";
import type { EventType } from "../runtime/events.js";
import type { CommandRecord, EventRecord } from "../store/records.js";
import type { Store } from "../store/store.js";
import type { WorkerNotice } from "./notices.js";
import type { WorkflowRegistry } from "./registry.js";

/** Events after which there may be a run to claim. */
const WORK_EVENTS = new Set<EventType>(["run.created", "run.resumed", "run.released", "run.succeeded", "run.failed", "run.canceled"]);
/** Events that set or settle the deadline of an interrupt or a run (deadline-watch.ts). */
const DEADLINE_EVENTS = new Set<EventType>(["interrupt.created", "interrupt.resolved", "run.created", "run.succeeded", "run.failed", "run.canceled"]);
/** What the worker follows: new work, commands for the runs it owns, deadlines. */
const WATCHED: readonly EventType[] = [...new Set([...WORK_EVENTS, ...DEADLINE_EVENTS, "operator.requested" as const])];

/**
 * Commands kept for runs with no executor here, for the executor a claim is about to make (a
 * fleet's commands for other workers' runs pass through too: the oldest are let go).
 */
const KEPT = 1024;

export interface WatchOwner {
  readonly store: Store;
  readonly registry: WorkflowRegistry;
  /** Whether this worker executes the run now. */
  executes(runId: string): boolean;
  /** Hands a command to the executor of its run here, if it still has one. */
  deliver(runId: string, command: CommandRecord): void;
  /** Wakes the claim loop. */
  nudge(): void;
  /** A deadline was set or no longer applies (deadline-watch.ts). */
  deadlineEvent(event: EventRecord): void;
  notify(notice: WorkerNotice): void;
}

/**
 * Follows the store's events for a worker: new work wakes its claim loop, commands reach the
 * executor of their run. A broken subscription (a store restart) is resumed from the last event
 * seen, so that a watch, once it follows (`following`), misses no command recorded since.
 */
export class EventWatch {
  private followers = 0;
  /** Command ids that came for runs this worker did not execute, by run, the latest last. */
  private readonly kept = new Map<string, string[]>();

  constructor(private readonly owner: WatchOwner) {}

  /**
   * Whether a watch follows the store now: every command recorded from now on reaches this worker,
   * the executor of its run, or (for a run claimed meanwhile) `arrivedFor`.
   */
  get following(): boolean {
    return this.followers > 0;
  }

  /**
   * The ids of the commands that came for `runId` while no executor of it was here; forgotten
   * once asked. Asked in the same turn as the run's executor is made, no command falls between.
   */
  arrivedFor(runId: string): string[] {
    const ids = this.kept.get(runId) ?? [];
    this.kept.delete(runId);
    return ids;
  }

  async follow(signal: AbortSignal): Promise<void> {
    let after: number | undefined;
    let counted = false;
    try {
      while (!signal.aborted) {
        try {
          // From a number known before any claim that counts on it, not "from now" when the
          // subscription gets round to it: then a resumed subscription leaves no gap either.
          after ??= await this.owner.store.lastEventSeq();
          if (!counted) this.followers++;
          counted = true;
          for await (const event of this.owner.store.subscribe({ signal, types: WATCHED, after })) {
            after = event.seq;
            if (event.type === "operator.requested") await this.route(event.runId, (event.payload as { commandId: string }).commandId);
            // A run of a version this worker has not seen may be one it can run (a JSON workflow).
            if (event.type === "run.created" && !this.owner.registry.knows((event.payload as { version: string }).version)) this.owner.registry.invalidate();
            if (WORK_EVENTS.has(event.type)) this.owner.nudge();
            if (DEADLINE_EVENTS.has(event.type)) this.owner.deadlineEvent(event);
          }
          // A subscription ends by itself only when its store was closed under this worker: going
          // straight back to it would spin without ever yielding to timers.
          if (!signal.aborted) throw new Error("the store ended it (was the store closed?)");
        } catch (error) {
          if (signal.aborted) return;
          this.owner.notify({ level: "warn", kind: "store-failing", message: `event subscription interrupted: ${errorMessage(error)}` });
          await new Promise((resolve) => setTimeout(resolve, 500));
        }
      }
    } finally {
      if (counted) this.followers--;
    }
  }

  private async route(runId: string, commandId: string): Promise<void> {
    if (this.owner.executes(runId)) {
      const command = await this.owner.store.getCommand(commandId);
      if (command) this.owner.deliver(runId, command);
      return;
    }
    // Perhaps for a run this worker has just claimed and has no executor for yet.
    const ids = this.kept.get(runId) ?? [];
    this.kept.delete(runId);
    this.kept.set(runId, [...ids, commandId]);
    if (this.kept.size > KEPT) this.kept.delete(this.kept.keys().next().value!);
  }
}
