import { ConflictError, ValidationError } from "../errors.js";
import type { Store } from "../store/store.js";
import { mustGetRun } from "./must-get.js";
import type { WorkflowVersions } from "./workflow-versions.js";

/**
 * The task a kill or retry names: one of the run's current step, by id or node name, in a status
 * of `prefer` when the node has several. Names that miss say why (moved on, no such node, no task).
 */
export async function taskOfCurrentStep(store: Store, versions: WorkflowVersions, runId: string, ref: string, prefer: string[]): Promise<string> {
  const run = await mustGetRun(store, runId);
  if (run.status === "succeeded" || run.status === "canceled") throw new ConflictError(`run ${runId} has ended (${run.status})`);
  const tasks = (await store.listTasks(runId, { step: run.step + 1 })).filter((t) => t.parent === null);
  const byId = tasks.find((t) => t.id === ref);
  if (byId) return byId.id;
  const byNode = tasks.filter((t) => t.node === ref);
  if (byNode.length === 0) {
    // A task named by id that is no longer in the current step: someone retried it first, and
    // the run moved on.
    const task = await store.getTask(ref);
    if (task && task.runId === runId) {
      throw new ConflictError(`task ${ref} (${task.node}) is ${task.status} in step ${task.step}, and the run is at step ${run.step + 1}: it has moved on (another operator acted first?)`);
    }
    const { definition } = await versions.get(run.version);
    if (!Object.hasOwn(definition.nodes, ref)) throw new ValidationError(`workflow ${definition.name} has no node "${ref}" (nor is it a task of the current step)`);
    const current = [...new Set(tasks.map((t) => t.node))].sort();
    throw new ConflictError(`node "${ref}" has no task in the current step (step ${run.step + 1}) of run ${runId}${current.length > 0 ? `, which runs ${current.join(", ")}` : ""}; only tasks of that step can be ${prefer.includes("running") ? "killed" : "retried"}`);
  }
  const preferred = byNode.filter((t) => prefer.includes(t.status));
  if (preferred.length > 1) {
    throw new ValidationError(`node "${ref}" has ${preferred.length} tasks in this step (${preferred.map((t) => t.id).join(", ")}); name one by id`);
  }
  return (preferred[0] ?? byNode[0]!).id;
}
