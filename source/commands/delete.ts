import { deleteWithDescendants } from "../../engine/index.js";
import { defineCommand } from "../cli/command.js";
import { EXIT } from "../cli/errors.js";
import { plural } from "../text/plain.js";

export const deleteRun = defineCommand({
  name: "delete",
  usage: "delete <run> [--with-descendants]",
  summary: "delete a run that has ended, with its child runs and everything of theirs",
  details: `Its checkpoints, tasks, interrupts, commands, events and the artifacts no other run holds go
too. A run that has not ended, a child run (delete its top-level run) or a run with a child run
that has not ended is refused (exit 3) and nothing is deleted. prune deletes many at once.
--with-descendants also deletes the runs made from it: its forks and the runs that went on from
it (start --from), theirs in turn, each with its child runs (runs --descendants-of lists them);
if any of them has not ended, nothing is deleted. On SQLite what is deleted is overwritten in the
file and the WAL is emptied of it (see "Erasing data" in the README).
--json prints { "deleted": [ids] }, the run first.`,
  flags: { withDescendants: { type: "boolean" } },
  args: { min: 1, max: 1 },
  async run({ args, flags, out, store }) {
    const s = await store();
    const deleted = flags.withDescendants ? await deleteWithDescendants(s, args[0]!) : await s.deleteRun(args[0]!);
    if (out.json) out.value({ deleted });
    else out.line(`deleted run ${deleted[0]}${deleted.length > 1 ? ` and ${plural(deleted.length - 1, flags.withDescendants ? "more run" : "child run")}${flags.withDescendants ? " (made from it, and child runs)" : ""}: ${deleted.slice(1).join(", ")}` : ""}`);
    return EXIT.ok;
  },
});
