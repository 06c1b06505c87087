import { createHash } from "node:crypto";
import rfdc from "rfdc";
import { ConflictError, NotFoundError, StaleFenceError, StoreError } from "../../errors.js";
import type { ChainRow } from "../../state/read.js";
import {
  RUN_STATUSES,
  numberedEvent,
  type ArtifactRef,
  type CheckpointRecord,
  type CheckpointSummary,
  summarizeCheckpoint,
  headFields,
  type CommandRecord,
  type EventRecord,
  type InterruptRecord,
  type NewEvent,
  type RunRecord,
  type RunStatus,
  type RunStorage,
  type TaskRecord,
  type WorkerRecord,
  type WorkflowRecord,
} from "../records.js";
import type { Claim, ClaimOptions, Commit, CommitResult, EventQuery, NewRun, RunFilter, Store, SubscribeOptions } from "../store.js";
import { EventFeed } from "../event-feed.js";
import { WORKER_RECORDS_KEPT_MS, checkCommit, checkDeletion, claimPatch, claimable, decodeCursor, encodeCursor, movesUpdatedAt, pickClaim, runClaimedEvent } from "../rules.js";

const copy: <T>(value: T) => T = rfdc();

/** The in-memory store: for tests and for engines that need no durability. */
export class MemoryStore implements Store {
  readonly description = "memory:";
  private readonly workflows = new Map<string, WorkflowRecord>();
  private readonly runs = new Map<string, RunRecord>();
  private readonly checkpoints = new Map<string, CheckpointRecord[]>();
  private readonly checkpointIndex = new Map<string, CheckpointRecord>();
  private readonly tasks = new Map<string, TaskRecord>();
  private readonly interrupts = new Map<string, InterruptRecord>();
  private readonly commands = new Map<string, CommandRecord>();
  private readonly events: EventRecord[] = [];
  private lastSeq = 0;
  // Per-run views of the same records, so that a run's step costs the same however many runs the store holds.
  private readonly tasksByRun = new Map<string, Map<string, TaskRecord>>();
  private readonly interruptsByRun = new Map<string, Map<string, InterruptRecord>>();
  private readonly eventsByRun = new Map<string, EventRecord[]>();
  private readonly artifacts = new Map<string, { data: Uint8Array; mediaType: string; runs: Set<string> }>();
  private readonly feed = new EventFeed();
  private fenceCounter = 0;
  /** The workflow of the last queued run claimed: the next claim turns to the next one (`pickClaim`). */
  private lastClaimedWorkflow: string | undefined;
  private readonly workers = new Map<string, WorkerRecord>();

  async putWorkflow(record: WorkflowRecord): Promise<void> {
    this.mustBeOpen();
    if (!this.workflows.has(record.version)) this.workflows.set(record.version, copy(record));
  }

  async getWorkflow(version: string): Promise<WorkflowRecord | undefined> {
    this.mustBeOpen();
    return copy(this.workflows.get(version));
  }

  async listWorkflows(): Promise<Omit<WorkflowRecord, "definition">[]> {
    this.mustBeOpen();
    return [...this.workflows.values()].map(({ definition: _d, ...rest }) => ({ ...rest }));
  }

  async createRun(init: NewRun): Promise<CommitResult> {
    this.mustBeOpen();
    if (this.runs.has(init.run.id)) throw new ConflictError(`run ${init.run.id} already exists`);
    const run = copy(init.run);
    Object.assign(run, headFields(init.checkpoint));
    this.runs.set(run.id, run);
    this.insertCheckpoint(copy(init.checkpoint));
    return { events: this.appendEvents(run, init.events) };
  }

  async getRun(id: string): Promise<RunRecord | undefined> {
    this.mustBeOpen();
    return copy(this.runs.get(id));
  }

  async listRuns(filter: RunFilter = {}): Promise<{ runs: RunRecord[]; nextCursor?: string }> {
    this.mustBeOpen();
    const statuses = filter.status === undefined ? undefined : ([] as RunStatus[]).concat(filter.status);
    const cursor = filter.cursor ? decodeCursor(filter.cursor) : undefined;
    const limit = filter.limit ?? 100;
    const matching = [...this.runs.values()]
      .filter((r) => !statuses || statuses.includes(r.status))
      .filter((r) => filter.workflow === undefined || r.workflow === filter.workflow)
      .filter((r) => filter.parentRunId === undefined || r.parentRunId === filter.parentRunId)
      .sort((a, b) => b.updatedAt - a.updatedAt || (a.id < b.id ? 1 : -1))
      .filter((r) => !cursor || r.updatedAt < cursor.updatedAt || (r.updatedAt === cursor.updatedAt && r.id < cursor.id));
    const page = matching.slice(0, limit);
    const last = page[page.length - 1];
    return { runs: copy(page), ...(matching.length > limit && last ? { nextCursor: encodeCursor(last) } : {}) };
  }

