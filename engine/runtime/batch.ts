import type { CheckpointRecord, CommandRecord, InterruptRecord, NewEvent, RunPatch, TaskRecord } from "../store/records.js";
import type { Commit } from "../store/store.js";
import { newId } from "../ids.js";

/**
 * Collects the writes of one atomic commit: the executor adds task transitions, events and the
 * rest as they happen and sends them together, so a step's results land in one transaction.
 */
export class Batch {
  readonly tasks = new Map<string, TaskRecord>();
  readonly interrupts = new Map<string, InterruptRecord>();
  readonly events: NewEvent[] = [];
  /** Commands stored by this commit (applied in the same write that records them). */
  readonly submit: CommandRecord[] = [];
  readonly commands: Pick<CommandRecord, "id" | "status" | "result" | "answeredAt">[] = [];
  readonly wake: string[] = [];
  run: RunPatch | undefined;
  checkpoint: CheckpointRecord | undefined;
  expectPending: string[] = [];

  get empty(): boolean {
    return (
      this.tasks.size === 0 &&
      this.interrupts.size === 0 &&
      this.events.length === 0 &&
      this.submit.length === 0 &&
      this.commands.length === 0 &&
      !this.run &&
      !this.checkpoint &&
      this.wake.length === 0
    );
  }

  task(task: TaskRecord, ...events: NewEvent[]): this {
    this.tasks.set(task.id, task);
    this.events.push(...events);
    return this;
  }

  interrupt(interrupt: InterruptRecord): this {
    this.interrupts.set(interrupt.id, interrupt);
    return this;
  }

  event(...events: NewEvent[]): this {
    this.events.push(...events);
    return this;
  }

  /** An operator command's answer (accepted or refused) with its event. */
  answer(answered: { answer: Batch["commands"][number]; event: NewEvent }): this {
    this.commands.push(answered.answer);
    this.events.push(answered.event);
    return this;
  }

  patchRun(patch: RunPatch): this {
    this.run = { ...this.run, ...patch };
    return this;
  }

  /** Moves everything of `other` into this batch (later writes to the same record win). */
  absorb(other: Batch): this {
    for (const t of other.tasks.values()) this.tasks.set(t.id, t);
    for (const i of other.interrupts.values()) this.interrupts.set(i.id, i);
    this.events.push(...other.events);
    this.submit.push(...other.submit);
    this.commands.push(...other.commands);
    this.wake.push(...other.wake);
    if (other.run) this.patchRun(other.run);
    if (other.checkpoint) this.checkpoint = other.checkpoint;
    this.expectPending.push(...other.expectPending);
    return this;
  }

  /** `id` must be unique per commit of the run; the executor numbers its commits under its fence. */
  toCommit(runId: string, fence: number, expect: Pick<Commit, "expectHead" | "expectStatus" | "fenceOut"> = {}, id = newId("c", 12)): Commit {
    // Assigned in turn rather than spread from conditional literals: one object, made at every step.
    const commit: Commit = { id, runId, fence };
    if (expect.expectHead !== undefined) commit.expectHead = expect.expectHead;
    if (expect.expectStatus !== undefined) commit.expectStatus = expect.expectStatus;
    if (expect.fenceOut) commit.fenceOut = true;
    if (this.expectPending.length > 0) commit.expectPending = this.expectPending;
    if (this.run) commit.run = this.run;
    if (this.checkpoint) commit.checkpoint = this.checkpoint;
    if (this.tasks.size > 0) commit.tasks = [...this.tasks.values()];
    if (this.interrupts.size > 0) commit.interrupts = [...this.interrupts.values()];
    if (this.submit.length > 0) commit.submit = this.submit;
    if (this.commands.length > 0) commit.commands = this.commands;
    if (this.events.length > 0) commit.events = this.events;
    if (this.wake.length > 0) commit.wake = this.wake;
    return commit;
  }
}
