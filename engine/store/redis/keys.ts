/**
 * Where everything lives in Redis. Every key starts with the store's prefix (default `pitwall:`).
 * A run's own keys share the hash tag `{runId}`, so that they would sit on one Cluster slot; the
 * store-wide keys (sequence counters, indexes, the global event stream, dispatch streams) do not.
 * The Lua scripts build the same names from the same two shapes (see `LUA_KEYS`).
 */

/** Keys that belong to one run, as `<prefix>run:{<id>}:<part>`. */
export type RunPart =
  | "checkpoints"
  | "tasks"
  | "answers"
  | "interrupts"
  | "pending"
  | "commands"
  | "events"
  | "artifacts"
  | "waiters";

export class RedisKeys {
  constructor(readonly prefix: string) {}

  /** The run's hash (its record, plus the store's bookkeeping fields starting with `_`). */
  run(id: string): string {
    return `${this.prefix}run:{${id}}`;
  }

  runPart(id: string, part: RunPart): string {
    return `${this.run(id)}:${part}`;
  }

  /** Ids of the run's tasks of one step. */
  stepTasks(id: string, step: number): string {
    return `${this.run(id)}:tasks:${step}`;
  }

  /** A store-wide key. */
  global(name: string): string {
    return `${this.prefix}${name}`;
  }

  runsByStatus(status: string): string {
    return this.global(`runs:status:${status}`);
  }

  runsByWorkflow(name: string): string {
    return this.global(`runs:workflow:${name}`);
  }

  runsByParent(parentRunId: string | null): string {
    return parentRunId === null ? this.global("runs:top") : this.global(`runs:children:{${parentRunId}}`);
  }

  /** A schedule's hash (lua/schedules.ts); the set `schedules` holds their ids. */
  schedule(id: string): string {
    return this.global(`schedule:${id}`);
  }

  artifact(sha256: string): string {
    return this.global(`artifact:${sha256}`);
  }
}

/**
 * The same layout for the scripts (`P` is the prefix, passed as ARGV[1]). Store-wide names used by
 * the scripts: seq, fence, events, runs, runs:status:*, runs:workflow:*, runs:running:* (a
 * workflow's running runs, built once runs:running-indexed is set), runs:top, runs:children:{*},
 * live, timers, offers:<version>, offer-versions, offer-seq, leases, takeover-cursor, claim-req:*,
 * claim-turn, fleet-seen, takeovers-held, task-runs, interrupt-runs, interrupts,
 * interrupts:pending, deadlines:runs and deadlines:interrupts (built once deadlines-indexed is set),
 * command-runs, commands, commands:pending, artifact:*, workers, workers-seen, schedules,
 * schedule:* (lua/schedules.ts).
 */
export const LUA_KEYS = `
local P = ARGV[1]
local K = {}
function K.run(id) return P .. 'run:{' .. id .. '}' end
function K.part(id, part) return K.run(id) .. ':' .. part end
function K.g(name) return P .. name end
`;
