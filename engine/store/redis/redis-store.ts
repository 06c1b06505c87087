import type { Redis } from "ioredis";
import { ConflictError, NotFoundError, StoreError, ValidationError } from "../../errors.js";
import type { ChainRow } from "../../state/read.js";
import {
  RUN_STATUSES,
  type ArtifactRef,
  type CheckpointRecord,
  type CheckpointSummary,
  summarizeCheckpoint,
  type CommandRecord,
  type EventRecord,
  type InterruptRecord,
  type NewEvent,
  type RunRecord,
  type RunStatus,
  type RunStorage,
  type ScheduleAdvance,
  type ScheduleRecord,
  type StoreRoom,
  type TaskRecord,
  type WorkerRecord,
  type WorkflowRecord,
} from "../records.js";
import { WORKER_RECORDS_KEPT_MS, artifactRef, checkOwnRecords } from "../rules.js";
import type { Claim, ClaimOptions, Commit, CommitResult, Deadline, EventQuery, NewRun, RunFilter, Store, SubscribeOptions, TaskRange } from "../store.js";
import { withColon } from "../open.js";
import * as claims from "./claims.js";
import * as commands from "./commands.js";
import { connectRedis, dropClient, parseRedisUrl, type RedisStoreOptions, type RedisTarget } from "./connection.js";
import { deleteRun } from "./erasure.js";
import { EventTail } from "./event-tail.js";
import { failureContext, knownFailure, redisMessage, reportFailures, type FailureContext } from "./failures.js";
import * as history from "./history.js";
import { memoryRoom, readMemory } from "./memory.js";
import { RedisKeys } from "./keys.js";
import { loadScripts } from "./lua/scripts.js";
import * as queries from "./queries.js";
import { checkLayout, checkServer, type ServerFit } from "./server-checks.js";
import { checkpointRow, commitArgs, refusal } from "./replies.js";
import { decodeRun, encodeRunFields } from "./run-codec.js";
import { ScriptWriter } from "./script-writer.js";
import * as schedules from "./schedules.js";
import { subscribeEvents } from "./subscription.js";

/**
 * The Store contract on Redis, for many workers on many machines sharing one server. Every write
 * is one Lua script (atomic, preconditions checked inside), loaded once and called by EVALSHA
 * (script-writer.ts); runs are dispatched through stream consumer groups (see `lua/lib.ts`); live
 * subscriptions use blocking stream reads on a connection of their own (subscription.ts). Claims
 * and leases are in claims.ts, history reads in history.ts, commands in commands.ts, deletion in
 * erasure.ts.
 */
export class RedisStore implements Store {
  readonly description: string;
  private readonly keys: RedisKeys;
  private readonly w: ScriptWriter;
  private readonly tail: EventTail;
  private readonly failureAt: FailureContext;
  private readonly unansweredClaims: claims.UnansweredClaims = new Map();
  private closed = false;

  private constructor(
    private readonly client: Redis,
    target: RedisTarget,
    fit: ServerFit,
    /** Opened to write (not read-only): it may build the indexes a store of an earlier release lacks. */
    private readonly writable: boolean,
  ) {
    this.description = target.description;
    this.keys = new RedisKeys(target.prefix);
    this.w = new ScriptWriter(client, this.keys, target, fit);
    this.failureAt = failureContext(client, target);
    this.tail = new EventTail(() => connectRedis(target, "pitwall-tail"), this.keys.global("events"), () => this.lastEventSeq());
    reportFailures(this, () => ({ ...this.failureAt, closed: this.closed }));
  }

  /** Connects, checks the server and the key layout, and loads the scripts. */
  static async open(url: string, options: RedisStoreOptions = {}): Promise<RedisStore> {
    if (options.durability !== undefined && options.durability !== "process" && options.durability !== "os") {
      throw new ValidationError(`unknown durability ${JSON.stringify(options.durability)}: use "process" or "os"`);
    }
    const target = parseRedisUrl(url, options);
    const client = await connectRedis(target, "pitwall");
    try {
      const fit = await checkServer(client, target, options);
      await checkLayout(client, target, options);
      await loadScripts(client);
      return new RedisStore(client, target, fit, !options.readOnly);
    } catch (error) {
      const failure = error instanceof StoreError ? error : ((await knownFailure(error, failureContext(client, target))) ?? new StoreError(`Redis at ${withColon(target.description)} ${redisMessage(error)}`, { cause: error }));
      dropClient(client);
      throw failure;
    }
  }

  // ---------------------------------------------------------------- workflows

  async putWorkflow(record: WorkflowRecord): Promise<void> {
    this.w.eviction?.check();
    const { definition: _d, ...meta } = record;
    await this.client
      .multi()
      .hsetnx(this.keys.global("workflows"), record.version, JSON.stringify(record))
      .hsetnx(this.keys.global("workflow-list"), record.version, JSON.stringify(meta))
      .exec();
    await this.w.fsync();
  }

