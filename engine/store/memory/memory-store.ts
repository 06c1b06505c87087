import { StoreError } from "../../errors.js";
import type { ChainRow } from "../../state/read.js";
import {
  RUN_STATUSES,
  type ArtifactRef,
  type CheckpointRecord,
  type CheckpointSummary,
  type CommandRecord,
  type EventRecord,
  type InterruptRecord,
  type NewEvent,
  type RunRecord,
  type RunStatus,
  type RunStorage,
  type ScheduleAdvance,
  type ScheduleRecord,
  type TaskRecord,
  type WorkerRecord,
  type WorkflowRecord,
} from "../records.js";
import { deadlinesOf } from "../listing.js";
import type { Claim, ClaimOptions, Commit, CommitResult, Deadline, EventQuery, NewRun, RunFilter, Store, SubscribeOptions, TaskRange } from "../store.js";
import { WORKER_RECORDS_KEPT_MS, artifactRef, decodeCursor, encodeCursor, onVersion } from "../rules.js";
import { scheduleAdvanced, scheduleReplacing } from "../schedule-writes.js";
import { deleteRun, runStorage } from "./erasure.js";
import * as history from "./history.js";
import { MemoryTables, copy } from "./tables.js";
import { hasTags } from "../../tags.js";
import * as writes from "./writes.js";

/**
 * The in-memory store: for tests and for engines that need no durability. Its records are in
 * tables.ts; its writes to runs in writes.ts, its reads of their histories in history.ts, and
 * deletion in erasure.ts.
 */
export class MemoryStore implements Store {
  readonly description = "memory:";
  private readonly t = new MemoryTables();
  private closed = false;

  async putWorkflow(record: WorkflowRecord): Promise<void> {
    this.mustBeOpen();
    if (!this.t.workflows.has(record.version)) this.t.workflows.set(record.version, copy(record));
  }

  async getWorkflow(version: string): Promise<WorkflowRecord | undefined> {
    this.mustBeOpen();
    return copy(this.t.workflows.get(version));
  }

  async listWorkflows(): Promise<Omit<WorkflowRecord, "definition">[]> {
    this.mustBeOpen();
    return [...this.t.workflows.values()].map(({ definition: _d, ...rest }) => ({ ...rest }));
  }

  async createRun(init: NewRun): Promise<CommitResult> {
    this.mustBeOpen();
    return writes.createRun(this.t, init);
  }

  async getRun(id: string): Promise<RunRecord | undefined> {
    this.mustBeOpen();
    return copy(this.t.runs.get(id));
  }

  async listRuns(filter: RunFilter = {}): Promise<{ runs: RunRecord[]; nextCursor?: string }> {
    this.mustBeOpen();
    const statuses = filter.status === undefined ? undefined : ([] as RunStatus[]).concat(filter.status);
    const cursor = filter.cursor ? decodeCursor(filter.cursor) : undefined;
    const limit = filter.limit ?? 100;
    const matching = [...this.t.runs.values()]
      .filter((r) => !statuses || statuses.includes(r.status))
      .filter((r) => filter.workflow === undefined || r.workflow === filter.workflow)
      .filter((r) => filter.parentRunId === undefined || r.parentRunId === filter.parentRunId)
      .filter((r) => hasTags(r, filter.tags))
      .filter((r) => onVersion(r, filter.versions))
      .sort((a, b) => b.updatedAt - a.updatedAt || (a.id < b.id ? 1 : -1))
      .filter((r) => !cursor || r.updatedAt < cursor.updatedAt || (r.updatedAt === cursor.updatedAt && r.id < cursor.id));
    const page = matching.slice(0, limit);
    const last = page[page.length - 1];
    return { runs: copy(page), ...(matching.length > limit && last ? { nextCursor: encodeCursor(last) } : {}) };
  }

  async countRuns(): Promise<Record<RunStatus, number>> {
    this.mustBeOpen();
    const counts = Object.fromEntries(RUN_STATUSES.map((s) => [s, 0])) as Record<RunStatus, number>;
    for (const run of this.t.runs.values()) counts[run.status]++;
    return counts;
  }

  async claimRun(options: ClaimOptions): Promise<Claim | undefined> {
    this.mustBeOpen();
    return writes.claimRun(this.t, options);
  }

  async renewLease(runId: string, owner: string, fence: number, leaseMs: number): Promise<void> {
    this.mustBeOpen();
    writes.renewLease(this.t, runId, owner, fence, leaseMs);
  }

  async commit(commit: Commit): Promise<CommitResult> {
    this.mustBeOpen();
    return writes.commit(this.t, commit);
  }

  async getCheckpoint(id: string): Promise<CheckpointRecord | undefined> {
    this.mustBeOpen();
    return copy(this.t.checkpointIndex.get(id));
  }

  async listCheckpoints(runId: string, options: { limit?: number; afterN?: number } = {}): Promise<CheckpointRecord[]> {
    this.mustBeOpen();
    return history.listCheckpoints(this.t, runId, options);
  }

  async listCheckpointSummaries(runId: string, options: { limit?: number; afterN?: number } = {}): Promise<CheckpointSummary[]> {
    this.mustBeOpen();
    return history.listCheckpointSummaries(this.t, runId, options);
  }

  async checkpointRows(runId: string, ns: readonly number[]): Promise<ChainRow[]> {
    this.mustBeOpen();
    return history.checkpointRows(this.t, runId, ns);
  }

  async checkpointRowRange(runId: string, fromN: number, toN: number): Promise<ChainRow[]> {
    this.mustBeOpen();
    return history.checkpointRowRange(this.t, runId, fromN, toN);
  }