  async countRuns(): Promise<Record<RunStatus, number>> {
    this.mustBeOpen();
    const counts = Object.fromEntries(RUN_STATUSES.map((s) => [s, 0])) as Record<RunStatus, number>;
    for (const run of this.runs.values()) counts[run.status]++;
    return counts;
  }

  async claimRun(options: ClaimOptions): Promise<Claim | undefined> {
    this.mustBeOpen();
    const now = Date.now();
    const candidates = [...this.runs.values()].filter((run) =>
      claimable(run, now, options, (id) => this.runs.get(id)?.status),
    );
    const run = pickClaim(candidates, this.lastClaimedWorkflow);
    if (!run) return undefined;
    const recovered = run.status === "running";
    const takenFrom = recovered && run.owner !== null ? run.owner : undefined;
    if (!recovered) this.lastClaimedWorkflow = run.workflow;
    const fence = ++this.fenceCounter;
    Object.assign(run, claimPatch(run, options.owner, options.leaseMs, fence, now));
    this.appendEvents(run, [runClaimedEvent(run, options.owner, fence, recovered, now)]);
    return { run: copy(run), fence, recovered, ...(takenFrom !== undefined ? { takenFrom } : {}) };
  }

  async renewLease(runId: string, owner: string, fence: number, leaseMs: number): Promise<void> {
    this.mustBeOpen();
    const run = this.mustGetRun(runId);
    if (run.fence !== fence || run.owner !== owner) throw new StaleFenceError(runId, fence, run.fence);
    run.leaseUntil = Date.now() + leaseMs;
  }

  async commit(commit: Commit): Promise<CommitResult> {
    this.mustBeOpen();
    const run = this.mustGetRun(commit.runId);
    if (checkCommit(run, commit, (id) => this.interrupts.get(id)) === "duplicate") return { events: [] };
    for (const command of commit.submit ?? []) if (this.commands.has(command.id)) throw new ConflictError(`command ${command.id} already exists`);
    const now = Date.now();
    const active = movesUpdatedAt(run.status, commit);
    run.lastCommit = commit.id;
    if (commit.run) Object.assign(run, copy(commit.run));
    if (commit.checkpoint) {
      const checkpoint = copy(commit.checkpoint);
      this.insertCheckpoint(checkpoint);
      Object.assign(run, headFields(checkpoint));
    }
    for (const task of commit.tasks ?? []) keep(this.tasks, this.tasksByRun, copy(task));
    for (const interrupt of commit.interrupts ?? []) keep(this.interrupts, this.interruptsByRun, copy(interrupt));
    for (const command of commit.submit ?? []) this.commands.set(command.id, copy(command));
    for (const answer of commit.commands ?? []) {
      const command = this.commands.get(answer.id);
      if (command) Object.assign(command, copy(answer));
    }
    for (const id of commit.wake ?? []) {
      const waiting = this.runs.get(id);
      if (waiting && waiting.status === "queued" && waiting.waitingOn === run.id) {
        waiting.waitingOn = null;
        waiting.updatedAt = now;
      }
    }
    run.pendingInterrupts = [...(this.interruptsByRun.get(run.id)?.values() ?? [])].filter((i) => i.status === "pending").length;
    if (active) run.updatedAt = now;
    return { events: this.appendEvents(run, commit.events ?? []) };
  }

  async getCheckpoint(id: string): Promise<CheckpointRecord | undefined> {
    this.mustBeOpen();
    return copy(this.checkpointIndex.get(id));
  }

  async listCheckpoints(runId: string, options: { limit?: number; afterN?: number } = {}): Promise<CheckpointRecord[]> {
    this.mustBeOpen();
    return copy(this.checkpointsOf(runId, options));
  }

  async listCheckpointSummaries(runId: string, options: { limit?: number; afterN?: number } = {}): Promise<CheckpointSummary[]> {
    this.mustBeOpen();
    return copy(this.checkpointsOf(runId, options).map(summarizeCheckpoint));
  }

  private checkpointsOf(runId: string, options: { limit?: number; afterN?: number }): CheckpointRecord[] {
    const all = (this.checkpoints.get(runId) ?? []).filter((c) => options.afterN === undefined || c.n > options.afterN);
    return all.slice(0, options.limit ?? all.length);
  }

  async checkpointRows(runId: string, ns: readonly number[]): Promise<ChainRow[]> {
    this.mustBeOpen();
    const all = this.checkpoints.get(runId) ?? [];
    return copy(ns.map((n) => all[n]).filter((c): c is CheckpointRecord => c !== undefined));
  }

