import { ValidationError } from "../errors.js";
import { applyOps, deepFreeze, type ChannelOp, type State } from "./ops.js";

/**
 * How one key is held in a snapshot. Arrays (the keys that grow by appending) are stored as a
 * segment chain: the items appended since the previous snapshot, plus the checkpoint numbers of
 * earlier snapshots whose items come before them. A run that appends a little every step thus
 * stores each item once in a delta and once in a segment — linear, not quadratic, growth.
 */
export type SnapshotEntry = { v: unknown } | { segs: number[]; items: unknown[] };
export type Snapshot = Record<string, SnapshotEntry>;

export interface SnapshotPolicy {
  /** At most this many deltas are folded to read any checkpoint's state. */
  every: number;
  /** Deltas since the last snapshot larger than this and than the state itself force a snapshot. */
  minBytes: number;
}

export const DEFAULT_SNAPSHOT_POLICY: SnapshotPolicy = { every: 64, minBytes: 64 * 1024 };

/** The default policy with `options` applied, refused (naming the option) unless each value is usable. */
export function snapshotPolicy(options: Partial<SnapshotPolicy> = {}): SnapshotPolicy {
  const policy = { ...DEFAULT_SNAPSHOT_POLICY, ...Object.fromEntries(Object.entries(options).filter(([, v]) => v !== undefined)) };
  if (!Number.isInteger(policy.every) || policy.every < 1) {
    throw new ValidationError(`snapshot interval must be a whole number of checkpoints of at least 1, not ${String(policy.every)}`, [{ path: "snapshotPolicy.every", message: "a whole number ≥ 1" }]);
  }
  if (typeof policy.minBytes !== "number" || !(policy.minBytes >= 0)) {
    throw new ValidationError(`snapshot size threshold must be a number of bytes of at least 0, not ${String(policy.minBytes)}`, [{ path: "snapshotPolicy.minBytes", message: "a number ≥ 0" }]);
  }
  return policy;
}

/** The segment numbers a snapshot needs read to be decoded. */
export function segmentsOf(snapshot: Snapshot): number[] {
  const ns = new Set<number>();
  for (const entry of Object.values(snapshot)) if ("segs" in entry) for (const n of entry.segs) ns.add(n);
  return [...ns];
}

export function decodeSnapshot(snapshot: Snapshot, segments: ReadonlyMap<number, Snapshot>): State {
  const state: State = {};
  for (const [key, entry] of Object.entries(snapshot)) {
    if ("v" in entry) {
      state[key] = entry.v;
      continue;
    }
    const parts: unknown[][] = [];
    for (const n of entry.segs) {
      const seg = segments.get(n)?.[key];
      if (!seg || !("segs" in seg)) throw new Error(`snapshot segment ${n} of key "${key}" is missing`);
      parts.push(seg.items);
    }
    parts.push(entry.items);
    state[key] = ([] as unknown[]).concat(...parts);
  }
  return state;
}

type KeyChange = { kind: "appended"; items: unknown[] } | { kind: "reset" };

/**
 * Follows a run's state from checkpoint to checkpoint and decides when the next checkpoint
 * carries a snapshot. Lives in memory beside a run's executor; rebuilt from the store on claim.
 */
export class StateChain {
  private lastSnapshotN: number;
  private lastSnapshot: Snapshot;
  private changes = new Map<string, KeyChange>();
  private deltasSince = 0;
  private deltaBytesSince = 0;
  private stateBytes: number;

  constructor(
    private readonly policy: SnapshotPolicy,
    base: { n: number; snapshot: Snapshot; state: State; bytes: number },
    private current: State = base.state,
  ) {
    this.lastSnapshotN = base.n;
    this.lastSnapshot = base.snapshot;
    this.stateBytes = base.bytes;
  }

  /** A chain for a run's first checkpoint, which is always a snapshot. */
  static start(policy: SnapshotPolicy, state: State): { chain: StateChain; snapshot: Snapshot } {
    const snapshot = freshSnapshot(state);
    const chain = new StateChain(policy, { n: 0, snapshot, state, bytes: jsonBytes(snapshot) });
    return { chain, snapshot };
  }

  /** Replays the deltas committed after the base snapshot (when a run is loaded from the store). */
  replay(deltas: readonly { n: number; delta: ChannelOp[] }[]): void {
    for (const d of deltas) this.record(d.delta, measureOps(d.delta));
  }

  get state(): State {
    return this.current;
  }

  get snapshotN(): number {
    return this.lastSnapshotN;
  }

  /**
   * Records checkpoint `n`'s ops (`measured`: their size, when the caller measured them). Returns
   * the snapshot to store with it, when one is due. `next` is the state after the ops (the caller
   * has it already; it is not recomputed).
   */
  advance(n: number, ops: readonly ChannelOp[], next: State, measured = measureOps(ops)): Snapshot | undefined {
    this.record(ops, measured, next);
    const due =
      this.deltasSince >= this.policy.every ||
      (this.deltaBytesSince >= this.policy.minBytes && this.deltaBytesSince > this.stateBytes);
    if (!due) return undefined;
    return this.snapshotAt(n);
  }

