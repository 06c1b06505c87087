import { createHash } from "node:crypto";
import type { Redis } from "ioredis";
import { ConflictError, NotFoundError, StoreError, ValidationError } from "../../errors.js";
import { newId } from "../../ids.js";
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
  type StoreRoom,
  type TaskRecord,
  type WorkerRecord,
  type WorkflowRecord,
} from "../records.js";
import { WORKER_RECORDS_KEPT_MS, checkDeletion, checkOwnRecords } from "../rules.js";
import type { Claim, ClaimOptions, Commit, CommitResult, EventQuery, NewRun, RunFilter, Store, SubscribeOptions } from "../store.js";
import { withColon } from "../open.js";
import { connectRedis, parseRedisUrl, type RedisStoreOptions, type RedisTarget } from "./connection.js";
import { EventTail } from "./event-tail.js";
import { commandFailure, failureContext, knownFailure, redisMessage, type FailureContext } from "./failures.js";
import { memoryRoom, readMemory, type EvictionWatch } from "./memory.js";
import { RedisKeys } from "./keys.js";
import { ScriptArgs, callScript, loadScripts, type ScriptName, type ScriptReply } from "./lua/scripts.js";
import * as queries from "./queries.js";
import { checkLayout, checkServer, type ServerFit } from "./server-checks.js";
import { checkpointRow, commitArgs, numbered, refusal } from "./replies.js";
import { decodeRun, encodeRunFields, pairsToHash } from "./run-codec.js";

type Answer = Pick<CommandRecord, "id" | "status" | "result" | "answeredAt">;

/** Entries a deleted run's purge handles per script call: at most about 3 ms of the server's time, measured. */
const PURGE_BATCH = 1000;

/** The store's methods that talk to the server (subscribe retries on its own; close never fails). */
const ANSWERING = [
  "putWorkflow",
  "getWorkflow",
  "listWorkflows",
  "createRun",
  "getRun",
  "listRuns",
  "countRuns",
  "claimRun",
  "renewLease",
  "commit",
  "getCheckpoint",
  "listCheckpoints",
  "listCheckpointSummaries",
  "checkpointRows",
  "checkpointRowRange",
  "getTask",
  "listTasks",
  "getInterrupt",
  "listInterrupts",
  "submitCommand",
  "answerCommand",
  "getCommand",
  "listCommands",
  "readEvents",
  "lastEventSeq",
  "putArtifact",
  "getArtifact",
  "runStorage",
  "deleteRun",
  "room",
  "putWorker",
  "listWorkers",
] as const satisfies readonly (keyof Store)[];

/**
 * The Store contract on Redis, for many workers on many machines sharing one server. Every write
 * is one Lua script (atomic, preconditions checked inside), loaded once and called by EVALSHA;
 * runs are dispatched through stream consumer groups (see `lua/lib.ts`); live subscriptions use
 * blocking stream reads on a connection of their own.
 */
export class RedisStore implements Store {
  readonly description: string;
  private readonly keys: RedisKeys;
  private readonly tail: EventTail;
  private readonly failureAt: FailureContext;
  private readonly waitForFsync: boolean;
  private readonly eviction: EvictionWatch | undefined;
  private closed = false;

  private constructor(
    private readonly client: Redis,
    private readonly target: RedisTarget,
    fit: ServerFit,
  ) {
    this.waitForFsync = fit.waitForFsync;
    this.eviction = fit.eviction;
    this.description = target.description;
    this.keys = new RedisKeys(target.prefix);
    this.failureAt = failureContext(client, target);
    this.tail = new EventTail(() => connectRedis(target, "pitwall-tail", { timesOut: false }), this.keys.global("events"), () => this.lastEventSeq());
    // What Redis or ioredis says of a failed command becomes one line naming the store.
    for (const name of ANSWERING) {
      const method = this[name] as (...args: unknown[]) => Promise<unknown>;
      (this as unknown as Record<string, unknown>)[name] = (...args: unknown[]) =>
        method.apply(this, args).catch(async (error: unknown) => {
          throw await commandFailure(error, { ...this.failureAt, closed: this.closed });
        });
    }
  }

