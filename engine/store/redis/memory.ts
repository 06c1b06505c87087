import type { Redis } from "ioredis";
import { StoreError } from "../../errors.js";
import type { StoreRoom } from "../records.js";
import { MiB, formatBytes, storeRoom } from "../rules.js";

/** What `INFO memory` says of the server's memory limit (INFO needs no CONFIG permission). */
export interface ServerMemory {
  /** `maxmemory`; 0 is no limit. */
  limit: number;
  /** The memory counted against the limit: `used_memory` less the buffers Redis leaves out of it. */
  used: number;
  /** `maxmemory-policy`. */
  policy: string;
}

export async function readMemory(client: Redis): Promise<ServerMemory> {
  const info = await client.info("memory");
  const number = (name: string) => Number(new RegExp(`^${name}:(\\d+)`, "m").exec(info)?.[1] ?? 0);
  return {
    limit: number("maxmemory"),
    used: number("used_memory") - number("mem_not_counted_for_evict"),
    policy: /^maxmemory_policy:(\S+)/m.exec(info)?.[1] ?? "noeviction",
  };
}

/**
 * Whether the policy may delete pitwall's records to make room. The `volatile-*` policies evict
 * only keys with a time to live, and pitwall's records have none (only a claim's resend marker
 * does, which a claim can do without), so at the limit they refuse writes as `noeviction` does.
 */
function evicts(policy: string): boolean {
  return policy.startsWith("allkeys-");
}

function limitText(memory: ServerMemory): string {
  return `maxmemory ${formatBytes(memory.limit)}, policy ${memory.policy}`;
}

/**
 * Why pitwall must not write to this server, if it must not: it evicts keys at its memory limit,
 * so runs would lose records silently (a run "succeeded" with no tasks, no events, no checkpoints).
 */
export function evictionRefusal(memory: ServerMemory, description: string): StoreError | undefined {
  if (!evicts(memory.policy) || memory.limit === 0) return undefined;
  return new StoreError(
    `Redis at ${description} deletes keys when it is full (maxmemory-policy ${memory.policy}, maxmemory ${formatBytes(memory.limit)}), which would lose runs' records silently: set maxmemory-policy noeviction; pitwall writes nothing to it until then`,
  );
}

/** What a reader, or any process of a server that has no limit yet, is told of an evicting policy. */
export function evictionWarning(memory: ServerMemory, description: string): string | undefined {
  if (!evicts(memory.policy)) return undefined;
  if (memory.limit === 0) {
    return `Redis at ${description} has maxmemory-policy ${memory.policy}: it evicts nothing while it has no memory limit (maxmemory 0), but with one it would delete runs' records silently; set maxmemory-policy noeviction`;
  }
  return `Redis at ${description} deletes keys when it is full (maxmemory-policy ${memory.policy}, maxmemory ${formatBytes(memory.limit)}): runs' records may be missing; set maxmemory-policy noeviction`;
}

/** The one line for a write refused at the memory limit (Redis's own words name a script's internals). */
export function outOfMemory(description: string, memory: ServerMemory | undefined, cause: unknown): StoreError {
  return new StoreError(
    `Redis at ${description} is out of memory${memory && memory.limit > 0 ? ` (${limitText(memory)})` : ""}: delete old runs (pitwall prune) or raise maxmemory`,
    // It passes once room is made: workers wait and commit then.
    { cause, transient: true },
  );
}

/**
 * The room under the server's memory limit; undefined without one (`maxmemory 0`). Full is at the
 * limit, where a write is refused; low is under 5% of it (at least 1 MiB) left.
 */
export function memoryRoom(memory: ServerMemory, description: string): StoreRoom | undefined {
  if (memory.limit === 0) return undefined;
  const room = storeRoom(memory.limit - memory.used, memory.limit, `the memory limit (maxmemory) of Redis at ${description}`, {
    full: 1,
    low: Math.max(MiB, memory.limit * 0.05),
  });
  return evicts(memory.policy) ? { ...room, evicting: memory.policy } : room;
}

/**
 * A writer's watch on the server's eviction policy, which an administrator may change under a
 * running worker: while it evicts, every write is refused (and the worker says so, and waits).
 * Read again in the background, at most every `everyMs`, when a write is asked for.
 */
export class EvictionWatch {
  private refusal: StoreError | undefined;
  private checkedAt = Date.now();
  private checking = false;

  constructor(
    private readonly client: Redis,
    private readonly description: string,
    private readonly everyMs: number,
  ) {}

  /** Throws while the server evicts keys. */
  check(): void {
    if (!this.checking && Date.now() - this.checkedAt >= this.everyMs) {
      this.checking = true;
      readMemory(this.client)
        .then((memory) => this.saw(memory), () => undefined)
        .finally(() => (this.checking = false));
    }
    if (this.refusal) throw this.refusal;
  }

  /** What the server said of its memory, read here or elsewhere (the room). */
  saw(memory: ServerMemory): void {
    this.checkedAt = Date.now();
    this.refusal = evictionRefusal(memory, this.description);
  }
}
