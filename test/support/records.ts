import { checkpointId, newId } from "../../engine/ids.js";
import type { CheckpointRecord, CommandRecord, CommandType } from "../../engine/index.js";
import type { ChannelOp } from "../../engine/state/ops.js";
import { jsonBytes } from "../../engine/state/snapshot.js";

/** Checkpoint `n` of a run, a step of the loop with node `work` that wrote `delta`. */
export function checkpoint(runId: string, n: number, delta: ChannelOp[], extra: Partial<CheckpointRecord> = {}): CheckpointRecord {
  return {
    id: checkpointId(runId, n),
    runId,
    n,
    step: n,
    parentId: checkpointId(runId, n - 1),
    source: "loop",
    actor: "worker:test",
    nodes: ["work"],
    next: [],
    control: { finished: [{ node: "work" }], barriers: {}, visits: {} },
    delta,
    snapshotN: 0,
    createdAt: Date.now(),
    bytes: jsonBytes(delta),
    ...extra,
  };
}

/** A command of `type` on a run, as an operator records it: pending, unanswered. */
export function pendingCommand(runId: string, type: CommandType, extra: Partial<CommandRecord> = {}): CommandRecord {
  return { id: newId("cmd"), runId, type, args: {}, actor: "operator:ann", reason: null, createdAt: Date.now(), status: "pending", result: null, answeredAt: null, ...extra };
}