  /** Forces a snapshot at `n` (fork points and operator edits of large states use it). */
  snapshotAt(n: number): Snapshot {
    const snapshot: Snapshot = {};
    let bytes = 0;
    for (const [key, value] of Object.entries(this.current)) {
      const prev = this.lastSnapshot[key];
      const change = this.changes.get(key);
      if (!Array.isArray(value)) {
        snapshot[key] = { v: value };
        bytes += jsonBytes(value);
      } else if (prev && "segs" in prev && change?.kind !== "reset") {
        const segs = prev.items.length > 0 ? [...prev.segs, this.lastSnapshotN] : prev.segs;
        snapshot[key] = { segs, items: change?.kind === "appended" ? change.items : [] };
      } else {
        snapshot[key] = { segs: [], items: value };
      }
    }
    this.lastSnapshotN = n;
    this.lastSnapshot = snapshot;
    this.changes.clear();
    this.deltasSince = 0;
    this.deltaBytesSince = 0;
    this.stateBytes = Math.max(bytes, this.stateBytes);
    return snapshot;
  }

  private record(ops: readonly ChannelOp[], measured: OpsSize, next?: State): void {
    for (let i = 0; i < ops.length; i++) {
      const [key, kind, value] = ops[i]!;
      const change = this.changes.get(key);
      if (kind === "append" && change?.kind !== "reset") {
        this.changes.set(key, { kind: "appended", items: change ? change.items.concat(value) : [...value] });
        this.stateBytes += measured.values[i]!;
      } else {
        this.changes.set(key, { kind: "reset" });
      }
    }
    this.current = next ?? applyOps(this.current, ops);
    // What the ops changed is read-only too (the rest was already): nodes are handed this state.
    // An appended list holds the frozen items it had and the op's: only those are walked.
    for (const [key, kind, value] of ops) {
      if (kind !== "append") deepFreeze(this.current[key]);
      else {
        Object.freeze(this.current[key]);
        for (const item of value) deepFreeze(item);
      }
    }
    Object.freeze(this.current);
    this.deltasSince++;
    this.deltaBytesSince += measured.bytes;
  }
}

function freshSnapshot(state: State): Snapshot {
  const snapshot: Snapshot = {};
  for (const [key, value] of Object.entries(state)) {
    snapshot[key] = Array.isArray(value) ? { segs: [], items: value } : { v: value };
  }
  return snapshot;
}

/** Printable ASCII but the quote and the backslash: such a string is its length and two quotes in JSON. */
const PLAIN_TEXT = /^[\x20\x21\x23-\x5b\x5d-\x7e]*$/;

/** The bytes of a value's JSON (`null` for what has none). */
export function jsonBytes(value: unknown): number {
  return plainBytes(value) ?? Buffer.byteLength(JSON.stringify(value) ?? "null");
}

/**
 * The same, without writing the JSON, for what nodes mostly write: a string of plain text, a
 * number, a boolean, null, or a list of those; undefined for anything else. A step measures every
 * value it writes, and writing a value's JSON only to count it was most of what that cost.
 */
function plainBytes(value: unknown): number | undefined {
  switch (typeof value) {
    case "string":
      return PLAIN_TEXT.test(value) ? value.length + 2 : undefined;
    case "number":
      return Number.isFinite(value) ? String(value).length : 4;
    case "boolean":
      return value ? 4 : 5;
    case "object": {
      if (value === null) return 4;
      if (!Array.isArray(value) || typeof (value as { toJSON?: unknown }).toJSON === "function") return undefined;
      // Brackets, and a comma between items.
      let bytes = value.length > 0 ? value.length + 1 : 2;
      for (let i = 0; i < value.length; i++) {
        const item: unknown = value[i];
        const itemBytes = item === null || typeof item !== "object" ? plainBytes(item) : undefined;
        if (itemBytes === undefined) return undefined;
        bytes += itemBytes;
      }
      return bytes;
    }
    default:
      return undefined;
  }
}

/** The JSON size of some ops (what `jsonBytes(ops)` says), and of each op's value. */
export interface OpsSize {
  bytes: number;
  values: number[];
}

/**
 * Measured from one stringify per value, not one of the ops and another of their values: an op
 * is `[key,"kind",value]`, which adds its key, its kind in quotes, two commas and two brackets
 * to its value; a list of ops adds its brackets and a comma between ops.
 */
export function measureOps(ops: readonly ChannelOp[]): OpsSize {
  let bytes = ops.length > 0 ? ops.length + 1 : 2;
  const values = ops.map(([key, kind, value]) => {
    const size = jsonBytes(value);
    bytes += size + jsonBytes(key) + kind.length + 6;
    return size;
  });
  return { bytes, values };
}
