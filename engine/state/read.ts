import { applyOps, deepFreeze, type ChannelOp, type State } from "./ops.js";
import { StateChain, decodeSnapshot, jsonBytes, segmentsOf, type Snapshot, type SnapshotPolicy } from "./snapshot.js";

/** What reading a state needs of a stored checkpoint. */
export interface ChainRow {
  n: number;
  /** The number of the nearest checkpoint at or before this one that holds a snapshot. */
  snapshotN: number;
  delta: ChannelOp[];
  snapshot?: Snapshot;
}

/** The part of the Store contract that state reading uses; every store provides it. */
export interface ChainReader {
  /** Checkpoints of a run by number (missing numbers are left out). */
  checkpointRows(runId: string, ns: readonly number[]): Promise<ChainRow[]>;
  /** Checkpoints of a run with `fromN < n <= toN`, in order. */
  checkpointRowRange(runId: string, fromN: number, toN: number): Promise<ChainRow[]>;
}

interface LoadedChain {
  base: ChainRow & { snapshot: Snapshot };
  baseState: State;
  deltas: ChainRow[];
}

/** `at`: checkpoint `n` itself, when the caller has read it already. */
async function load(reader: ChainReader, runId: string, n: number, at?: ChainRow): Promise<LoadedChain> {
  const row = at ?? (await reader.checkpointRows(runId, [n]))[0];
  if (!row) throw new Error(`checkpoint ${n} of run ${runId} is missing`);
  const base = row.snapshot ? row : (await reader.checkpointRows(runId, [row.snapshotN]))[0];
  if (!base?.snapshot) throw new Error(`snapshot ${row.snapshotN} of run ${runId} is missing`);
  const segNs = segmentsOf(base.snapshot);
  const segRows = segNs.length > 0 ? await reader.checkpointRows(runId, segNs) : [];
  const segments = new Map(segRows.filter((r) => r.snapshot).map((r) => [r.n, r.snapshot!] as const));
  const deltas = base.n < n ? await reader.checkpointRowRange(runId, base.n, n) : [];
  return { base: base as ChainRow & { snapshot: Snapshot }, baseState: decodeSnapshot(base.snapshot, segments), deltas };
}

/** The state at checkpoint `n`: its nearest snapshot, then at most `policy.every` deltas folded. */
export async function readState(reader: ChainReader, runId: string, n: number): Promise<State> {
  const { baseState, deltas } = await load(reader, runId, n);
  let state = baseState;
  for (const d of deltas) state = applyOps(state, d.delta);
  return state;
}

/** The in-memory chain an executor continues from, positioned at checkpoint `head` (as read already). */
export async function loadStateChain(reader: ChainReader, runId: string, head: ChainRow, policy: SnapshotPolicy): Promise<StateChain> {
  const { base, baseState, deltas } = await load(reader, runId, head.n, head);
  // Read from the store, so the executor's own: read-only from here on (StateChain keeps it so).
  const chain = new StateChain(policy, { n: base.n, snapshot: base.snapshot, state: deepFreeze(baseState), bytes: jsonBytes(baseState) });
  chain.replay(deltas);
  return chain;
}
