import { ConflictError } from "../errors.js";
import type { CommandRecord } from "../store/records.js";
import { acceptance, cancelBatch, canceledEffect, canceledWhy, childCancelReason, prepareCommand, refusal } from "../worker/commands.js";
import type { RunView } from "../worker/command-view.js";
import type { Committer } from "./commit.js";
import { EventFactory } from "./event-factory.js";
import type { ExecutorHost, ExecutorOptions } from "./executor-host.js";
import type { InflightTasks } from "./inflight.js";
import type { RunState } from "./run-state.js";

/**
 * Operator commands for a run this process executes: decided as any process would decide them
 * (worker/commands.ts) on the run as the executor knows it, and answered in its own commits.
 * Kill aborts the attempts running here; cancel is committed once they have stopped.
 */
export class RunCommands {
  constructor(
    private readonly rs: RunState,
    private readonly host: ExecutorHost,
    private readonly inflight: InflightTasks,
    private readonly committer: Committer,
    private readonly options: ExecutorOptions,
    /** Reads the run again from the store, after a command changed it. */
    private readonly reload: () => Promise<void>,
  ) {}

  /** Whether the command still waits for its answer (another process may have answered it). */
  async pending(command: CommandRecord): Promise<boolean> {
    const current = await this.host.store.getCommand(command.id);
    return current?.status === "pending";
  }

  /**
   * A command other than kill or cancel: its batch is committed after what the run's batch held,
   * then the run is read again. `lostOwner`: applied on a run just taken over, before its
   * recovery, as on the run that worker left (a kill left for it: see RunExecutor.execute).
   */
  async apply(command: CommandRecord, lostOwner?: string): Promise<void> {
    const rs = this.rs;
    const view: RunView = {
      run: lostOwner !== undefined ? { ...rs.run, owner: lostOwner } : rs.run,
      definition: rs.workflow.definition,
      validator: rs.workflow.validator,
      reducerOf: (key) => rs.workflow.reducerOf(key),
      head: rs.head,
      state: rs.chain.state,
      tasks: [...rs.tasks.values()],
      pending: rs.pendingInterrupts(),
      interrupt: (id) => this.host.store.getInterrupt(id),
      executing: this.inflight.size > 0,
      secretKeys: this.options.secretKeys,
    };
    const prepared = await prepareCommand(command, view);
    if (!prepared.ok) {
      await this.answer(refusal(command, prepared.error, command.actor));
      return;
    }
    await this.committer.commit();
    rs.batch = prepared.batch;
    rs.batch.answer(acceptance(command, prepared.effect, prepared.result ?? {}, command.actor));
    await this.committer.commit(prepared.writesState ? { expectHead: rs.head.id } : {});
    await this.reload();
  }

  async kill(command: CommandRecord): Promise<void> {
    const taskId = command.args.taskId as string | undefined;
    const targets = [...this.inflight.ids()].filter((id) => taskId === undefined || id === taskId);
    if (targets.length === 0) {
      const error = new ConflictError(taskId ? `task ${taskId} is not running` : `run ${this.rs.run.id} has no running task`);
      await this.answer(refusal(command, error, command.actor));
      return;
    }
    for (const id of targets) this.inflight.abort(id, "killed");
    const nodes = targets.map((id) => this.rs.tasks.get(id)?.node ?? id);
    const effect = `killing ${nodes.join(", ")} (abandoned after ${this.options.killGraceMs} ms if it ignores its signal)`;
    await this.answer(acceptance(command, effect, {}, command.actor));
  }

  /** Ends the run as canceled (its attempts here have stopped), then cancels its child runs. */
  async cancel(command: CommandRecord): Promise<void> {
    const rs = this.rs;
    const events = new EventFactory(rs.run.id, command.actor, this.options.secretKeys);
    rs.batch.absorb(cancelBatch(rs.run, [...rs.tasks.values()], rs.pendingInterrupts(), command.actor, command.reason ?? "canceled by operator", events));
    rs.batch.answer(acceptance(command, canceledEffect(rs.run.id), {}, command.actor));
    await this.committer.commit({}, canceledWhy(command));
    const children = await this.host.store.listRuns({ parentRunId: rs.run.id, status: ["queued", "running", "paused"] });
    for (const child of children.runs) await this.host.cancelChild(child.id, command.actor, childCancelReason(rs.run.id, command.reason));
  }

  private async answer(answer: ReturnType<typeof acceptance> | ReturnType<typeof refusal>): Promise<void> {
    this.rs.batch.answer(answer);
    await this.committer.commit();
  }
}
