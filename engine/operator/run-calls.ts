import { countTokens, runCalls, type CallView, type RunTokens } from "../llm/call-record.js";
import type { TaskRecord } from "../store/records.js";
import type { Store } from "../store/store.js";
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
  const [all, tokens] = await Promise.all([tasks ?? store.listTasks(runId), tallyTokens(store, runId)]);
  return { calls: runCalls(all, tokens, options.secretKeys), tokens };
}

async function tallyTokens(store: Store, runId: string): Promise<RunTokens> {
  const tokens = countTokens([]);
  for await (const event of readAllEvents(store, { runId, types: ["node.log"] })) countTokens([event], tokens);
  return tokens;
}
