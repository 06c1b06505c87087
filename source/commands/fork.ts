import { defineCommand } from "../cli/command.js";
import { statePatch } from "../cli/inputs.js";
import { EXIT } from "../cli/errors.js";
import { printOutcome } from "../cli/outcome.js";
import { checkedVersion } from "../cli/workflow-file.js";

export const fork = defineCommand({
  name: "fork",
  usage: "fork <run> <checkpoint> [--patch JSON|@file] [--set path=value ...] [--workflow FILE] [--reason TEXT]",
  summary: "start a new run from a checkpoint of another (its history is not changed)",
  details: `The checkpoint is an id or a number within the run. Prints the new run's id; a worker runs it.
--workflow FILE runs the fork on that version of the same workflow (a fixed one, say): the
checkpoint's state must fit its state schema (new keys get their defaults; --patch and --set are
checked against the new version, so they can reshape the state), and the nodes the run is at
must still exist in it.
--json prints { "commandId", "effect", "runId" }.`,
  flags: { patch: { type: "string" }, set: { type: "string", isMultiple: true }, workflow: { type: "string" }, reason: { type: "string" } },
  args: { min: 2, max: 2 },
  async run({ args, flags, out, operator }) {
    const [runId, checkpoint] = args as [string, string];
    const workflow = flags.workflow !== undefined ? checkedVersion(flags.workflow) : undefined;
    const op = await operator();
    const patch = await statePatch({ ...(flags.patch !== undefined ? { patch: flags.patch } : {}), set: flags.set ?? [] }, () => op.state(runId, checkpoint));
    const outcome = await op.fork(runId, checkpoint, {
      ...(patch !== undefined ? { patch } : {}),
      ...(flags.reason ? { reason: flags.reason } : {}),
      ...(workflow ? { workflow } : {}),
    });
    if (out.json) return printOutcome(out, outcome);
    out.line(String(outcome.result.runId));
    out.note(outcome.effect);
    return EXIT.ok;
  },
});
