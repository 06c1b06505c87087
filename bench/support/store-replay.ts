import { STORE_WRITES, openStore, type Store } from "./engine.js";
import { stopwatch, type Timing } from "./harness.js";

/** One store call as the engine made it: its method, a copy of its arguments, and the event-loop turn it was made in. */
export interface RecordedCall {
  method: string;
  args: unknown[];
  write: boolean;
  turn: number;
}

/**
 * `store` with every call recorded (arguments copied when made: the caller may change them after).
 * Calls are numbered by the turn of the event loop they were made in, as the SQLite store's group
 * commit gathers the writes of a turn into one transaction.
 */
export function recording(store: Store): { store: Store; calls: RecordedCall[]; stop(): void } {
  const calls: RecordedCall[] = [];
  const writes = new Set<PropertyKey>(STORE_WRITES);
  let turn = 0;
  let ticking = true;
  const tick = () => {
    turn++;
    if (ticking) setImmediate(tick);
  };
  setImmediate(tick);
  const proxy = new Proxy(store, {
    get(target, key, receiver) {
      const value = Reflect.get(target, key, receiver) as unknown;
      if (typeof value !== "function" || key === "subscribe" || key === "close") return value;
      return (...args: unknown[]) => {
        calls.push({ method: String(key), args: structuredClone(args), write: writes.has(key), turn });
        return (value as (...a: unknown[]) => unknown).apply(target, args);
      };
    },
  });
  return { store: proxy, calls, stop: () => (ticking = false) };
}

/**
 * Makes `calls` again, in order, on a fresh SQLite store at `file`: the writes of one recorded turn
 * issued together (one group transaction), the reads awaited where they were made. What it
 * measures is the store's own cost for the engine's calls, without the runtime around them.
 */
export async function replayOnSqlite(file: string, setup: readonly RecordedCall[], calls: readonly RecordedCall[]): Promise<Timing> {
  const store = await openStore(`sqlite:${file}`, { durability: "process" });
  try {
    await replay(store, setup);
    const stop = stopwatch();
    await replay(store, calls);
    return stop();
  } finally {
    await store.close();
  }
}

async function replay(store: Store, calls: readonly RecordedCall[]): Promise<void> {
  const methods = store as unknown as Record<string, (...args: unknown[]) => Promise<unknown>>;
  let pending: Promise<unknown>[] = [];
  let turn = calls[0]?.turn;
  for (const call of calls) {
    if (call.turn !== turn) {
      await Promise.all(pending);
      pending = [];
      turn = call.turn;
    }
    const result = methods[call.method]!(...call.args);
    if (call.write) pending.push(result);
    else await result;
  }
  await Promise.all(pending);
}
