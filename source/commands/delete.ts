import { defineCommand } from "../cli/command.js";
import { EXIT } from "../cli/errors.js";
import { plural } from "../text/plain.js";

export const deleteRun = defineCommand({
  name: "delete",
  usage: "delete <run>",
  summary: "delete a run that has ended, with its child runs and everything of theirs",
  details: `Its checkpoints, tasks, interrupts, commands, events and the artifacts no other run holds go
too. A run that has not ended, a child run (delete its top-level run) or a run with a child run
that has not ended is refused (exit 3) and nothing is deleted. prune deletes many at once.
--json prints { "deleted": [ids] }, the run first.`,
  flags: {},
  args: { min: 1, max: 1 },
  async run({ args, out, store }) {
    const deleted = await (await store()).deleteRun(args[0]!);
    if (out.json) out.value({ deleted });
    else out.line(`deleted run ${deleted[0]}${deleted.length > 1 ? ` and ${plural(deleted.length - 1, "child run")}: ${deleted.slice(1).join(", ")}` : ""}`);
    return EXIT.ok;
  },
});
