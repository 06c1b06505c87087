import type { CompiledWorkflow } from "../graph/model.js";
import { SignalsTaken } from "./signal-inbox.js";
import type { StateChain } from "../state/snapshot.js";
import type { CheckpointRecord, InterruptRecord, PauseReason, RunError, RunRecord, TaskRecord } from "../store/records.js";
import { Batch } from "./batch.js";
import type { EventFactory } from "./event-factory.js";
import type { StoreClock } from "./store-clock.js";
import { runTransition } from "./transitions.js";

/**
 * What an executor knows of the run it owns — the run, its head checkpoint and state, the tasks
 * of the step in progress, its interrupts — and the batch of writes being prepared. The step
 * logic (step.ts, outcomes.ts) reads and changes it; the executor commits the batch.
 */
export class RunState {
  head!: CheckpointRecord;
  chain!: StateChain;
  /** Tasks of the step in progress (head step + 1); durable calls are kept elsewhere. */
  tasks = new Map<string, TaskRecord>();
  /** Pending interrupts of the run, and resolved ones of the step in progress. */
  interrupts = new Map<string, InterruptRecord>();
  batch = new Batch();
  /** Tasks marked running in the batch, whose attempts start once the batch is committed. */
  launch: TaskRecord[] = [];
  /** Signals running attempts took from the run's inbox, not yet committed. */
  readonly signals = new SignalsTaken();

  constructor(
    readonly workflow: CompiledWorkflow,
    public run: RunRecord,
    readonly events: EventFactory,
    readonly workerId: string,
    /** Timers are judged and written by it. */
    readonly clock: StoreClock,
  ) {}

  get step(): number {
    return this.head.step + 1;
  }

  nodeDefinition(node: string) {
    return this.workflow.definition.nodes[node];
  }

  /** Records a task's new version in memory and in the batch, with its events. */
  setTask(task: TaskRecord, ...events: ReturnType<EventFactory["run"]>[]): TaskRecord {
    this.tasks.set(task.id, task);
    this.batch.task(task, ...events);
    return task;
  }

  pendingInterrupts(): InterruptRecord[] {
    return [...this.interrupts.values()].filter((i) => i.status === "pending");
  }

  /** `asksAgain`: the interrupt whose answer no longer applies, which this one asks again (said in its event). */
  addInterrupt(raised: InterruptRecord, asksAgain?: string): void {
    const interrupt = { ...raised, headN: this.head.n };
    this.batch.interrupt(interrupt);
    this.batch.event(
      this.events.run("interrupt.created", {
        interruptId: interrupt.id,
        kind: interrupt.kind,
        node: interrupt.node,
        ...(interrupt.request.question ? { question: interrupt.request.question } : {}),
        ...(asksAgain ? { asksAgain } : {}),
        ...(interrupt.deadline ? { deadline: interrupt.deadline.at } : {}),
      }),
    );
    this.interrupts.set(interrupt.id, interrupt);
  }

  pause(reason: PauseReason, nodes: string[], error?: RunError): void {
    const interrupts = this.pendingInterrupts().map((i) => i.id);
    // A paused run's current nodes are the ones it waits on: failed, killed, or asking.
    this.batch.patchRun(runTransition(this.run, "paused", { reason, current: nodes, ...(error ? { error } : {}) }));
    this.batch.event(this.events.run("run.paused", { reason, nodes, ...(interrupts.length > 0 ? { interrupts } : {}) }));
  }

  failRun(error: RunError): void {
    this.batch.patchRun(runTransition(this.run, "failed", { error }));
    this.batch.event(this.events.run("run.failed", { error }));
    this.wakeParent();
  }

  succeedRun(): void {
    this.batch.patchRun(runTransition(this.run, "succeeded"));
    this.batch.event(this.events.run("run.succeeded", { steps: this.head.step }));
    this.wakeParent();
  }

  /** A parent run waiting on this one (a sub-workflow) becomes claimable when this one ends. */
  private wakeParent(): void {
    if (this.run.parentRunId) this.batch.wake.push(this.run.parentRunId);
  }
}

/** Deterministic order of a step's tasks: by node name, then map index. */
export function byNodeThenIndex(a: TaskRecord, b: TaskRecord): number {
  return a.node < b.node ? -1 : a.node > b.node ? 1 : (a.index ?? -1) - (b.index ?? -1);
}