  async getTask(id: string): Promise<TaskRecord | undefined> {
    this.mustBeOpen();
    return copy(this.t.tasks.get(id));
  }

  async listTasks(runId: string, options: TaskRange = {}): Promise<TaskRecord[]> {
    this.mustBeOpen();
    return history.listTasks(this.t, runId, options);
  }

  async getInterrupt(id: string): Promise<InterruptRecord | undefined> {
    this.mustBeOpen();
    return copy(this.t.interrupts.get(id));
  }

  async listDeadlines(): Promise<Deadline[]> {
    this.mustBeOpen();
    return deadlinesOf(this.t.runs.values(), this.t.interrupts.values());
  }

  async listInterrupts(filter: { status?: "pending" | "resolved"; runId?: string; limit?: number } = {}): Promise<InterruptRecord[]> {
    this.mustBeOpen();
    return history.listInterrupts(this.t, filter);
  }

  async submitCommand(command: CommandRecord, event: NewEvent): Promise<CommitResult> {
    this.mustBeOpen();
    return writes.submitCommand(this.t, command, event);
  }

  async answerCommand(answer: Pick<CommandRecord, "id" | "status" | "result" | "answeredAt">, event: NewEvent): Promise<CommitResult> {
    this.mustBeOpen();
    return writes.answerCommand(this.t, answer, event);
  }

  async getCommand(id: string): Promise<CommandRecord | undefined> {
    this.mustBeOpen();
    return copy(this.t.commands.get(id));
  }

  async listCommands(filter: { runId?: string; status?: CommandRecord["status"]; limit?: number } = {}): Promise<CommandRecord[]> {
    this.mustBeOpen();
    return history.listCommands(this.t, filter);
  }

  async readEvents(query: EventQuery = {}): Promise<EventRecord[]> {
    this.mustBeOpen();
    return history.readEvents(this.t, query);
  }

  async lastEventSeq(): Promise<number> {
    this.mustBeOpen();
    return this.t.lastSeq;
  }

  subscribe(options: SubscribeOptions = {}): AsyncIterable<EventRecord> {
    return this.t.feed.subscribe(this, options);
  }

  async putArtifact(runId: string, data: Uint8Array, mediaType: string): Promise<ArtifactRef> {
    this.mustBeOpen();
    this.t.mustGetRun(runId);
    const ref = artifactRef(data, mediaType);
    const existing = this.t.artifacts.get(ref.sha256);
    if (existing) existing.runs.add(runId);
    else this.t.artifacts.set(ref.sha256, { data: new Uint8Array(data), mediaType, runs: new Set([runId]) });
    return ref;
  }

  async getArtifact(sha256: string): Promise<{ data: Uint8Array; mediaType: string } | undefined> {
    this.mustBeOpen();
    const found = this.t.artifacts.get(sha256);
    return found ? { data: new Uint8Array(found.data), mediaType: found.mediaType } : undefined;
  }

  /** A memory store grows with the process; it cannot tell how far. */
  async room(): Promise<undefined> {
    this.mustBeOpen();
    return undefined;
  }

  async runStorage(runId: string): Promise<RunStorage> {
    this.mustBeOpen();
    return runStorage(this.t, runId);
  }

  async deleteRun(runId: string): Promise<string[]> {
    this.mustBeOpen();
    return deleteRun(this.t, runId);
  }

  async putWorker(record: WorkerRecord): Promise<WorkerRecord | undefined> {
    this.mustBeOpen();
    const now = Date.now();
    for (const [id, w] of this.t.workers) if (now - w.lastSeen > WORKER_RECORDS_KEPT_MS) this.t.workers.delete(id);
    const replaced = this.t.workers.get(record.id);
    this.t.workers.set(record.id, copy({ ...record, lastSeen: now }));
    return replaced && copy(replaced);
  }

  async listWorkers(): Promise<WorkerRecord[]> {
    this.mustBeOpen();
    return copy([...this.t.workers.values()].sort((a, b) => b.lastSeen - a.lastSeen));
  }

  async putSchedule(record: ScheduleRecord, expectRevision: number | null): Promise<ScheduleRecord> {
    this.mustBeOpen();
    const stored = scheduleReplacing(this.t.schedules.get(record.id), copy(record), expectRevision);
    this.t.schedules.set(record.id, stored);
    return copy(stored);
  }

  async getSchedule(id: string): Promise<ScheduleRecord | undefined> {
    this.mustBeOpen();
    return copy(this.t.schedules.get(id));
  }

  async listSchedules(): Promise<ScheduleRecord[]> {
    this.mustBeOpen();
    return copy([...this.t.schedules.values()].sort((a, b) => (a.id < b.id ? -1 : 1)));
  }

  async deleteSchedule(id: string): Promise<boolean> {
    this.mustBeOpen();
    return this.t.schedules.delete(id);
  }

  async advanceSchedule(id: string, expectNextAt: number, advance: ScheduleAdvance): Promise<boolean> {
    this.mustBeOpen();
    const advanced = scheduleAdvanced(this.t.schedules.get(id), expectNextAt, copy(advance));
    if (advanced) this.t.schedules.set(id, advanced);
    return advanced !== undefined;
  }

  async clock(): Promise<number> {
    this.mustBeOpen();
    return Date.now();
  }

  async close(): Promise<void> {
    this.closed = true;
    this.t.feed.close();
  }

  /** Closed, it answers as a closed file store does: a process that closed it must not go on as if it had not. */
  private mustBeOpen(): void {
    if (this.closed) throw new StoreError("the memory store is closed");
  }
}
