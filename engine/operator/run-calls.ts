import { countTokens, runCalls, type CallView, type RunTokens, type TokenCount } from "../llm/call-record.js";
import type { RunRecord, TaskRecord } from "../store/records.js";
import type { Store } from "../store/store.js";
import { runTree } from "./descendants.js";
import { readAllEvents } from "./reads.js";

/**
 * A run's model and tool calls (what each was sent and answered, secrets hidden) and the tokens
 * its models used, in all and by node. `tasks`: the run's tasks, when the caller has read them
 * already; `secretKeys`: names of secrets added to the default ones.
 */
export async function readRunCalls(
  store: Store,
  runId: string,
  tasks?: readonly TaskRecord[],
  options: { secretKeys?: readonly string[] } = {},
): Promise<{ calls: CallView[]; tokens: RunTokens }> {
  const [all, tokens, root] = await Promise.all([tasks ?? store.listTasks(runId), tallyTokens(store, runId), store.getRun(runId)]);
  const below = root ? await subWorkflowTokens(store, root, all) : undefined;
  return { calls: runCalls(all, tokens, options.secretKeys), tokens: below ? { ...tokens, subWorkflows: below } : tokens };
}

/**
 * The tokens of the runs below a run (its sub-workflows' child runs, theirs in turn), each
 * counted to the node of the run that started the child it is under (a mapped sub-workflow's
 * children all to that one node).
 */
async function subWorkflowTokens(store: Store, root: RunRecord, tasks: readonly TaskRecord[]): Promise<RunTokens["subWorkflows"]> {
  const tree = await runTree(store, root);
  if (tree.length === 1) return undefined;
  const byId = new Map(tree.map((run) => [run.id, run]));
  const nodeOfTask = new Map(tasks.map((task) => [task.id, task.node]));
  const total: TokenCount & { byNode: Record<string, TokenCount> } = { prompt: 0, completion: 0, byNode: {} };
  for (const run of tree.slice(1)) {
    const used = await tallyTokens(store, run.id);
    if (used.prompt === 0 && used.completion === 0) continue;
    let child = run;
    while (child.parentRunId !== root.id) child = byId.get(child.parentRunId!)!;
    const node = nodeOfTask.get(child.parentTaskId ?? "") ?? `run ${child.id}`;
    const count = (total.byNode[node] ??= { prompt: 0, completion: 0 });
    for (const sum of [total, count]) {
      sum.prompt += used.prompt;
      sum.completion += used.completion;
    }
  }
  return total.prompt + total.completion > 0 ? total : undefined;
}

async function tallyTokens(store: Store, runId: string): Promise<RunTokens> {
  const tokens = countTokens([]);
  for await (const event of readAllEvents(store, { runId, types: ["node.log"] })) countTokens([event], tokens);
  return tokens;
}