  /** Connects, checks the server and the key layout, and loads the scripts. */
  static async open(url: string, options: RedisStoreOptions = {}): Promise<RedisStore> {
    if (options.durability !== undefined && options.durability !== "process" && options.durability !== "os") {
      throw new ValidationError(`unknown durability ${JSON.stringify(options.durability)}: use "process" or "os"`);
    }
    const target = parseRedisUrl(url, options);
    const client = await connectRedis(target, "pitwall", { timesOut: true });
    try {
      const fit = await checkServer(client, target, options);
      await checkLayout(client, target, options);
      await loadScripts(client);
      return new RedisStore(client, target, fit);
    } catch (error) {
      const failure = error instanceof StoreError ? error : ((await knownFailure(error, failureContext(client, target))) ?? new StoreError(`Redis at ${withColon(target.description)} ${redisMessage(error)}`, { cause: error }));
      client.disconnect();
      throw failure;
    }
  }

  // ---------------------------------------------------------------- workflows

  async putWorkflow(record: WorkflowRecord): Promise<void> {
    this.eviction?.check();
    const { definition: _d, ...meta } = record;
    await this.client
      .multi()
      .hsetnx(this.keys.global("workflows"), record.version, JSON.stringify(record))
      .hsetnx(this.keys.global("workflow-list"), record.version, JSON.stringify(meta))
      .exec();
    await this.fsync();
  }

  async getWorkflow(version: string): Promise<WorkflowRecord | undefined> {
    return parse(await this.client.hget(this.keys.global("workflows"), version));
  }

  async listWorkflows(): Promise<Omit<WorkflowRecord, "definition">[]> {
    const list = (await this.client.hvals(this.keys.global("workflow-list"))).map((json) => JSON.parse(json) as Omit<WorkflowRecord, "definition">);
    return list.sort((a, b) => a.createdAt - b.createdAt || (a.version < b.version ? -1 : 1));
  }

  // ---------------------------------------------------------------- runs

