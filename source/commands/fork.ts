import { defineCommand } from "../cli/command.js";
import { listFlag, statePatch } from "../cli/inputs.js";
import { EXIT, UsageError } from "../cli/errors.js";
import { printOutcome } from "../cli/outcome.js";
import { checkedVersion } from "../cli/workflow-file.js";

/** The fork's interrupt lists, when the command line replaces its source's. */
function interruptLists(flags: { interruptBefore?: string[] | undefined; interruptAfter?: string[] | undefined; interrupts?: boolean | undefined }): { interruptBefore?: string[]; interruptAfter?: string[] } {
  // A list flag not given arrives as [] (parseFlags): that is "keep the source's list", not "stop nowhere".
  const before = flags.interruptBefore?.length ? listFlag("interrupt-before", flags.interruptBefore) : undefined;
  const after = flags.interruptAfter?.length ? listFlag("interrupt-after", flags.interruptAfter) : undefined;
  if (flags.interrupts === false) {
    if (before || after) throw new UsageError("--no-interrupts takes neither --interrupt-before nor --interrupt-after");
    return { interruptBefore: [], interruptAfter: [] };
  }
  if (flags.interrupts === true) throw new UsageError("--interrupts: give --no-interrupts (the fork stops nowhere), or lists with --interrupt-before/--interrupt-after");
  return { ...(before ? { interruptBefore: before } : {}), ...(after ? { interruptAfter: after } : {}) };
}

/** Whether the fork carries its source's signals (the default) or starts with an empty inbox. */
function signalsFlag(signals: boolean | undefined): { signals?: "none" } {
  if (signals === true) throw new UsageError("--signals: carrying the signals its history has not taken is the default; give --no-signals to start the fork with an empty inbox");
  return signals === false ? { signals: "none" } : {};
}

export const fork = defineCommand({
  name: "fork",
  usage: "fork <run> <checkpoint> [--patch JSON|@file] [--set path=value ...] [--workflow FILE] [--interrupt-before NODE ... | --interrupt-after NODE ... | --no-interrupts] [--no-signals] [--reason TEXT]",
  summary: "start a new run from a checkpoint of another (its history is not changed)",
  details: `The checkpoint is an id or a number within the run. Prints the new run's id; a worker runs it.
--workflow FILE runs the fork on that version of the same workflow (a fixed one, say): the
checkpoint's state must fit its state schema (new keys get their defaults; --patch and --set are
checked against the new version, so they can reshape the state), and the nodes the run is at
must still exist in it.
A fork of a sub-workflow's run is a run of its own: the parent still waits on the run forked
(the fork says so); to have the parent go on, retry or cancel that run, or fork the parent.
The fork stops where its source would (its interrupt lists) unless given others:
--interrupt-before/--interrupt-after replace the source's lists, --no-interrupts stops nowhere.
The fork's inbox starts with the signals of the run its history has not taken: those the run's
nodes took after the checkpoint, and those it holds untaken, oldest first, as they were sent
(it says how many: carried 2 signals (paid, shipped) from run R); --no-signals starts it
with an empty inbox. A fork that would carry more than a run holds untaken (1,000) is refused.
--json prints { "commandId", "effect", "runId", "carriedSignals" }.`,
  flags: {
    patch: { type: "string" },
    set: { type: "string", isMultiple: true },
    workflow: { type: "string" },
    reason: { type: "string" },
    interruptBefore: { type: "string", isMultiple: true },
    interruptAfter: { type: "string", isMultiple: true },
    interrupts: { type: "boolean" },
    signals: { type: "boolean" },
  },
  args: { min: 2, max: 2 },
  async run({ args, flags, out, operator }) {
    const [runId, checkpoint] = args as [string, string];
    const workflow = flags.workflow !== undefined ? checkedVersion(flags.workflow) : undefined;
    const lists = interruptLists(flags);
    const signals = signalsFlag(flags.signals);
    const op = await operator();
    const patch = await statePatch({ ...(flags.patch !== undefined ? { patch: flags.patch } : {}), set: flags.set ?? [] }, () => op.state(runId, checkpoint));
    const outcome = await op.fork(runId, checkpoint, {
      ...(patch !== undefined ? { patch } : {}),
      ...(flags.reason ? { reason: flags.reason } : {}),
      ...(workflow ? { workflow } : {}),
      ...lists,
      ...signals,
    });
    if (out.json) return printOutcome(out, outcome);
    out.line(String(outcome.result.runId));
    out.note(outcome.effect);
    return EXIT.ok;
  },
});
