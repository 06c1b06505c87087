import { ConflictError, NotFoundError, PitwallError, StaleFenceError } from "../errors.js";
import { Batch } from "../runtime/batch.js";
import type { EventType } from "../runtime/events.js";
import { readState } from "../state/read.js";
import type { CommandRecord, CommandType, RunRecord } from "../store/records.js";
import type { Store } from "../store/store.js";
import { acceptance, prepareCommand, refusal } from "../worker/commands.js";
import type { RunView } from "../worker/command-view.js";
import { checkArgs, newCommand, outcomeOf, recordCommand, requested, type CommandOutcome, type CommandWriter } from "./command-records.js";
import { mustGetRun } from "./must-get.js";
import { watchOwner, type OwnerWaiting } from "./owner-watch.js";
import { reducerOf, type WorkflowVersions } from "./workflow-versions.js";

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

  constructor(
    readonly store: Store,
    private readonly versions: WorkflowVersions,
    private readonly options: DeliveryOptions,
  ) {
    this.actor = options.actor;
    this.secretKeys = options.secretKeys;
  }

  /**
   * Records a command and sees it applied. When nobody owns the run, this process applies it in
   * the same write that records it; otherwise it is queued for the owner, whose answer is awaited.
   */
  async submit(runId: string, type: CommandType, args: Record<string, unknown>, reason?: string): Promise<CommandOutcome> {
    checkArgs(args);
    const command = newCommand(this, runId, type, args, reason);
    for (let attempt = 0; ; attempt++) {
      const run = await mustGetRun(this.store, runId);
      if (isOwned(run)) return this.settle(command, run, await recordCommand(this, command));
      try {
        return await this.applyHere(command, run, true);
      } catch (error) {
        if (error instanceof Refused) throw error.reason;
        // An earlier try was written after all (its reply lost): its answer stands.
        const stored = error instanceof ConflictError ? await this.store.getCommand(command.id) : undefined;
        if (stored) return stored.status === "pending" ? this.settle(stored, run, 0) : outcomeOf(stored);
        // The run moved on, or a worker claimed it meanwhile: look again.
        if (!(error instanceof StaleFenceError || error instanceof ConflictError) || attempt >= 8) throw error;
      }
    }
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
      if (!isOwned(run)) {
        try {
          return await this.applyHere(command, run, false);
        } catch (error) {
          if (error instanceof Refused) throw error.reason;
          if ((error instanceof StaleFenceError || error instanceof ConflictError) && conflicts++ < 8) continue;
          throw error;
        }
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

  /**
   * Applies a command to a run nobody owns, in one write: the command itself when `record`, its
   * effect and its answer. A refusal is recorded too, and raised as its typed error.
   */
  private async applyHere(command: CommandRecord, run: RunRecord, record: boolean): Promise<CommandOutcome> {
    const prepared = await prepareCommand(command, await this.view(run));
    const batch = prepared.ok ? prepared.batch : new Batch();
    if (record) {
      batch.submit.push(command);
      batch.events.unshift(requested(command, this.secretKeys));
    }
    const answer = prepared.ok ? acceptance(command, prepared.effect, prepared.result ?? {}, this.actor) : refusal(command, prepared.error, this.actor);
    batch.answer(answer);
    // Fenced out in the same write: a worker whose lease ran out, stalled rather than gone, must not
    // write over what the command did once it wakes.
    const expect = { fenceOut: true, ...(prepared.ok ? { expectStatus: [run.status], ...(prepared.writesState ? { expectHead: run.head } : {}) } : {}) };
    await this.store.commit(batch.toCommit(run.id, run.fence, expect));
    if (!prepared.ok) throw new Refused(prepared.error);
    return outcomeOf({ ...command, ...answer.answer });
  }

  private async view(run: RunRecord): Promise<RunView> {
    const record = await this.versions.get(run.version);
    const head = run.head ? await this.store.getCheckpoint(run.head) : undefined;
    if (!head) throw new NotFoundError("checkpoint", String(run.head));
    const [state, tasks, pending] = await Promise.all([
      readState(this.store, run.id, head.n),
      this.store.listTasks(run.id, { step: head.step + 1 }),
      this.store.listInterrupts({ runId: run.id, status: "pending" }),
    ]);
    return {
      run,
      definition: record.definition,
      validator: record.validator,
      reducerOf: (key) => reducerOf(record.definition, key),
      head,
      state,
      tasks,
      pending,
      interrupt: (id) => this.store.getInterrupt(id),
      executing: false,
      secretKeys: this.secretKeys,
    };
  }
}

/** A command this process refused (and recorded as refused): its error is final. */
class Refused extends Error {
  constructor(readonly reason: Error) {
    super(reason.message);
  }
}

/** A worker holds the run's lease: commands go to it. */
function isOwned(run: RunRecord): boolean {
  return run.status === "running" && run.owner !== null && (run.leaseUntil ?? 0) > Date.now();
}

/** Events after which a waiting operator looks again: an answer, or the run no longer owned. */
const ANSWER_EVENTS: EventType[] = ["operator.accepted", "operator.refused", "run.released", "run.paused"];
