import { processGone } from "../local-process.js";
import type { CommandRecord } from "../store/records.js";
import type { Store } from "../store/store.js";
import { UnheldRuns } from "./unheld-runs.js";
import { WorkflowVersions } from "./workflow-versions.js";

/**
 * How long a command queued for a run's worker is left to the process that recorded it, once
 * nobody holds the run, when that process is not known to be gone: it applies the command itself
 * within a few seconds of the worker letting go of the run (and the worker answers those it was
 * handed as it lets go). Past this, both have stopped.
 */
export const LEFT_COMMAND_MS = 5_000;

/**
 * Answers, as `actor`, the commands left pending on runs nobody holds (forks aside, which their
 * recorders answer: `answerAbandonedForks`): queued for a worker that let go of the run (it ended,
 * paused or was released) before applying them, their recorders gone before applying them
 * themselves (demonstrably, on this host, or for longer than `LEFT_COMMAND_MS`). Each is applied
 * to its run as it is now, as its recorder would have — refused when the run has ended (`run …
 * ended (succeeded) before the kill was applied`) — and only while it is pending: one answered
 * meanwhile is left out. Returns them as answered.
 */
export async function answerLeftCommands(store: Store, actor: string, options: { secretKeys?: readonly string[]; now?: number } = {}): Promise<CommandRecord[]> {
  const now = options.now ?? Date.now();
  const unheld = new UnheldRuns({ store, actor, secretKeys: options.secretKeys ?? [] }, new WorkflowVersions(store));
  const answered: CommandRecord[] = [];
  for (const command of await store.listCommands({ status: "pending" })) {
    if (command.type === "fork" || !recorderGone(command, now)) continue;
    const answer = await unheld.answer(command);
    if (answer) answered.push(answer);
  }
  return answered;
}

function recorderGone(command: CommandRecord, now: number): boolean {
  return (command.recorder !== undefined && processGone(command.recorder, command.createdAt)) || now - command.createdAt > LEFT_COMMAND_MS;
}
