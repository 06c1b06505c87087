import { defineCommand } from "../cli/command.js";
import { UsageError } from "../cli/errors.js";
import { printOutcome } from "../cli/outcome.js";

export const cancel = defineCommand({
  name: "cancel",
  usage: "cancel <run> --reason TEXT",
  summary: "end a run as canceled (running tasks are aborted, child runs canceled)",
  details: `The reason is required and recorded. A run that already ended cannot be canceled (exit 3).
--json prints { "commandId", "effect" }.`,
  flags: { reason: { type: "string" } },
  args: { min: 1, max: 1 },
  async run({ args, flags, out, operator }) {
    if (!flags.reason?.trim()) throw new UsageError("cancel needs --reason TEXT");
    return printOutcome(out, await (await operator()).cancel(args[0]!, { reason: flags.reason }));
  },
});
