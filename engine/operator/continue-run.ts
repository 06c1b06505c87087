import { ConflictError, NotFoundError, ValidationError } from "../errors.js";
import type { CompiledWorkflow } from "../graph/model.js";
import { TERMINAL_RUN_STATUSES } from "../store/records.js";
import type { Store } from "../store/store.js";
import { Operator } from "./operator.js";
import type { StartRunOptions, WorkflowVersion } from "./start.js";

/**
 * A new run that goes on from an ended run's final state, with `input` applied as an update
 * through the reducers, running `workflow` (a version of the same workflow) from its start node:
 * a new turn of a conversation. It keeps the ended run's interrupt lists unless given others, and its tags (with those given).
 * Returns its id; the ended run records the fork.
 */
export async function continueRun(
  store: Store,
  workflow: CompiledWorkflow | WorkflowVersion,
  from: string,
  input: unknown,
  options: { actor: string; secretKeys?: readonly string[] } & Pick<StartRunOptions, "interruptBefore" | "interruptAfter" | "tags" | "deadlineSeconds">,
): Promise<string> {
  const { actor, secretKeys, ...lists } = options;
  const source = await store.getRun(from);
  if (!source) throw new NotFoundError("run", from);
  if (source.workflow !== workflow.definition.name) {
    throw new ValidationError(`run ${from} is a run of workflow ${source.workflow}: a run goes on only from a run of the same workflow, not of ${workflow.definition.name}`);
  }
  if (!TERMINAL_RUN_STATUSES.includes(source.status)) {
    throw new ConflictError(`run ${from} has not ended (it is ${source.status}): a run goes on from another once that has ended; answer, retry or cancel it first`);
  }
  const { result } = await new Operator(store, { actor, ...(secretKeys ? { secretKeys } : {}) }).fork(from, source.headN, {
    ...(input !== undefined && input !== null ? { patch: input } : {}),
    workflow,
    restart: true,
    ...lists,
    reason: `continues run ${from} with new input`,
  });
  return result.runId;
}
