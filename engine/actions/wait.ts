import { RECEIVED_ROUTE, TIMEOUT_ROUTE, routesOnSignal, type WaitNodeDefinition } from "../graph/definition.js";
import type { NodeFunction } from "../graph/model.js";
import type { InternalContext } from "../runtime/context.js";

/**
 * A durable timer, or a wait for a signal (`ctx.receive`: its data written to `output`; with
 * `seconds`, at most that long, then nothing written; with routes, `received` or `timeout` chosen): the run is parked with a wake time and no process holds it; a worker claims
 * it again when the time has come, even after every process was restarted in between. The time
 * is the store's (store-clock.ts), which hands the run back when it is due.
 */
export function waitNode(def: WaitNodeDefinition): NodeFunction {
  const signal = def.signal;
  if (signal !== undefined) {
    const timeout = def.seconds;
    const routed = routesOnSignal(def);
    return async (_state, ctx) => {
      // Given up after `seconds`, it writes nothing and goes on: by its `timeout` route when it has routes.
      const got = await (ctx as InternalContext).awaitSignal(signal, timeout !== undefined ? { timeoutSeconds: timeout } : {});
      const update = def.output !== undefined && !got.timedOut && got.data !== undefined ? { [def.output]: got.data } : {};
      return routed ? { route: got.timedOut ? TIMEOUT_ROUTE : RECEIVED_ROUTE, update } : update;
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