  async checkpointRowRange(runId: string, fromN: number, toN: number): Promise<ChainRow[]> {
    this.mustBeOpen();
    return copy((this.checkpoints.get(runId) ?? []).slice(fromN + 1, toN + 1));
  }

  async getTask(id: string): Promise<TaskRecord | undefined> {
    this.mustBeOpen();
    return copy(this.tasks.get(id));
  }

  async listTasks(runId: string, options: { step?: number } = {}): Promise<TaskRecord[]> {
    this.mustBeOpen();
    return copy(
      [...(this.tasksByRun.get(runId)?.values() ?? [])]
        .filter((t) => options.step === undefined || t.step === options.step)
        .sort((a, b) => a.step - b.step || a.createdAt - b.createdAt || (a.id < b.id ? -1 : 1)),
    );
  }

  async getInterrupt(id: string): Promise<InterruptRecord | undefined> {
    this.mustBeOpen();
    return copy(this.interrupts.get(id));
  }

  async listInterrupts(filter: { status?: "pending" | "resolved"; runId?: string; limit?: number } = {}): Promise<InterruptRecord[]> {
    this.mustBeOpen();
    const all = filter.runId === undefined ? this.interrupts : (this.interruptsByRun.get(filter.runId) ?? new Map<string, InterruptRecord>());
    const list = [...all.values()]
      .filter((i) => filter.status === undefined || i.status === filter.status)
      .sort((a, b) => a.createdAt - b.createdAt || (a.id < b.id ? -1 : 1));
    return copy(list.slice(0, filter.limit ?? list.length));
  }

  async submitCommand(command: CommandRecord, event: NewEvent): Promise<CommitResult> {
    this.mustBeOpen();
    const run = this.mustGetRun(command.runId);
    if (this.commands.has(command.id)) throw new ConflictError(`command ${command.id} already exists`);
    this.commands.set(command.id, copy(command));
    return { events: this.appendEvents(run, [event]) };
  }

  async answerCommand(answer: Pick<CommandRecord, "id" | "status" | "result" | "answeredAt">, event: NewEvent): Promise<CommitResult> {
    this.mustBeOpen();
    const command = this.commands.get(answer.id);
    if (!command) throw new NotFoundError("command", answer.id);
    if (command.status !== "pending") throw new ConflictError(`command ${answer.id} was already ${command.status}`);
    Object.assign(command, copy(answer));
    return { events: this.appendEvents(this.mustGetRun(command.runId), [event]) };
  }

  async getCommand(id: string): Promise<CommandRecord | undefined> {
    this.mustBeOpen();
    return copy(this.commands.get(id));
  }

  async listCommands(filter: { runId?: string; status?: CommandRecord["status"]; limit?: number } = {}): Promise<CommandRecord[]> {
    this.mustBeOpen();
    const list = [...this.commands.values()]
      .filter((c) => (filter.runId === undefined || c.runId === filter.runId) && (filter.status === undefined || c.status === filter.status))
      .sort((a, b) => a.createdAt - b.createdAt);
    return copy(list.slice(0, filter.limit ?? list.length));
  }

  async readEvents(query: EventQuery = {}): Promise<EventRecord[]> {
    this.mustBeOpen();
    const events = query.runId === undefined ? this.events : (this.eventsByRun.get(query.runId) ?? []);
    const start = lowerBound(events, query.after ?? 0);
    const matches = (e: EventRecord) => !query.types || query.types.includes(e.type);
    const out: EventRecord[] = [];
    if (query.last !== undefined) {
      for (let i = events.length - 1; i >= start && out.length < query.last; i--) if (matches(events[i]!)) out.push(events[i]!);
      out.reverse();
    } else {
      for (let i = start; i < events.length && out.length < (query.limit ?? Infinity); i++) if (matches(events[i]!)) out.push(events[i]!);
    }
    return copy(out.slice(0, query.limit ?? out.length));
  }

  async lastEventSeq(): Promise<number> {
    this.mustBeOpen();
    return this.lastSeq;
  }

  subscribe(options: SubscribeOptions = {}): AsyncIterable<EventRecord> {
    return this.feed.subscribe(this, options);
  }

  async putArtifact(runId: string, data: Uint8Array, mediaType: string): Promise<ArtifactRef> {
    this.mustBeOpen();
    this.mustGetRun(runId);
    const sha256 = createHash("sha256").update(data).digest("hex");
    const existing = this.artifacts.get(sha256);
    if (existing) existing.runs.add(runId);
    else this.artifacts.set(sha256, { data: new Uint8Array(data), mediaType, runs: new Set([runId]) });
    return { sha256, size: data.byteLength, mediaType };
  }

  async getArtifact(sha256: string): Promise<{ data: Uint8Array; mediaType: string } | undefined> {
    this.mustBeOpen();
    const found = this.artifacts.get(sha256);
    return found ? { data: new Uint8Array(found.data), mediaType: found.mediaType } : undefined;
  }

