import { defineCommand } from "../cli/command.js";
import { statePatch } from "../cli/inputs.js";
import { printOutcome } from "../cli/outcome.js";

export const retry = defineCommand({
  name: "retry",
  usage: "retry <run> <node> [--patch JSON|@file] [--set path=value ...] [--reason TEXT]",
  summary: "run a failed or canceled task again, optionally editing the state first",
  details: `The node is a node name of the current step (or a task id). A run that failed or paused
is queued again. The patch is validated like resolve's: if invalid, nothing is written (exit 2).
--json prints { "commandId", "effect", "willRun", "checkpointId"? }.`,
  flags: { patch: { type: "string" }, set: { type: "string", isMultiple: true }, reason: { type: "string" } },
  args: { min: 2, max: 2 },
  async run({ args, flags, out, operator }) {
    const [runId, node] = args as [string, string];
    const op = await operator();
    const patch = await statePatch({ ...(flags.patch !== undefined ? { patch: flags.patch } : {}), set: flags.set ?? [] }, () => op.state(runId));
    const outcome = await op.retry(runId, node, { ...(patch !== undefined ? { patch } : {}), ...(flags.reason ? { reason: flags.reason } : {}) });
    return printOutcome(out, outcome);
  },
});
