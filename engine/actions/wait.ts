import type { WaitNodeDefinition } from "../graph/definition.js";
import type { NodeFunction } from "../graph/model.js";
import type { InternalContext } from "../runtime/context.js";

/**
 * A durable timer, or a wait for a signal (`ctx.receive`: its data written to `output`): the run is parked with a wake time and no process holds it; a worker claims
 * it again when the time has come, even after every process was restarted in between. The time
 * is the store's (store-clock.ts), which hands the run back when it is due.
 */
export function waitNode(def: WaitNodeDefinition): NodeFunction {
  const signal = def.signal;
  if (signal !== undefined) {
    return async (_state, ctx) => {
      const data = await ctx.receive(signal);
      return def.output !== undefined ? { [def.output]: data } : {};
    };
  }
  return (_state, ctx) => {
    const internal = ctx as InternalContext;
    const clock = internal.clock;
    const until = def.until !== undefined ? Date.parse(def.until) : clock.fromLocal(internal.task.createdAt) + (def.seconds ?? 0) * 1000;
    if (clock.now() >= until) return {};
    return internal.park({ kind: "time", until });
  };
}