  /** A memory store grows with the process; it cannot tell how far. */
  async room(): Promise<undefined> {
    this.mustBeOpen();
    return undefined;
  }

  async runStorage(runId: string): Promise<RunStorage> {
    this.mustBeOpen();
    this.mustGetRun(runId);
    const checkpoints = (this.checkpoints.get(runId) ?? []).reduce((sum, c) => sum + c.bytes, 0);
    const events = (this.eventsByRun.get(runId) ?? []).reduce((sum, e) => sum + JSON.stringify(e.payload).length + 64, 0);
    const artifacts = [...this.artifacts.values()].filter((a) => a.runs.has(runId)).reduce((sum, a) => sum + a.data.byteLength, 0);
    return { checkpoints, events, artifacts, total: checkpoints + events + artifacts };
  }

  async deleteRun(runId: string): Promise<string[]> {
    this.mustBeOpen();
    const run = this.mustGetRun(runId);
    const tree = [run];
    for (let i = 0; i < tree.length; i++) for (const r of this.runs.values()) if (r.parentRunId === tree[i]!.id) tree.push(r);
    checkDeletion(run, tree);
    const ids = new Set(tree.map((r) => r.id));
    for (const id of ids) {
      this.runs.delete(id);
      for (const c of this.checkpoints.get(id) ?? []) if (c) this.checkpointIndex.delete(c.id);
      this.checkpoints.delete(id);
      for (const taskId of this.tasksByRun.get(id)?.keys() ?? []) this.tasks.delete(taskId);
      this.tasksByRun.delete(id);
      for (const interruptId of this.interruptsByRun.get(id)?.keys() ?? []) this.interrupts.delete(interruptId);
      this.interruptsByRun.delete(id);
      this.eventsByRun.delete(id);
    }
    for (const [id, command] of this.commands) if (ids.has(command.runId)) this.commands.delete(id);
    let kept = 0;
    for (const event of this.events) if (!ids.has(event.runId)) this.events[kept++] = event;
    this.events.length = kept;
    for (const [sha256, artifact] of this.artifacts) {
      for (const id of ids) artifact.runs.delete(id);
      if (artifact.runs.size === 0) this.artifacts.delete(sha256);
    }
    return [...ids];
  }

  async putWorker(record: WorkerRecord): Promise<WorkerRecord | undefined> {
    this.mustBeOpen();
    const now = Date.now();
    for (const [id, w] of this.workers) if (now - w.lastSeen > WORKER_RECORDS_KEPT_MS) this.workers.delete(id);
    const replaced = this.workers.get(record.id);
    this.workers.set(record.id, copy({ ...record, lastSeen: now }));
    return replaced && copy(replaced);
  }

  async listWorkers(): Promise<WorkerRecord[]> {
    this.mustBeOpen();
    return copy([...this.workers.values()].sort((a, b) => b.lastSeen - a.lastSeen));
  }

  async close(): Promise<void> {
    this.closed = true;
    this.feed.close();
  }

  /** Closed, it answers as a closed file store does: a process that closed it must not go on as if it had not. */
  private mustBeOpen(): void {
    if (this.closed) throw new StoreError("the memory store is closed");
  }

  private closed = false;

  private mustGetRun(id: string): RunRecord {
    const run = this.runs.get(id);
    if (!run) throw new NotFoundError("run", id);
    return run;
  }

  private insertCheckpoint(checkpoint: CheckpointRecord): void {
    const list = this.checkpoints.get(checkpoint.runId) ?? [];
    list[checkpoint.n] = checkpoint;
    this.checkpoints.set(checkpoint.runId, list);
    this.checkpointIndex.set(checkpoint.id, checkpoint);
  }

  private appendEvents(run: RunRecord, events: readonly NewEvent[]): EventRecord[] {
    const out: EventRecord[] = [];
    for (const event of events) {
      const record = numberedEvent(copy(event), ++this.lastSeq, ++run.eventCount);
      this.events.push(record);
      const ofRun = this.eventsByRun.get(run.id);
      if (ofRun) ofRun.push(record);
      else this.eventsByRun.set(run.id, [record]);
      out.push(record);
    }
    if (out.length > 0) this.feed.publish(copy(out));
    return copy(out);
  }
}

function keep<T extends { id: string; runId: string }>(all: Map<string, T>, byRun: Map<string, Map<string, T>>, record: T): void {
  all.set(record.id, record);
  const ofRun = byRun.get(record.runId);
  if (ofRun) ofRun.set(record.id, record);
  else byRun.set(record.runId, new Map([[record.id, record]]));
}

function lowerBound(events: EventRecord[], after: number): number {
  let lo = 0;
  let hi = events.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (events[mid]!.seq <= after) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}
