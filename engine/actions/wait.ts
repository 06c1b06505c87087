import type { WaitNodeDefinition } from "../graph/definition.js";
import type { NodeFunction } from "../graph/model.js";
import type { InternalContext } from "../runtime/context.js";

/**
 * A durable timer: the run is parked with a wake time and no process holds it; a worker claims
 * it again when the time has come, even after every process was restarted in between.
 */
export function waitNode(def: WaitNodeDefinition): NodeFunction {
  return (_state, ctx) => {
    const internal = ctx as InternalContext;
    const until = def.until !== undefined ? Date.parse(def.until) : internal.task.createdAt + (def.seconds ?? 0) * 1000;
    if (Date.now() >= until) return {};
    return internal.park({ kind: "time", until });
  };
}
