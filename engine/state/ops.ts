import rfdc from "rfdc";
import type { ReducerName } from "./schema.js";

/**
 * A change to one state key, as stored in a checkpoint's delta. Reducers are turned into these
 * three operations when a step is committed, so reading a state back never needs user code:
 * a custom reducer's result is stored as a `set`.
 */
export type ChannelOp =
  | [key: string, op: "set", value: unknown]
  | [key: string, op: "append", items: unknown[]]
  | [key: string, op: "merge", patch: Record<string, unknown>]
  /** An operator's edit (or an upgrade's fit to a new schema) that leaves the key out. */
  | [key: string, op: "delete"];

export type State = Record<string, unknown>;

export type CustomReducer = (current: unknown, update: unknown) => unknown;
export type Reducer = ReducerName | CustomReducer;

/** One node's write to one key, before reducers; `writer` names the node for conflict messages. */
export interface ChannelWrite {
  key: string;
  value: unknown;
  writer: string;
}

export class WriteConflictError extends Error {
  constructor(
    readonly key: string,
    readonly writers: [string, string],
  ) {
    super(`nodes "${writers[0]}" and "${writers[1]}" both wrote state key "${key}" in the same step, and its reducer (replace) keeps only one value`);
  }
}

/**
 * Applies one step's writes, in the given (deterministic) order, through each key's reducer.
 * Returns the new state and the ops that reproduce it from the old one.
 */
export function reduceWrites(
  state: State,
  writes: readonly ChannelWrite[],
  reducerOf: (key: string) => Reducer,
): { state: State; ops: ChannelOp[] } {
  const replaced = new Map<string, string>();
  const ops: ChannelOp[] = [];
  // One copy for the whole step: the old state is never modified (tasks of the step may still hold it).
  const next = { ...state };
  for (const write of writes) {
    const reducer = reducerOf(write.key);
    let op: ChannelOp;
    if (reducer === "replace") {
      const earlier = replaced.get(write.key);
      if (earlier !== undefined) throw new WriteConflictError(write.key, [earlier, write.writer]);
      replaced.set(write.key, write.writer);
      op = [write.key, "set", write.value];
    } else if (reducer === "append") {
      op = [write.key, "append", Array.isArray(write.value) ? write.value : [write.value]];
    } else if (reducer === "merge") {
      if (!isPlainObject(write.value)) {
        throw new TypeError(`node "${write.writer}" wrote a non-object to state key "${write.key}", whose reducer is merge`);
      }
      op = [write.key, "merge", write.value];
    } else {
      op = [write.key, "set", reducer(next[write.key], write.value)];
    }
    applyTo(next, op);
    ops.push(op);
  }
  return { state: writes.length > 0 ? next : state, ops };
}

/** Applies `op` to `target`, a copy the caller owns; the values it held are not modified. */
function applyTo(target: State, op: ChannelOp): void {
  const key = op[0];
  switch (op[1]) {
    case "set":
      target[key] = op[2];
      return;
    case "append": {
      const current = target[key];
      target[key] = Array.isArray(current) ? current.concat(op[2]) : [...op[2]];
      return;
    }
    case "merge": {
      const current = target[key];
      target[key] = { ...(isPlainObject(current) ? current : {}), ...op[2] };
      return;
    }
    case "delete":
      delete target[key];
      return;
  }
}

/** Returns a new state; the old one is never modified. */
export function applyOps(state: State, ops: readonly ChannelOp[]): State {
  if (ops.length === 0) return state;
  const next = { ...state };
  for (const op of ops) applyTo(next, op);
  return next;
}

/** The ops that turn `before` into `after` key by key; used for operator edits and forks. */
export function opsBetween(before: State, after: State): ChannelOp[] {
  const ops: ChannelOp[] = [];
  for (const key of new Set([...Object.keys(before), ...Object.keys(after)])) {
    const a = before[key];
    const b = after[key];
    if (JSON.stringify(a) === JSON.stringify(b)) continue;
    // Left out (a set to undefined would be stored as null, and read back as a key that is there).
    if (b === undefined) ops.push([key, "delete"]);
    else if (Array.isArray(a) && Array.isArray(b) && b.length > a.length && JSON.stringify(b.slice(0, a.length)) === JSON.stringify(a)) {
      ops.push([key, "append", b.slice(a.length)]);
    } else {
      ops.push([key, "set", b]);
    }
  }
  return ops;
}

/**
 * Makes a value read-only all the way down (what is frozen already is not walked again). The
 * state a node is given is: changed in place, it would differ from what the store holds, and a
 * run resumed elsewhere would see another state than the one that went on in memory.
 */
export function deepFreeze<T>(value: T): T {
  if (typeof value !== "object" || value === null || Object.isFrozen(value)) return value;
  Object.freeze(value);
  // By index for arrays: a list that grows every step is walked without copying it each time.
  if (Array.isArray(value)) for (let i = 0; i < value.length; i++) deepFreeze(value[i]);
  else for (const inner of Object.values(value)) deepFreeze(inner);
  return value;
}

/**
 * A deep copy of plain data (what `valueProblem` finds nothing wrong with: no cycle, no class
 * instance, no function); undefined members of objects stay, as structuredClone keeps them.
 */
export const copyData: <T>(value: T) => T = rfdc();

export function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}