  async getWorkflow(version: string): Promise<WorkflowRecord | undefined> {
    const json = await this.client.hget(this.keys.global("workflows"), version);
    return json === null ? undefined : (JSON.parse(json) as WorkflowRecord);
  }

  async listWorkflows(): Promise<Omit<WorkflowRecord, "definition">[]> {
    const list = (await this.client.hvals(this.keys.global("workflow-list"))).map((json) => JSON.parse(json) as Omit<WorkflowRecord, "definition">);
    return list.sort((a, b) => a.createdAt - b.createdAt || (a.version < b.version ? -1 : 1));
  }

  // ---------------------------------------------------------------- runs

  async createRun(init: NewRun): Promise<CommitResult> {
    const { set } = encodeRunFields(init.run);
    const reply = await this.w.write(
      "createRun",
      this.w
        .args()
        .add(init.run.id)
        .tuples(set, (pair) => pair)
        .tuples([init.checkpoint], checkpointRow)
        .strings(init.events.map((e) => JSON.stringify(e)))
        .tuples(init.answering ? [init.answering] : [], ({ answer, event }) => [answer.id, answer.status, JSON.stringify(answer), JSON.stringify(event)]),
    );
    if (reply[0] === "exists") throw new ConflictError(`run ${init.run.id} already exists`);
    return this.w.result(reply, init.answering ? [...init.events, init.answering.event] : init.events);
  }

  async getRun(id: string): Promise<RunRecord | undefined> {
    return decodeRun(await this.client.hgetall(this.keys.run(id)));
  }

  listRuns(filter: RunFilter = {}): Promise<{ runs: RunRecord[]; nextCursor?: string }> {
    return queries.listRuns(this.client, this.keys, filter);
  }

  async countRuns(): Promise<Record<RunStatus, number>> {
    const pipeline = this.client.pipeline();
    for (const status of RUN_STATUSES) pipeline.zcard(this.keys.runsByStatus(status));
    const replies = (await pipeline.exec()) ?? [];
    return Object.fromEntries(RUN_STATUSES.map((status, i) => [status, Number(replies[i]?.[1] ?? 0)])) as Record<RunStatus, number>;
  }

  claimRun(options: ClaimOptions): Promise<Claim | undefined> {
    return claims.claimRun(this.w, this.unansweredClaims, options);
  }

  renewLease(runId: string, owner: string, fence: number, leaseMs: number): Promise<void> {
    return claims.renewLease(this.w, runId, owner, fence, leaseMs);
  }

  async commit(commit: Commit): Promise<CommitResult> {
    checkOwnRecords(commit);
    const reply = await this.w.write("commit", commitArgs(this.w.args(), commit));
    return this.w.result(reply, commit.events ?? [], commit);
  }

  // ---------------------------------------------------------------- history

  getCheckpoint(id: string): Promise<CheckpointRecord | undefined> {
    return history.getCheckpoint(this.client, this.keys, id);
  }

  listCheckpoints(runId: string, options: { limit?: number; afterN?: number } = {}): Promise<CheckpointRecord[]> {
    return history.listCheckpoints(this.client, this.keys, runId, options);
  }

  async listCheckpointSummaries(runId: string, options: { limit?: number; afterN?: number } = {}): Promise<CheckpointSummary[]> {
    return (await this.listCheckpoints(runId, options)).map(summarizeCheckpoint);
  }

  checkpointRows(runId: string, ns: readonly number[]): Promise<ChainRow[]> {
    return history.checkpointRows(this.client, this.keys, runId, ns);
  }

  checkpointRowRange(runId: string, fromN: number, toN: number): Promise<ChainRow[]> {
    return history.checkpointRowRange(this.client, this.keys, runId, fromN, toN);
  }

  getTask(id: string): Promise<TaskRecord | undefined> {
    return history.getTask(this.client, this.keys, id);
  }

  listTasks(runId: string, options: TaskRange = {}): Promise<TaskRecord[]> {
    return history.listTasks(this.client, this.keys, runId, options);
  }

  async getInterrupt(id: string): Promise<InterruptRecord | undefined> {
    return (await history.interruptsByIds(this.client, this.keys, [id]))[0];
  }

  listInterrupts(filter: { status?: "pending" | "resolved"; runId?: string; limit?: number } = {}): Promise<InterruptRecord[]> {
    return history.listInterrupts(this.client, this.keys, filter);
  }

  listDeadlines(): Promise<Deadline[]> {
    return history.listDeadlines(this.client, this.keys, this.writable ? () => this.w.write("indexDeadlines", this.w.args()) : undefined);
  }

  // ---------------------------------------------------------------- commands

  submitCommand(command: CommandRecord, event: NewEvent): Promise<CommitResult> {
    return commands.submitCommand(this.w, command, event);
  }

  answerCommand(answer: Pick<CommandRecord, "id" | "status" | "result" | "answeredAt">, event: NewEvent): Promise<CommitResult> {
    return commands.answerCommand(this.w, answer, event);
  }

