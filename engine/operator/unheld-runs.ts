import { ConflictError, NotFoundError, StaleFenceError, ValidationError } from "../errors.js";
import { Batch } from "../runtime/batch.js";
import { readState } from "../state/read.js";
import { TERMINAL_RUN_STATUSES, type CommandRecord, type CommandType, type RunRecord } from "../store/records.js";
import { acceptance, prepareCommand, refusal } from "../worker/commands.js";
import type { RunView } from "../worker/command-view.js";
import { requested, type CommandWriter } from "./command-records.js";
import { reducerOf, type WorkflowVersions } from "./workflow-versions.js";

/** A worker holds the run's lease: commands for the run are queued for it, and it answers them. */
export function isHeld(run: RunRecord, now = Date.now()): boolean {
  return run.status === "running" && run.owner !== null && (run.leaseUntil ?? 0) > now;
}

/** A command applied to a run nobody holds: as answered, and, when it was refused, the error that says why. */
export interface Applied {
  command: CommandRecord;
  refused?: Error;
}

/**
 * Commands applied to runs nobody holds, by whichever process does it — the operator's that
 * records one, a worker that let go of a run with commands still queued for it, a worker answering
 * commands left pending — with the code of the worker that holds a run (worker/commands.ts), under
 * the same fencing rules. Answers are written only while the command is pending, so when several
 * processes apply one command, one answers it and the others find it answered.
 */
export class UnheldRuns {
  constructor(
    private readonly writer: CommandWriter,
    private readonly versions: WorkflowVersions,
  ) {}

  /**
   * Applies a command to a run nobody holds (`run`, as just read), in one write: the command
   * itself when `record`, its effect and its answer. A command queued for the run's worker
   * earlier (not `record`) that the run ended before is refused as such. Nothing is written when
   * the command was answered meanwhile (ConflictError), or the run changed in a way its effect
   * depends on (ConflictError, StaleFenceError once a worker claimed it).
   */
  async apply(command: CommandRecord, run: RunRecord, record: boolean): Promise<Applied> {
    const { store, actor, secretKeys } = this.writer;
    // Made first, so that its time is not later than the times of the events it led to.
    const request = record ? requested(command, secretKeys) : undefined;
    const prepared = await prepareCommand(command, await this.view(run));
    if (!prepared.ok && !record) prepared.error = endedFirst(command, run, prepared.error) ?? prepared.error;
    const batch = prepared.ok ? prepared.batch : new Batch();
    if (request) {
      batch.submit.push(command);
      batch.events.unshift(request);
    }
    const answer = prepared.ok ? acceptance(command, prepared.effect, prepared.result ?? {}, actor) : refusal(command, prepared.error, actor);
    batch.answer(answer);
    // Fenced out in the same write: a worker whose lease ran out, stalled rather than gone, must not
    // write over what the command did once it wakes.
    const expect = { fenceOut: true, ...(prepared.ok ? { expectStatus: [run.status], ...(prepared.writesState ? { expectHead: run.head } : {}) } : {}) };
    await store.commit(batch.toCommit(run.id, run.fence, expect));
    return { command: { ...command, ...answer.answer }, ...(prepared.ok ? {} : { refused: prepared.error }) };
  }

  /**
   * Answers a pending command whose run nobody holds, applying it to the run as it is now.
   * Undefined when the command is not this process's to answer: answered (by another process),
   * its run deleted, or its run held by a worker, which answers it.
   */
  async answer(command: CommandRecord): Promise<CommandRecord | undefined> {
    const store = this.writer.store;
    for (let attempt = 0; ; attempt++) {
      const [current, run] = await Promise.all([store.getCommand(command.id), store.getRun(command.runId)]);
      if (current?.status !== "pending" || !run || isHeld(run)) return undefined;
      try {
        return (await this.apply(current, run, false)).command;
      } catch (error) {
        // Answered by another process, or the run moved on (resumed, claimed, deleted): look again.
        if (!(error instanceof ConflictError || error instanceof StaleFenceError || error instanceof NotFoundError) || attempt >= 8) throw error;
      }
    }
  }

  private async view(run: RunRecord): Promise<RunView> {
    const store = this.writer.store;
    const record = await this.versions.get(run.version);
    const head = run.head ? await store.getCheckpoint(run.head) : undefined;
    if (!head) throw new NotFoundError("checkpoint", String(run.head));
    const [state, tasks, pending] = await Promise.all([
      readState(store, run.id, head.n),
      store.listTasks(run.id, { step: head.step + 1 }),
      store.listInterrupts({ runId: run.id, status: "pending" }),
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
      interrupt: (id) => store.getInterrupt(id),
      executing: false,
      secretKeys: this.writer.secretKeys,
    };
  }
}

const APPLIED: Record<Exclude<CommandType, "fork" | "upgrade">, string> = {
  resolve: "the answer",
  update: "the state edit",
  kill: "the kill",
  retry: "the retry",
  cancel: "the cancel",
  break: "the breakpoint",
  unbreak: "the breakpoint's removal",
  signal: "the signal",
};

/**
 * Why a command queued for the worker of a live run was refused once that run had ended: it ended
 * first (its worker let go of it before applying the command). A bad argument is said as it is.
 */
function endedFirst(command: CommandRecord, run: RunRecord, error: Error): ConflictError | undefined {
  if (command.type === "fork" || command.type === "upgrade" || error instanceof ValidationError || !TERMINAL_RUN_STATUSES.includes(run.status)) return undefined;
  return new ConflictError(`run ${run.id} ended (${run.status}) before ${APPLIED[command.type]} was applied`);
}
