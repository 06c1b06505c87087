import { createHash } from "node:crypto";
import type { Redis } from "ioredis";
import { CLAIM, RENEW } from "./claim.js";
import { COMMIT } from "./commit.js";
import { INDEX_DEADLINES } from "./deadlines.js";
import { DELETE_RUN, PURGE_RUN } from "./delete-run.js";
import { LUA_LIB } from "./lib.js";
import { ANSWER_COMMAND, CREATE_RUN, PUT_ARTIFACT, PUT_WORKER, SUBMIT_COMMAND } from "./records.js";
import { ADVANCE_SCHEDULE, DELETE_SCHEDULE, PUT_SCHEDULE } from "./schedules.js";

const BODIES = {
  commit: COMMIT,
  claim: CLAIM,
  renew: RENEW,
  createRun: CREATE_RUN,
  submitCommand: SUBMIT_COMMAND,
  answerCommand: ANSWER_COMMAND,
  putArtifact: PUT_ARTIFACT,
  deleteRun: DELETE_RUN,
  purgeRun: PURGE_RUN,
  putWorker: PUT_WORKER,
  putSchedule: PUT_SCHEDULE,
  advanceSchedule: ADVANCE_SCHEDULE,
  deleteSchedule: DELETE_SCHEDULE,
  indexDeadlines: INDEX_DEADLINES,
} as const;

export type ScriptName = keyof typeof BODIES;

/** A script's reply: its status word first, then what that status carries. */
export type ScriptReply = [status: string, ...rest: unknown[]];

type Arg = string | number | Buffer;

/** The arguments of one script call, in the layout the `arg*` helpers of `LUA_LIB` read. */
export class ScriptArgs {
  readonly values: Arg[];

  constructor(prefix: string, retention: number) {
    this.values = [prefix, retention];
  }

  add(...values: Arg[]): this {
    this.values.push(...values);
    return this;
  }

  /** A list; `undefined` is sent as absent, which the script tells apart from empty. */
  strings(values: readonly string[] | undefined): this {
    if (values === undefined) return this.add(-1);
    return this.add(values.length, ...values);
  }

  tuples<T>(items: readonly T[], row: (item: T) => Arg[]): this {
    this.add(items.length);
    for (const item of items) this.add(...row(item));
    return this;
  }

  /** An optional value that may also be null. */
  optional(value: string | null | undefined): this {
    if (value === undefined) return this.add("-");
    if (value === null) return this.add("n");
    return this.add("v", value);
  }
}

/**
 * Every write first checks that the store is still there: a server restarted without its data (or
 * flushed) has lost its runs, and writing on would start a new store that knows none of them.
 */
const STORE_THERE = `if redis.call('EXISTS', K.g('schema')) == 0 then return {'gone'} end`;

const sources = Object.fromEntries(Object.entries(BODIES).map(([name, body]) => [name, `${LUA_LIB}\n${STORE_THERE}\n${body}`])) as Record<ScriptName, string>;
const digests = Object.fromEntries(
  Object.entries(sources).map(([name, source]) => [name, createHash("sha1").update(source).digest("hex")]),
) as Record<ScriptName, string>;

/** Loads every script into the server's cache (once per connection start). */
export async function loadScripts(client: Redis): Promise<void> {
  await Promise.all(Object.values(sources).map((source) => client.script("LOAD", source)));
}

/**
 * Calls a script with EVALSHA. A server that forgot its scripts (it restarted) gets the source
 * again, once, with EVAL, which also caches it.
 */
export async function callScript(client: Redis, name: ScriptName, args: ScriptArgs): Promise<ScriptReply> {
  try {
    return (await client.evalsha(digests[name], 0, ...args.values)) as ScriptReply;
  } catch (error) {
    if (!(error instanceof Error) || !error.message.startsWith("NOSCRIPT")) throw error;
    return (await client.eval(sources[name], 0, ...args.values)) as ScriptReply;
  }
}