  async createRun(init: NewRun): Promise<CommitResult> {
    const { set } = encodeRunFields(init.run);
    const reply = await this.write(
      "createRun",
      this.args()
        .add(init.run.id)
        .tuples(set, (pair) => pair)
        .tuples([init.checkpoint], checkpointRow)
        .strings(init.events.map((e) => JSON.stringify(e))),
    );
    if (reply[0] === "exists") throw new ConflictError(`run ${init.run.id} already exists`);
    return this.result(reply, init.events);
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

  async claimRun(options: ClaimOptions): Promise<Claim | undefined> {
    const reply = await this.write(
      "claim",
      this.args()
        .add(options.owner, options.leaseMs, newId("claim", 12), options.runId ?? "")
        .strings(options.versions)
        .strings(options.exclude ?? [])
        .add(options.takeOver === false ? "0" : "1"),
    );
    if (reply[0] === "none") return undefined;
    if (reply[0] !== "claimed") throw refusal(reply);
    const [, fence, recovered, hash, previous] = reply as [string, number, number, string[], string | null];
    const run = decodeRun(pairsToHash(hash))!;
    return { run, fence, recovered: recovered === 1, ...(recovered === 1 && previous ? { takenFrom: previous } : {}) };
  }

  async renewLease(runId: string, owner: string, fence: number, leaseMs: number): Promise<void> {
    const reply = await this.write("renew", this.args().add(runId, owner, fence, leaseMs));
    if (reply[0] !== "ok") throw refusal(reply, { id: "", runId, fence });
  }

  async commit(commit: Commit): Promise<CommitResult> {
    checkOwnRecords(commit);
    const reply = await this.write("commit", commitArgs(this.args(), commit));
    return this.result(reply, commit.events ?? [], commit);
  }

  // ---------------------------------------------------------------- checkpoints

  async getCheckpoint(id: string): Promise<CheckpointRecord | undefined> {
    // Checkpoint ids are `<runId>:<n>` (engine/ids.ts); the record says whether that holds.
    const at = id.lastIndexOf(":");
    const n = Number(id.slice(at + 1));
    if (at < 0 || !Number.isInteger(n) || n < 0) return undefined;
    const checkpoint = parse<CheckpointRecord>(await this.client.lindex(this.keys.runPart(id.slice(0, at), "checkpoints"), n));
    return checkpoint?.id === id ? checkpoint : undefined;
  }

  async listCheckpoints(runId: string, options: { limit?: number; afterN?: number } = {}): Promise<CheckpointRecord[]> {
    const start = options.afterN === undefined ? 0 : Math.max(0, options.afterN + 1);
    if (options.limit !== undefined && options.limit <= 0) return [];
    const stop = options.limit === undefined ? -1 : start + options.limit - 1;
    return (await this.client.lrange(this.keys.runPart(runId, "checkpoints"), start, stop)).map((json) => JSON.parse(json) as CheckpointRecord);
  }

  async listCheckpointSummaries(runId: string, options: { limit?: number; afterN?: number } = {}): Promise<CheckpointSummary[]> {
    return (await this.listCheckpoints(runId, options)).map(summarizeCheckpoint);
  }

  async checkpointRows(runId: string, ns: readonly number[]): Promise<ChainRow[]> {
    const wanted = ns.filter((n) => Number.isInteger(n) && n >= 0);
    const pipeline = this.client.pipeline();
    for (const n of wanted) pipeline.lindex(this.keys.runPart(runId, "checkpoints"), n);
    const replies = (await pipeline.exec()) ?? [];
    return replies.flatMap(([error, json]) => {
      if (error) throw error;
      return typeof json === "string" ? [JSON.parse(json) as CheckpointRecord] : [];
    });
  }

  async checkpointRowRange(runId: string, fromN: number, toN: number): Promise<ChainRow[]> {
    const start = Math.max(0, fromN + 1);
    if (toN < start) return [];
    return (await this.client.lrange(this.keys.runPart(runId, "checkpoints"), start, toN)).map((json) => JSON.parse(json) as CheckpointRecord);
  }

  // ---------------------------------------------------------------- tasks

  async getTask(id: string): Promise<TaskRecord | undefined> {
    const runId = await this.client.hget(this.keys.global("task-runs"), id);
    return runId === null ? undefined : parse(await this.client.hget(this.keys.runPart(runId, "tasks"), id));
  }

  async listTasks(runId: string, options: { step?: number } = {}): Promise<TaskRecord[]> {
    const tasksKey = this.keys.runPart(runId, "tasks");
    let jsons: (string | null)[];
    if (options.step === undefined) {
      jsons = await this.client.hvals(tasksKey);
    } else {
      const ids = await this.client.smembers(this.keys.stepTasks(runId, options.step));
      jsons = ids.length === 0 ? [] : await this.client.hmget(tasksKey, ...ids);
    }
    return jsons
      .flatMap((json) => (json === null ? [] : [JSON.parse(json) as TaskRecord]))
      .filter((t) => t.runId === runId && (options.step === undefined || t.step === options.step))
      .sort((a, b) => a.step - b.step || a.createdAt - b.createdAt || (a.id < b.id ? -1 : 1));
  }

  // ---------------------------------------------------------------- interrupts

  async getInterrupt(id: string): Promise<InterruptRecord | undefined> {
    return (await this.interruptsByIds([id]))[0];
  }

  async listInterrupts(filter: { status?: "pending" | "resolved"; runId?: string; limit?: number } = {}): Promise<InterruptRecord[]> {
    const keep = (i: InterruptRecord) => (filter.status === undefined || i.status === filter.status) && (filter.runId === undefined || i.runId === filter.runId);
    const limit = filter.limit ?? Infinity;
    if (filter.runId !== undefined) {
      const all = (await this.client.hvals(this.keys.runPart(filter.runId, "interrupts"))).map((json) => JSON.parse(json) as InterruptRecord);
      return all.filter(keep).sort((a, b) => a.createdAt - b.createdAt || (a.id < b.id ? -1 : 1)).slice(0, limit);
    }
    const index = this.keys.global(filter.status === "pending" ? "interrupts:pending" : "interrupts");
    return queries.scanOldestFirst(this.client, index, limit, (ids) => this.interruptsByIds(ids), keep);
  }

  private async interruptsByIds(ids: string[]): Promise<InterruptRecord[]> {
    const rows = await queries.recordsByIds(this.client, this.keys, "interrupt-runs", ["interrupts"], ids);
    return rows.map(([json]) => JSON.parse(json!) as InterruptRecord);
  }

  // ---------------------------------------------------------------- commands

  async submitCommand(command: CommandRecord, event: NewEvent): Promise<CommitResult> {
    const reply = await this.write(
      "submitCommand",
      this.args().add(command.id, command.runId, command.createdAt, JSON.stringify(command), JSON.stringify(event)),
    );
    if (reply[0] === "exists") throw new ConflictError(`command ${command.id} already exists`);
    return this.result(reply, [event]);
  }

  async answerCommand(answer: Answer, event: NewEvent): Promise<CommitResult> {
    const reply = await this.write("answerCommand", this.args().add(answer.id, answer.status, JSON.stringify(answer), JSON.stringify(event)));
    if (reply[0] === "answered") {
      throw new ConflictError(`command ${answer.id} was already ${(JSON.parse(String(reply[1])) as Answer).status}`);
    }
    return this.result(reply, [event]);
  }

  async getCommand(id: string): Promise<CommandRecord | undefined> {
    return (await this.commandsByIds([id]))[0];
  }

  async listCommands(filter: { runId?: string; status?: CommandRecord["status"]; limit?: number } = {}): Promise<CommandRecord[]> {
    const keep = (c: CommandRecord) => (filter.status === undefined || c.status === filter.status) && (filter.runId === undefined || c.runId === filter.runId);
    const limit = filter.limit ?? Infinity;
    if (filter.runId !== undefined) {
      const [commands, answers] = await Promise.all([
        this.client.hgetall(this.keys.runPart(filter.runId, "commands")),
        this.client.hgetall(this.keys.runPart(filter.runId, "answers")),
      ]);
      const all = Object.entries(commands).map(([id, json]) => withAnswer(json, answers[id] ?? null));
      return all.filter(keep).sort((a, b) => a.createdAt - b.createdAt || (a.id < b.id ? -1 : 1)).slice(0, limit);
    }
    const index = this.keys.global(filter.status === "pending" ? "commands:pending" : "commands");
    return queries.scanOldestFirst(this.client, index, limit, (ids) => this.commandsByIds(ids), keep);
  }

  private async commandsByIds(ids: string[]): Promise<CommandRecord[]> {
    const rows = await queries.recordsByIds(this.client, this.keys, "command-runs", ["commands", "answers"], ids);
    return rows.map(([json, answer]) => withAnswer(json!, answer ?? null));
  }

  // ---------------------------------------------------------------- events

  readEvents(query: EventQuery = {}): Promise<EventRecord[]> {
    return queries.readEvents(this.client, this.keys, query);
  }

  async lastEventSeq(): Promise<number> {
    return Number((await this.client.get(this.keys.global("seq"))) ?? 0);
  }

  /**
   * Past events after `after`, then new ones as they are committed. The tail wakes this
   * subscription when the store-wide sequence passes what it has seen; a lost connection is
   * retried (commands wait for the reconnect), so a Redis restart does not end a subscription.
   */
  async *subscribe(options: SubscribeOptions = {}): AsyncIterable<EventRecord> {
    const { runId, signal, types } = options;
    let after = options.after;
    let failures = 0;
    while (!signal?.aborted && !this.closed) {
      try {
        after ??= await this.lastEventSeq();
        const mark = runId === undefined && !types ? after : await this.lastEventSeq();
        const batch = await this.readEvents({ after, ...(runId !== undefined ? { runId } : {}), ...(types ? { types } : {}), limit: 500 });
        failures = 0;
        for (const event of batch) {
          if (signal?.aborted) return;
          after = event.seq;
          yield event;
        }
        if (batch.length === 0) await this.tail.waitPast(mark, signal);
      } catch (error) {
        if (this.closed || signal?.aborted) return;
        if (error instanceof StoreError) throw error;
        await pause(Math.min(2_000, 100 * 2 ** failures++), signal);
      }
    }
  }

  // ---------------------------------------------------------------- artifacts and storage

  async putArtifact(runId: string, data: Uint8Array, mediaType: string): Promise<ArtifactRef> {
    const sha256 = createHash("sha256").update(data).digest("hex");
    const reply = await this.write("putArtifact", this.args().add(runId, sha256, mediaType, data.byteLength, Buffer.from(data)));
    if (reply[0] !== "ok") throw refusal(reply);
    return { sha256, size: data.byteLength, mediaType };
  }

  async getArtifact(sha256: string): Promise<{ data: Uint8Array; mediaType: string } | undefined> {
    const [data, mediaType] = await this.client.hmgetBuffer(this.keys.artifact(sha256), "data", "mediaType");
    return data && mediaType ? { data: new Uint8Array(data), mediaType: mediaType.toString() } : undefined;
  }

  async deleteRun(runId: string): Promise<string[]> {
    const reply = await this.write("deleteRun", this.args().add(runId));
    const [status, ...rest] = reply;
    if (status === "ok") {
      // Also the purges of deletions whose process stopped before they were done.
      const ids = [...new Set([...(rest[0] as string[]), ...(await this.client.hkeys(this.keys.global("purging")))])];
      for (const id of ids) while ((await this.write("purgeRun", this.args().add(id, PURGE_BATCH)))[0] === "more");
      return rest[0] as string[];
    }
    if (status === "child") checkDeletion({ id: runId, parentRunId: String(rest[0]) }, []);
    if (status === "live") checkDeletion({ id: runId, parentRunId: null }, [{ id: String(rest[0]), status: rest[1] as RunStatus }]);
    throw refusal(reply);
  }

  async runStorage(runId: string): Promise<RunStorage> {
    const [id, checkpoints, events, artifacts] = await this.client.hmget(this.keys.run(runId), "id", "_cpBytes", "_evBytes", "_artBytes");
    if (id === null) throw new NotFoundError("run", runId);
    const sizes = { checkpoints: Number(checkpoints ?? 0), events: Number(events ?? 0), artifacts: Number(artifacts ?? 0) };
    return { ...sizes, total: sizes.checkpoints + sizes.events + sizes.artifacts };
  }

  async room(): Promise<StoreRoom | undefined> {
    const memory = await readMemory(this.client);
    this.eviction?.saw(memory);
    return memoryRoom(memory, this.description);
  }

  async putWorker(record: WorkerRecord): Promise<WorkerRecord | undefined> {
    // The script stamps the server's time over the lastSeen written first.
    const { lastSeen: _lastSeen, ...rest } = record;
    const reply = await this.write("putWorker", this.args().add(record.id, JSON.stringify({ lastSeen: 0, ...rest }), WORKER_RECORDS_KEPT_MS));
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

  /** Closes at once even when the server has gone away (commands waiting for it are failed). */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    const tail = this.tail.close();
    if (this.client.status === "ready") {
      await Promise.race([this.client.quit().catch(() => undefined), new Promise((resolve) => setTimeout(resolve, 1_000).unref())]);
    }
    this.client.disconnect();
    await tail;
  }

  // ---------------------------------------------------------------- plumbing

  private args(): ScriptArgs {
    return new ScriptArgs(this.target.prefix, this.target.eventRetention);
  }

  /** Runs a write script; with `durability: "os"` on Redis 7.2+, waits until it is fsynced. */
  private async write(name: ScriptName, args: ScriptArgs): Promise<ScriptReply> {
    this.eviction?.check();
    const reply = await callScript(this.client, name, args);
    if (reply[0] === "gone") {
      throw new StoreError(
        `the pitwall store at ${this.description} is gone (its keys were deleted: the server restarted without its data, or was flushed); nothing was written: restore it, or start over on a new store`,
        { gone: true },
      );
    }
    await this.fsync();
    return reply;
  }

  private async fsync(): Promise<void> {
    if (this.waitForFsync) await this.client.call("WAITAOF", "1", "0", "0");
  }

  private result(reply: ScriptReply, events: readonly NewEvent[], commit?: Commit): CommitResult {
    if (reply[0] === "duplicate") return { events: [] };
    if (reply[0] !== "ok") throw refusal(reply, commit);
    return { events: numbered(events, reply[1]) };
  }
}

function parse<T>(json: string | null): T | undefined {
  return json === null ? undefined : (JSON.parse(json) as T);
}

function withAnswer(json: string, answer: string | null): CommandRecord {
  return { ...(JSON.parse(json) as CommandRecord), ...(answer === null ? {} : (JSON.parse(answer) as Answer)) };
}

function pause(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const timer = setTimeout(done, ms);
    function done() {
      clearTimeout(timer);
      signal?.removeEventListener("abort", done);
      resolve();
    }
    signal?.addEventListener("abort", done, { once: true });
  });
}
