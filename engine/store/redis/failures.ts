import type { Redis } from "ioredis";
import { StoreError, errorMessage, isPitwallError } from "../../errors.js";
import type { RedisTarget } from "./connection.js";
import { outOfMemory, readMemory } from "./memory.js";
import { wentSilent } from "./silence.js";
import { writersOwn } from "../rules.js";
import type { Store } from "../store.js";

/**
 * Whether an error says the connection is down (the server stopped or unreachable), which may
 * pass: ioredis's own wording for it is "Reached the max retries per request limit...".
 */
export function connectionDown(error: unknown): boolean {
  return /max retries per request|Connection is closed|ECONNREFUSED|ECONNRESET|EPIPE|EHOSTUNREACH|ENETUNREACH|ENOTFOUND|EAI_AGAIN/.test(errorMessage(error));
}

/**
 * What a server that did not answer in time may be, connecting or to a command of an open store:
 * stopped (SIGSTOP) or frozen, or cut off by a network that drops its packets — a client cannot
 * tell them apart. (A TLS connection adds a plaintext port: see `connectHint`.)
 */
export const SILENCE_HINT = " (is the server stopped or frozen, or the network dropping packets?)";

/** Who and where, for the messages of a failed command. */
export interface FailureContext {
  client: Redis;
  /** The store's URL without its password. */
  description: string;
  /** How long a command waits for its reply (`RedisStoreOptions.commandTimeoutMs`). */
  commandTimeoutMs: number;
  /** The ACL user the store connects as (`default` without one in the URL). */
  user: string;
  prefix: string;
}

export function failureContext(client: Redis, target: RedisTarget): FailureContext {
  return { client, description: target.description, commandTimeoutMs: target.commandTimeoutMs, user: target.options.username ?? "default", prefix: target.prefix };
}

/**
 * What Redis's reply to a command says, without a script's internals: Redis 7 ends an error
 * raised in a script with `script: <sha>, on @user_script:52.`, Redis 6 starts it with
 * `ERR Error running script (call to f_<sha>): @user_script:52: `. A failed MULTI says only
 * EXECABORT; the command that failed in it says why.
 */
export function redisMessage(error: unknown): string {
  const first = (error as { previousErrors?: unknown[] } | null)?.previousErrors?.[0] ?? error;
  return errorMessage(first)
    .replace(/^ERR Error running script \(call to f_[0-9a-f]+\): (@user_script:\s*\d+:\s*)+-?/, "")
    .replace(/\s*script: [0-9a-f]+, on @user_script:\d+\.?$/, "");
}

/** A Redis error as the one line a person reads, or undefined when it is none that pitwall names. */
export async function knownFailure(error: unknown, at: FailureContext): Promise<StoreError | undefined> {
  const message = redisMessage(error);
  if (/^OOM\b/.test(message)) return outOfMemory(at.description, await readMemory(at.client).catch(() => undefined), error);
  if (/^NOPERM\b/.test(message)) return noPermission(message, at, error);
  return undefined;
}

/**
 * A failed command of an open store as one line naming the store: what ioredis says when the
 * server is gone ("Reached the max retries per request limit...") is marked transient, as is a
 * command that timed out or that Redis refused for now (loading, a replica, a busy script).
 */
export async function commandFailure(error: unknown, at: FailureContext & { closed: boolean }): Promise<Error> {
  if (isPitwallError(error) || writersOwn(error)) return error as Error;
  if (at.closed) return new StoreError(`store ${at.description} is closed`, { cause: error });
  const known = await knownFailure(error, at);
  if (known) return known;
  // A command that timed out while the client reconnects met a stopped server, not a frozen one,
  // unless the connection was given up because nothing came back (silence.ts).
  if (connectionDown(error) || (at.client.status !== "ready" && !wentSilent(at.client))) {
    return new StoreError(`Redis at ${at.description} cannot be reached: the connection is down (is the server running?)`, { cause: error, transient: true });
  }
  const message = redisMessage(error);
  // The ready check of a connection made again fails the commands queued for it as it times out.
  const what = /^(Ready check failed: )?Command timed out$/.test(message) ? `did not answer within ${at.commandTimeoutMs / 1000} s${SILENCE_HINT}` : `refused a command: ${message}`;
  return new StoreError(`Redis at ${at.description} ${what}`, { cause: error, transient: true });
}

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
  "listDeadlines",
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

/** Makes what Redis or ioredis says of a failed command of the store's one line naming the store (`commandFailure`). */
export function reportFailures(store: Store, at: () => FailureContext & { closed: boolean }): void {
  for (const name of ANSWERING) {
    const method = store[name] as (...args: unknown[]) => Promise<unknown>;
    (store as unknown as Record<string, unknown>)[name] = (...args: unknown[]) =>
      method.apply(store, args).catch(async (error: unknown) => {
        throw await commandFailure(error, at());
      });
  }
}

/** `NOPERM this user has no permissions to run the 'info' command` (or to access one of the keys...). */
function noPermission(message: string, at: FailureContext, cause: unknown): StoreError {
  const see = "(see README: Redis permissions)";
  const command = /run the '([^']+)' command/.exec(message)?.[1];
  const who = `Redis user "${at.user}" at ${at.description}`;
  if (command !== undefined) return new StoreError(`${who} lacks permission for ${command.toUpperCase()}: grant +${command} ${see}`, { cause });
  if (/\bkeys?\b/.test(message)) return new StoreError(`${who} may not use the keys under "${at.prefix}": grant ~${at.prefix}* ${see}`, { cause });
  return new StoreError(`${who} lacks a permission: ${message} ${see}`, { cause });
}

/**
 * ioredis prints some warnings with console.warn, and has no option to keep them quiet: that its
 * ready check could not run INFO (pitwall then says which permission is missing), and that a
 * password was given to a server without one (pitwall says so once, in its own words). Only
 * those exact lines are held back; every other console.warn goes through.
 */
const IOREDIS_WARNINGS = [/^Skipping the ready check because INFO command fails/, /^\[WARN\] (Redis server|This Redis server's `default` user) does not require a password/];

let quiet = false;

export function quietIoredis(): void {
  if (quiet) return;
  quiet = true;
  const warn = console.warn;
  console.warn = (...args: unknown[]) => {
    if (typeof args[0] === "string" && IOREDIS_WARNINGS.some((line) => line.test(args[0] as string))) return;
    warn.apply(console, args);
  };
}
