import { defineCommand } from "../cli/command.js";
import { EXIT, UsageError } from "../cli/errors.js";
import { json } from "../cli/output.js";

export const state = defineCommand({
  name: "state",
  usage: "state <run> [<checkpoint>]",
  summary: "a run's state as JSON, now or at a checkpoint",
  details: `A checkpoint is named by its id or by its number in the run (0 is the input), as the
second argument or with --checkpoint. Prints the state object itself (indented; one line with --json).`,
  flags: { checkpoint: { type: "string" } },
  args: { min: 1, max: 2 },
  readsOnly: true,
  async run({ args, flags, out, operator }) {
    if (args[1] !== undefined && flags.checkpoint !== undefined) throw new UsageError("give the checkpoint as an argument or with --checkpoint, not both");
    const value = await (await operator()).state(args[0]!, args[1] ?? flags.checkpoint);
    if (out.json) out.value(value);
    else out.line(json(value, 2));
    return EXIT.ok;
  },
});
