import type { Redis } from "ioredis";
import { StoreError, errorMessage } from "../../errors.js";
import type { RedisStoreOptions, RedisTarget } from "./connection.js";
import { RedisKeys } from "./keys.js";
import { EvictionWatch, evictionRefusal, evictionWarning, readMemory } from "./memory.js";

/** What a store keeps of the checks made on its server when it opens. */
export interface ServerFit {
  /** Each write waits for WAITAOF (durability "os" on Redis 7.2+). */
  waitForFsync: boolean;
  /** A writer's watch on the eviction policy; none for a reader, which writes nothing. */
  eviction: EvictionWatch | undefined;
}

/**
 * Checks that the server can hold a pitwall store as asked, or throws saying why not: its
 * version, its eviction policy (for a writer) and, for durability "os", its persistence. What
 * is worth saying but no reason to refuse goes to `onWarning`.
 */
export async function checkServer(client: Redis, target: RedisTarget, options: RedisStoreOptions): Promise<ServerFit> {
  const [major, minor] = await serverVersion(client);
  if (major < 6 || (major === 6 && minor < 2)) {
    throw new StoreError(`Redis at ${target.description} is ${major}.${minor}; pitwall needs Redis 6.2 or later`);
  }
  const writes = !options.readOnly;
  const memory = await readMemory(client);
  const refusal = writes ? evictionRefusal(memory, target.description) : undefined;
  if (refusal) throw refusal;
  for (const warning of [evictionWarning(memory, target.description), await needlessPassword(client, target)]) {
    if (warning) options.onWarning?.(warning);
  }
  const fsync = options.durability === "os" ? await osDurability(client, target.description) : undefined;
  return {
    waitForFsync: fsync === "waitaof",
    eviction: writes ? new EvictionWatch(client, target.description, options.policyCheckMs ?? 10_000) : undefined,
  };
}

/** The layout version of the keys; a store written by a newer layout is refused. */
const SCHEMA = "1";

/**
 * Finds the store's layout marker, or sets it on a new store (unless reading, or told not to
 * create one), and refuses a layout this pitwall does not read.
 */
export async function checkLayout(client: Redis, target: RedisTarget, options: RedisStoreOptions): Promise<void> {
  const schemaKey = new RedisKeys(target.prefix).global("schema");
  let schema = await client.get(schemaKey);
  // Only a new store is marked: a full server refuses even a SET that would change nothing.
  if (schema === null && !options.readOnly && options.create !== false) {
    await client.set(schemaKey, SCHEMA, "NX");
    schema = await client.get(schemaKey);
  }
  if (schema === null && options.create === false) {
    throw new StoreError(`there is no pitwall store under prefix "${target.prefix}" at ${target.description} (a mistyped --store, prefix or database?); nothing was written`);
  }
  if (schema !== SCHEMA && !(options.readOnly && schema === null)) {
    throw new StoreError(`the keys under "${target.prefix}" at ${target.description} have layout ${schema}; this pitwall reads layout ${SCHEMA}`);
  }
}

/**
 * What to say of a password given to a server that asks for none (its default user has no
 * password), which ignores it: a mistake worth knowing of, said once when the store opens.
 */
async function needlessPassword(client: Redis, target: RedisTarget): Promise<string | undefined> {
  const { username, password } = target.options;
  if (!password) return undefined;
  try {
    await client.call("AUTH", ...(username ? [username, password] : [password]));
    return undefined;
  } catch (error) {
    if (!/no password is set|without any password configured/.test(errorMessage(error))) return undefined;
    return `Redis at ${target.description} asks for no password, so the one in the URL is ignored: remove it, or give the server one (requirepass, or ACL SETUSER)`;
  }
}

/** The server's version as [major, minor]. */
async function serverVersion(client: Redis): Promise<[number, number]> {
  const info = await client.info("server");
  const match = /redis_version:(\d+)\.(\d+)/.exec(info);
  return match ? [Number(match[1]), Number(match[2])] : [0, 0];
}

/**
 * How `durability: "os"` is kept on this server: by WAITAOF after each write (Redis 7.2+), or by
 * the server itself fsyncing every write (`appendfsync always`). Anything else cannot keep the
 * promise, and the store refuses to open rather than pretend.
 */
async function osDurability(client: Redis, description: string): Promise<"waitaof" | "server"> {
  const [major, minor] = await serverVersion(client);
  const persistence = await client.info("persistence");
  if (!/aof_enabled:1/.test(persistence)) {
    throw new StoreError(`Redis at ${description} has no append-only file (appendonly no): durability "os" needs appendonly yes`);
  }
  if (major > 7 || (major === 7 && minor >= 2)) return "waitaof";
  let fsync: string | undefined;
  try {
    const reply = (await client.config("GET", "appendfsync")) as string[];
    fsync = reply[1];
  } catch (error) {
    throw new StoreError(
      `Redis ${major}.${minor} at ${description} has no WAITAOF and does not let pitwall read appendfsync (${errorMessage(error)}): durability "os" cannot be verified`,
    );
  }
  if (fsync !== "always") {
    throw new StoreError(
      `Redis ${major}.${minor} at ${description} fsyncs its append-only file "${fsync}", not "always", and has no WAITAOF (Redis 7.2+): durability "os" cannot be kept; use "process" or set appendfsync always`,
    );
  }
  return "server";
}
