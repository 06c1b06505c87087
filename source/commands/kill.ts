import { defineCommand } from "../cli/command.js";
import { printOutcome } from "../cli/outcome.js";

export const kill = defineCommand({
  name: "kill",
  usage: "kill <run> [<node>] [--reason TEXT]",
  summary: "abort a run's running task (one node, or all); the run pauses",
  details: `The task's abort signal fires; a task that ignores it is abandoned after a grace period.
The task becomes canceled and the run paused (killed): retry it with pitwall retry.
A node with several tasks in the step (a map) is named by task id instead.
--json prints { "commandId", "effect" }.`,
  flags: { reason: { type: "string" } },
  args: { min: 1, max: 2 },
  async run({ args, flags, out, operator }) {
    const [runId, node] = args as [string, string | undefined];
    const outcome = await (await operator()).kill(runId, { ...(node ? { task: node } : {}), ...(flags.reason ? { reason: flags.reason } : {}) });
    return printOutcome(out, outcome);
  },
});
