import { defineCommand } from "../cli/command.js";
import { EXIT, UsageError } from "../cli/errors.js";
import { statePatch } from "../cli/inputs.js";
import { printOutcome } from "../cli/outcome.js";
import { checkedVersion } from "../cli/workflow-file.js";
import { clean } from "../text/plain.js";

export const upgrade = defineCommand({
  name: "upgrade",
  usage: "upgrade <run> --workflow FILE [--patch JSON|@file] [--set path=value ...] [--reason TEXT]",
  summary: "move a queued, paused or failed run onto another version of its workflow, in place",
  details: `The run keeps its id and history and goes on under the version in FILE (the same workflow,
fixed, say): a run waiting on an approval, or queued behind a bug, runs the new code once it goes
on. It must go on from its head checkpoint as a fork onto that version would: the nodes it is at,
the routes taken, its interrupt lists, breakpoints, pending interrupts and waiting tasks must
still make sense there, and its state must fit the new schema. New keys get their defaults, written
as a state edit (an update checkpoint, with its diff in the events); --patch and --set are
checked against the new version, so they can reshape a state that does not fit.
A running run is refused (pause it first, or wait); an ended one too (fork it, or start --from it).
A failed run moves when it has a failed or canceled task to retry: the retry then runs it under
the new version (one that failed otherwise is refused: fork it). A run waiting on a
sub-workflow's run leaves that run on its own version (upgrade it on its own).
Nothing is written when it is refused (exit 2 for what the new version lacks, 3 for the run's status).
A run on that version already is left as it is: nothing is written, and it says so (exit 0).
--json prints { "commandId", "effect", "unchanged": false, "from", "to", "checkpointId"? }, or
{ "effect", "unchanged": true, "from", "to" } for a run on that version already.`,
  flags: {
    workflow: { type: "string" },
    patch: { type: "string" },
    set: { type: "string", isMultiple: true },
    reason: { type: "string" },
  },
  args: { min: 1, max: 1 },
  async run({ args, flags, out, operator }) {
    const [runId] = args as [string];
    if (flags.workflow === undefined) throw new UsageError("upgrade needs --workflow FILE: the version to move the run to");
    const workflow = checkedVersion(flags.workflow);
    const op = await operator();
    const patch = await statePatch({ ...(flags.patch !== undefined ? { patch: flags.patch } : {}), set: flags.set ?? [] }, () => op.state(runId));
    const outcome = await op.upgrade(runId, { workflow, ...(patch !== undefined ? { patch } : {}), ...(flags.reason ? { reason: flags.reason } : {}) });
    if (!outcome.unchanged) return printOutcome(out, outcome, { unchanged: false });
    // No command was recorded: there is no commandId to give.
    if (out.json) out.value({ effect: outcome.effect, unchanged: true, ...outcome.result });
    else out.line(clean(outcome.effect));
    return EXIT.ok;
  },
});
