import { ConflictError, TERMINAL_RUN_STATUSES, ValidationError, editPatch, isStaleEdit } from "../../engine/index.js";
import { defineCommand } from "../cli/command.js";
import { editJson } from "../cli/editor.js";
import { EXIT, UsageError } from "../cli/errors.js";
import { statePatch } from "../cli/inputs.js";
import { mustGetRun } from "../cli/lookup.js";
import { printOutcome } from "../cli/outcome.js";

export const edit = defineCommand({
  name: "edit",
  usage: "edit <run> (--patch JSON|@file | --set path=value ... | --editor) [--as-node NODE] [--reason TEXT]",
  summary: "edit the state of a paused or queued run (LangGraph's update_state), outside any interrupt",
  details: `--patch is a JSON Patch array (RFC 6902) or a partial state written through the reducers;
--set path=value adds JSON Patch operations; --editor opens $EDITOR on the state as JSON and
applies what you save (refused if someone changed the same values meanwhile).
--as-node NODE records the edit as if NODE had written it: the run goes on along NODE's edges
and routes (before the next step is planned; or, paused before NODE, NODE is skipped). The result is validated against the state
schema: if invalid, nothing is written (exit 2); an edit that changes nothing writes nothing.
--json prints { "commandId", "effect", "checkpointId"? }.`,
  flags: {
    patch: { type: "string" },
    set: { type: "string", isMultiple: true },
    editor: { type: "boolean" },
    asNode: { type: "string" },
    reason: { type: "string" },
  },
  args: { min: 1, max: 1 },
  async run({ args, flags, out, operator }) {
    const runId = args[0]!;
    const sets = flags.set ?? [];
    if (flags.editor && (flags.patch !== undefined || sets.length > 0)) throw new UsageError("--editor makes its own patch; leave out --patch and --set");
    if (!flags.editor && flags.patch === undefined && sets.length === 0) throw new UsageError("give --patch, --set or --editor: what to change");
    const op = await operator();
    const options = { ...(flags.asNode !== undefined ? { asNode: flags.asNode } : {}), ...(flags.reason ? { reason: flags.reason } : {}) };
    if (flags.editor) {
      // What would refuse the edit is said before anyone spends time in the editor.
      const run = await mustGetRun(op.store, runId);
      if (TERMINAL_RUN_STATUSES.includes(run.status)) throw new ConflictError(`run ${runId} has ended (${run.status}); fork it to change its state`);
      if (run.status === "running") throw new ConflictError(`run ${runId} is running; its state can be edited while it is paused or queued`);
      const current = await op.state(runId);
      const edited = await editJson({
        value: current,
        fileName: "state.json",
        header: [`State of run ${runId}.`, "Save to apply it (validated first); save an empty file to cancel.", "Lines starting with // are ignored."],
        apply: (value, base) => op.updateState(runId, editPatch(base, value), options),
        retry: (error) => error instanceof ValidationError,
        reread: (error) => (isStaleEdit(error) ? op.state(runId) : undefined),
      });
      if (edited.kind === "unchanged") {
        out.note(`edit canceled, no changes made to run ${runId}`);
        return EXIT.ok;
      }
      return printOutcome(out, edited.result);
    }
    const patch = await statePatch({ ...(flags.patch !== undefined ? { patch: flags.patch } : {}), set: sets }, () => op.state(runId));
    return printOutcome(out, await op.updateState(runId, patch!, options));
  },
});
