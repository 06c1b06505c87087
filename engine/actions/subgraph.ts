import { isDeepStrictEqual } from "node:util";
import type { SubgraphNodeDefinition } from "../graph/definition.js";
import type { CompiledWorkflow, NodeFunction } from "../graph/model.js";
import type { InternalContext } from "../runtime/context.js";
import type { State } from "../state/ops.js";
import type { StateKeyDefinition } from "../state/schema.js";
import type { RunRecord } from "../store/records.js";

/** The code of a sub-workflow node's failure whose cause is its child run's (failed or canceled). */
export const CHILD_FAILED = "CHILD_FAILED";

export class ChildRunError extends Error {
  readonly code = CHILD_FAILED;
  constructor(run: RunRecord) {
    super(`child run ${run.id} (${run.workflow}) ${run.status}${run.error ? `: ${run.error.message}` : ""}`);
    this.name = "ChildRunError";
  }
}

/**
 * A node whose body is another workflow. The child is a run of its own (with a parent link),
 * executed by whichever worker claims it; the parent task is parked until the child ends.
 * A failed child fails the task; a retry of the task starts a fresh child.
 */
export function subgraphNode(
  def: SubgraphNodeDefinition,
  child: CompiledWorkflow,
  parentState: Record<string, StateKeyDefinition>,
): NodeFunction {
  const childKeys = Object.keys(child.definition.state);
  const parentKeys = Object.keys(parentState);
  const inputMap = def.input ?? Object.fromEntries(childKeys.filter((k) => parentKeys.includes(k)).map((k) => [k, k]));
  const outputMap = def.output ?? Object.fromEntries(parentKeys.filter((k) => childKeys.includes(k)).map((k) => [k, k]));

  return async (state, ctx) => {
    const internal = ctx as InternalContext;
    const input: State = {};
    for (const [childKey, parentKey] of Object.entries(inputMap)) {
      if (state[parentKey] !== undefined) input[childKey] = state[parentKey];
    }
    if (def.map) input[def.map.as ?? "item"] = ctx.item;
    const generation = internal.task.attempts.filter((a) => a.code === CHILD_FAILED).length;
    const run = await internal.childRun(child, input, generation);
    if (run.status === "failed" || run.status === "canceled") throw new ChildRunError(run);
    if (run.status !== "succeeded") return internal.park({ kind: "run", runId: run.id });

    const final = await internal.childState(run);
    // Checkpoint 0 of the child holds the state it started with: its input, defaults filled in.
    const initial = await internal.childState(run, 0);
    const update: State = {};
    for (const [parentKey, childKey] of Object.entries(outputMap)) {
      let value = final[childKey];
      if (value === undefined) continue;
      const start = initial[childKey];
      // Shared keys (no `output` given) flow back only when the child's run changed them: a value
      // it merely started with (its own default, or what the parent gave it) would overwrite the parent's.
      if (!def.output && isDeepStrictEqual(value, start)) continue;
      // An append key gets only what the child added to the value it started with, when that
      // value came from this very key or from the child's default: the parent has it, or never had it.
      const startedHere = Object.hasOwn(input, childKey) ? inputMap[childKey] === parentKey : true;
      if (parentState[parentKey]?.reducer === "append" && startedHere && Array.isArray(value) && Array.isArray(start) && isDeepStrictEqual(value.slice(0, start.length), start)) {
        value = value.slice(start.length);
      }
      update[parentKey] = value;
    }
    return update;
  };
}
