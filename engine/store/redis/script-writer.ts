import type { Redis } from "ioredis";
import { StoreError } from "../../errors.js";
import type { NewEvent } from "../records.js";
import type { Commit, CommitResult } from "../store.js";
import type { RedisTarget } from "./connection.js";
import type { RedisKeys } from "./keys.js";
import { ScriptArgs, callScript, type ScriptName, type ScriptReply } from "./lua/scripts.js";
import type { EvictionWatch } from "./memory.js";
import { numbered, refusal } from "./replies.js";
import type { ServerFit } from "./server-checks.js";

/**
 * How the Redis store writes: every write is one Lua script, refused while the server evicts
 * keys, and with `durability: "os"` on Redis 7.2+ awaited until it is fsynced.
 */
export class ScriptWriter {
  private readonly waitForFsync: boolean;
  readonly eviction: EvictionWatch | undefined;

  constructor(
    readonly client: Redis,
    readonly keys: RedisKeys,
    private readonly target: RedisTarget,
    fit: ServerFit,
  ) {
    this.waitForFsync = fit.waitForFsync;
    this.eviction = fit.eviction;
  }

  /** A script's arguments, after the key prefix and the event retention every script reads. */
  args(): ScriptArgs {
    return new ScriptArgs(this.target.prefix, this.target.eventRetention);
  }

  /** Runs a write script; with `durability: "os"` on Redis 7.2+, waits until it is fsynced. */
  async write(name: ScriptName, args: ScriptArgs): Promise<ScriptReply> {
    this.eviction?.check();
    const reply = await callScript(this.client, name, args);
    if (reply[0] === "gone") {
      throw new StoreError(
        `the pitwall store at ${this.target.description} is gone (its keys were deleted: the server restarted without its data, or was flushed); nothing was written: restore it, or start over on a new store`,
        { gone: true },
      );
    }
    await this.fsync();
    return reply;
  }

  async fsync(): Promise<void> {
    if (this.waitForFsync) await this.client.call("WAITAOF", "1", "0", "0");
  }

  /** The events a write script committed, numbered; its refusal as a typed error. */
  result(reply: ScriptReply, events: readonly NewEvent[], commit?: Commit): CommitResult {
    if (reply[0] === "duplicate") return { events: [] };
    if (reply[0] !== "ok") throw refusal(reply, commit);
    return { events: numbered(events, reply[1]) };
  }
}