  async getCommand(id: string): Promise<CommandRecord | undefined> {
    return (await commands.commandsByIds(this.client, this.keys, [id]))[0];
  }

  listCommands(filter: { runId?: string; status?: CommandRecord["status"]; limit?: number } = {}): Promise<CommandRecord[]> {
    return commands.listCommands(this.client, this.keys, filter);
  }

  // ---------------------------------------------------------------- events

  readEvents(query: EventQuery = {}): Promise<EventRecord[]> {
    return queries.readEvents(this.client, this.keys, query);
  }

  async lastEventSeq(): Promise<number> {
    return Number((await this.client.get(this.keys.global("seq"))) ?? 0);
  }

  subscribe(options: SubscribeOptions = {}): AsyncIterable<EventRecord> {
    return subscribeEvents(this, this.tail, () => this.closed, options);
  }

  // ---------------------------------------------------------------- artifacts, storage, workers

  async putArtifact(runId: string, data: Uint8Array, mediaType: string): Promise<ArtifactRef> {
    const ref = artifactRef(data, mediaType);
    const reply = await this.w.write("putArtifact", this.w.args().add(runId, ref.sha256, mediaType, data.byteLength, Buffer.from(data)));
    if (reply[0] !== "ok") throw refusal(reply);
    return ref;
  }

  async getArtifact(sha256: string): Promise<{ data: Uint8Array; mediaType: string } | undefined> {
    const [data, mediaType] = await this.client.hmgetBuffer(this.keys.artifact(sha256), "data", "mediaType");
    return data && mediaType ? { data: new Uint8Array(data), mediaType: mediaType.toString() } : undefined;
  }

  deleteRun(runId: string): Promise<string[]> {
    return deleteRun(this.w, runId);
  }

  async runStorage(runId: string): Promise<RunStorage> {
    const [id, checkpoints, events, artifacts] = await this.client.hmget(this.keys.run(runId), "id", "_cpBytes", "_evBytes", "_artBytes");
    if (id === null) throw new NotFoundError("run", runId);
    const sizes = { checkpoints: Number(checkpoints ?? 0), events: Number(events ?? 0), artifacts: Number(artifacts ?? 0) };
    return { ...sizes, total: sizes.checkpoints + sizes.events + sizes.artifacts };
  }

  async room(): Promise<StoreRoom | undefined> {
    const memory = await readMemory(this.client);
    this.w.eviction?.saw(memory);
    return memoryRoom(memory, this.description);
  }

  async putWorker(record: WorkerRecord): Promise<WorkerRecord | undefined> {
    // The script stamps the server's time over the lastSeen written first.
    const { lastSeen: _lastSeen, ...rest } = record;
    const reply = await this.w.write("putWorker", this.w.args().add(record.id, JSON.stringify({ lastSeen: 0, ...rest }), WORKER_RECORDS_KEPT_MS));
    const json = reply[1] as string | null;
    return json === null ? undefined : (JSON.parse(json) as WorkerRecord);
  }

  async listWorkers(): Promise<WorkerRecord[]> {
    const ids = await this.client.zrange(this.keys.global("workers-seen"), 0, -1);
    if (ids.length === 0) return [];
    const jsons = await this.client.hmget(this.keys.global("workers"), ...ids);
    const records = jsons.flatMap((json) => (json === null ? [] : [JSON.parse(json) as WorkerRecord]));
    return records.sort((a, b) => b.lastSeen - a.lastSeen || (a.id < b.id ? -1 : 1));
  }

  // ---------------------------------------------------------------- schedules

  putSchedule(record: ScheduleRecord, expectRevision: number | null): Promise<ScheduleRecord> {
    return schedules.putSchedule(this.w, record, expectRevision);
  }

  getSchedule(id: string): Promise<ScheduleRecord | undefined> {
    return schedules.getSchedule(this.client, this.keys, id);
  }

  listSchedules(): Promise<ScheduleRecord[]> {
    return schedules.listSchedules(this.client, this.keys);
  }

  deleteSchedule(id: string): Promise<boolean> {
    return schedules.deleteSchedule(this.w, id);
  }

  advanceSchedule(id: string, expectNextAt: number, advance: ScheduleAdvance): Promise<boolean> {
    return schedules.advanceSchedule(this.w, id, expectNextAt, advance);
  }

  /** The server's clock, which its scripts judge leases and timers by. */
  async clock(): Promise<number> {
    const [seconds, micros] = await this.client.time();
    return Number(seconds) * 1000 + Math.floor(Number(micros) / 1000);
  }

  /** Closes at once even when the server has gone away (commands waiting for it are failed). */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    const tail = this.tail.close();
    if (this.client.status === "ready") {
      await Promise.race([this.client.quit().catch(() => undefined), new Promise((resolve) => setTimeout(resolve, 1_000).unref())]);
    }
    dropClient(this.client);
    await tail;
  }
}
