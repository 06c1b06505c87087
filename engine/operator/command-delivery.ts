import { isDeepStrictEqual } from "node:util";
import { ConflictError, PitwallError, StaleFenceError } from "../errors.js";
import type { EventType } from "../runtime/events.js";
import type { CommandRecord, CommandType, RunRecord } from "../store/records.js";
import type { Store } from "../store/store.js";
import { checkArgs, newCommand, outcomeOf, recordCommand, type CommandOutcome, type CommandWriter } from "./command-records.js";
import { mustGetRun } from "./must-get.js";
import { watchOwner, type OwnerWaiting } from "./owner-watch.js";
import { UnheldRuns, isHeld, type Applied } from "./unheld-runs.js";
import type { WorkflowVersions } from "./workflow-versions.js";

export interface DeliveryOptions {
  actor: string;
  secretKeys: readonly string[];
  answerTimeoutMs: number;
  totalTimeoutMs: number;
  onWaiting: ((waiting: OwnerWaiting) => void) | undefined;
}

/**
 * How an operator's command reaches its run: queued for the worker that owns the run, whose
 * answer is awaited, or, when nobody owns it, applied by this process itself — with the same code
 * as a worker's, under the same fencing rules.
 */
export class CommandDelivery implements CommandWriter {
  readonly actor: string;
  readonly secretKeys: readonly string[];
  private readonly unheld: UnheldRuns;

  constructor(
    readonly store: Store,
    versions: WorkflowVersions,
    private readonly options: DeliveryOptions,
  ) {
    this.actor = options.actor;
    this.secretKeys = options.secretKeys;
    this.unheld = new UnheldRuns(this, versions);
  }

  /**
   * Records a command and sees it applied. When nobody owns the run, this process applies it in
   * the same write that records it; otherwise it is queued for the owner, whose answer is awaited.
   * `commandId`, given, makes the command one that only one of several senders records: the
   * others get a ConflictError (`command … already exists`).
   */
  async submit(runId: string, type: CommandType, args: Record<string, unknown>, reason?: string, commandId?: string, exclusive = false): Promise<CommandOutcome> {
    checkArgs(args);
    const command = { ...newCommand(this, runId, type, args, reason), ...(commandId !== undefined ? { id: commandId } : {}) };
    for (let attempt = 0; ; attempt++) {
      const run = await mustGetRun(this.store, runId);
      if (isHeld(run)) {
        let seq: number;
        try {
          seq = await recordCommand(this, command);
        } catch (error) {
          const earlier = await this.earlier(command, error, exclusive);
          if (!earlier) throw error;
          return earlier.status === "pending" ? this.settle(earlier, run, 0) : outcomeOf(earlier);
        }
        return this.settle(command, run, seq);
      }
      let applied: Applied;
      try {
        applied = await this.unheld.apply(command, run, true);
      } catch (error) {
        const earlier = await this.earlier(command, error, exclusive);
        if (earlier) return earlier.status === "pending" ? this.settle(earlier, run, 0) : outcomeOf(earlier);
        // The run moved on, or a worker claimed it meanwhile: look again.
        if (!(error instanceof StaleFenceError || error instanceof ConflictError) || attempt >= 8) throw error;
        continue;
      }
      return appliedOutcome(applied);
    }
  }

  /**
   * The command already stored under this one's id, when writing it conflicted: an earlier try of
   * it (its reply lost), or — unless `exclusive` — the same request sent again by the same actor
   * (a webhook delivered twice): its answer stands. Another sender's, of that id, is theirs: this
   * one conflicts with it (as it does with every other sender's when `exclusive`, so that of
   * several processes sending one command only the one that recorded it reports it).
   */
  private async earlier(command: CommandRecord, error: unknown, exclusive: boolean): Promise<CommandRecord | undefined> {
    const stored = error instanceof ConflictError ? await this.store.getCommand(command.id) : undefined;
    if (stored && !sameCommand(stored, command) && (exclusive || !sameRequest(stored, command))) throw new ConflictError(`command ${command.id} already exists (sent by ${stored.actor})`);
    return stored;
  }

  /**
   * Waits for the owner's answer, or applies the command here when nobody owns the run.
   * `run` was read just before the command was stored.
   */
  private async settle(command: CommandRecord, submittedTo: RunRecord, seq: number): Promise<CommandOutcome> {
    const watching = new AbortController();
    const onWaiting = this.options.onWaiting;
    // Telling is a courtesy: a store error here is the command's own to report.
    if (onWaiting) void watchOwner(this.store, command, submittedTo, watching.signal, onWaiting).catch(() => undefined);
    try {
      return await this.settleOwned(command, submittedTo, seq);
    } finally {
      watching.abort();
    }
  }

  private async settleOwned(command: CommandRecord, submittedTo: RunRecord, seq: number): Promise<CommandOutcome> {
    const deadline = Date.now() + this.options.totalTimeoutMs;
    let conflicts = 0;
    let known: RunRecord | undefined = submittedTo;
    for (;;) {
      if (!known) {
        const current = await this.store.getCommand(command.id);
        if (current && current.status !== "pending") return outcomeOf(current);
      }
      const run: RunRecord = known ?? (await mustGetRun(this.store, command.runId));
      known = undefined;
      if (!isHeld(run)) {
        let applied: Applied;
        try {
          applied = await this.unheld.apply(command, run, false);
        } catch (error) {
          // Answered by another process (a worker that let go of the run), or the run moved on: look again.
          if ((error instanceof StaleFenceError || error instanceof ConflictError) && conflicts++ < 8) continue;
          throw error;
        }
        return appliedOutcome(applied);
      }
      if (Date.now() > deadline) {
        throw new PitwallError("RUN", `command ${command.id} is queued but the worker owning run ${run.id} has not answered yet`);
      }
      await this.waitForAnswer(command, seq, Math.min(this.options.answerTimeoutMs, Math.max(0, deadline - Date.now())));
    }
  }

  /** Until the command is answered, or the run is released (then this process may apply it). */
  private async waitForAnswer(command: CommandRecord, after: number, timeoutMs: number): Promise<void> {
    const signal = AbortSignal.timeout(timeoutMs);
    try {
      for await (const event of this.store.subscribe({ runId: command.runId, after, signal, types: ANSWER_EVENTS })) {
        const answered = (event.payload as { commandId?: string }).commandId;
        if (answered === undefined || answered === command.id) return;
      }
    } catch (error) {
      if (!signal.aborted) throw error;
    }
  }
}

/** What a command applied here did; a refusal is raised as its typed error. */
function appliedOutcome(applied: Applied): CommandOutcome {
  if (applied.refused) throw applied.refused;
  return outcomeOf(applied.command);
}

/** Events after which a waiting operator looks again: an answer, or the run no longer owned. */
const ANSWER_EVENTS: EventType[] = ["operator.accepted", "operator.refused", "run.released", "run.paused"];

/** Whether `stored` is the command this sender made (an earlier try of it), not another's of the same id. */
function sameCommand(stored: CommandRecord, mine: CommandRecord): boolean {
  return stored.createdAt === mine.createdAt && stored.recorder?.host === mine.recorder?.host && stored.recorder?.pid === mine.recorder?.pid && stored.actor === mine.actor;
}

/** Whether `stored` asks what `mine` asks, by the same actor: the same request, sent again. */
function sameRequest(stored: CommandRecord, mine: CommandRecord): boolean {
  return stored.actor === mine.actor && stored.runId === mine.runId && stored.type === mine.type && isDeepStrictEqual(stored.args, mine.args);
}
