import rfdc from "rfdc";
import { NotFoundError } from "../../errors.js";
import { EventFeed } from "../event-feed.js";
import {
  numberedEvent,
  type CheckpointRecord,
  type CommandRecord,
  type EventRecord,
  type InterruptRecord,
  type NewEvent,
  type RunRecord,
  type ScheduleRecord,
  type TaskRecord,
  type WorkerRecord,
  type WorkflowRecord,
} from "../records.js";

/** Records go in and come out as copies: a caller never holds the store's own. */
export const copy: <T>(value: T) => T = rfdc();

/** What the memory store holds, with the few writes every part of it makes. */
export class MemoryTables {
  readonly workflows = new Map<string, WorkflowRecord>();
  readonly runs = new Map<string, RunRecord>();
  readonly checkpoints = new Map<string, CheckpointRecord[]>();
  readonly checkpointIndex = new Map<string, CheckpointRecord>();
  readonly tasks = new Map<string, TaskRecord>();
  readonly interrupts = new Map<string, InterruptRecord>();
  readonly commands = new Map<string, CommandRecord>();
  readonly events: EventRecord[] = [];
  lastSeq = 0;
  // Per-run views of the same records, so that a run's step costs the same however many runs the store holds.
  readonly tasksByRun = new Map<string, Map<string, TaskRecord>>();
  readonly interruptsByRun = new Map<string, Map<string, InterruptRecord>>();
  readonly eventsByRun = new Map<string, EventRecord[]>();
  readonly artifacts = new Map<string, { data: Uint8Array; mediaType: string; runs: Set<string> }>();
  readonly feed = new EventFeed();
  fenceCounter = 0;
  /** The workflow of the last queued run claimed: the next claim turns to the next one (`pickClaim`). */
  lastClaimedWorkflow: string | undefined;
  readonly workers = new Map<string, WorkerRecord>();
  readonly schedules = new Map<string, ScheduleRecord>();

  mustGetRun(id: string): RunRecord {
    const run = this.runs.get(id);
    if (!run) throw new NotFoundError("run", id);
    return run;
  }

  insertCheckpoint(checkpoint: CheckpointRecord): void {
    const list = this.checkpoints.get(checkpoint.runId) ?? [];
    list[checkpoint.n] = checkpoint;
    this.checkpoints.set(checkpoint.runId, list);
    this.checkpointIndex.set(checkpoint.id, checkpoint);
  }

  keepTask(task: TaskRecord): void {
    keep(this.tasks, this.tasksByRun, task);
  }

  keepInterrupt(interrupt: InterruptRecord): void {
    keep(this.interrupts, this.interruptsByRun, interrupt);
  }

  /** Numbers the events (store-wide and in their run), keeps them, and tells the subscribers. */
  appendEvents(run: RunRecord, events: readonly NewEvent[]): EventRecord[] {
    const out: EventRecord[] = [];
    for (const event of events) {
      const record = numberedEvent(copy(event), ++this.lastSeq, ++run.eventCount);
      this.events.push(record);
      const ofRun = this.eventsByRun.get(run.id);
      if (ofRun) ofRun.push(record);
      else this.eventsByRun.set(run.id, [record]);
      out.push(record);
    }
    // One copy for the subscribers and the committer, as the SQLite store hands both the same records.
    const handed = copy(out);
    if (handed.length > 0) this.feed.publish(handed);
    return handed;
  }
}

function keep<T extends { id: string; runId: string }>(all: Map<string, T>, byRun: Map<string, Map<string, T>>, record: T): void {
  all.set(record.id, record);
  const ofRun = byRun.get(record.runId);
  if (ofRun) ofRun.set(record.id, record);
  else byRun.set(record.runId, new Map([[record.id, record]]));
}
