import { checkStart, formatProblemIn } from "../../engine/index.js";
import { defineCommand } from "../cli/command.js";
import { UsageError } from "../cli/errors.js";
import { readJsonArgument, secondsFlag, startInput, tagFlags } from "../cli/inputs.js";
import { printOutcome } from "../cli/outcome.js";
import { checkedVersion, compiledFile } from "../cli/workflow-file.js";

/** The flags that go with --start only: they say how the run is started. */
const START_FLAGS = ["input", "actions", "tag", "deadline"] as const;

export const signal = defineCommand({
  name: "signal",
  usage: "signal <run> <name> [--data JSON|@file] [--reason TEXT] [--command-id ID] [--start <workflow.json> [--input JSON|@file] [--actions MODULE ...] [--tag NAME=VALUE ...] [--deadline LENGTH]]",
  summary: "send a run a signal (a payment confirmed, a build finished): a node waiting for it goes on",
  details: `The signal is kept in the run's inbox until a node takes it (a wait node's "signal", or
ctx.receive(name) in code), the oldest of its name first; a node waiting for it goes on at once.
When no node of the run waits for it now, it says so, and names a sub-workflow's run below that
does (signal that run instead).
--data is its JSON (@file reads a file, @- standard input); --reason is recorded with it. A run
that has ended takes no signal (exit 3); a name of other than letters, digits, '.', '_', ':' and
'-' is bad input (exit 2).
--start workflow.json starts the run first when no run has its id (signal-with-start, a
webhook's first call: the run's id is the sender's key, an order number), from --input, with
--tag and --deadline as pitwall start takes them; a run of another workflow with that id is a
conflict, nothing sent (exit 3). Of two senders racing, one starts it and both signals land.
--command-id ID makes a sender's retry safe (a webhook's delivery id): the same signal sent again
under it (same sender, run, name and data) gets the first one's outcome and is recorded once;
another under that id is a conflict (exit 3).
--json prints { "commandId", "effect", "signalId", "node"?, "waitingRun"? } (with --start also
"started": true when this call started the run).`,
  flags: {
    data: { type: "string" },
    reason: { type: "string" },
    commandId: { type: "string" },
    start: { type: "string" },
    input: { type: "string" },
    actions: { type: "string", isMultiple: true },
    tag: { type: "string", isMultiple: true },
    deadline: { type: "string" },
  },
  args: { min: 2, max: 2 },
  // The first signal of a new deployment may come before anything made its store.
  createsStore: (flags) => flags.start !== undefined,
  async run({ args, flags, out, operator, actions }) {
    const data = flags.data === undefined ? undefined : readJsonArgument("data", flags.data);
    const [runId, name] = [args[0]!, args[1]!];
    if (flags.commandId !== undefined && !/^[A-Za-z0-9._:-]{1,200}$/.test(flags.commandId)) throw new UsageError(`--command-id ${JSON.stringify(flags.commandId)}: letters, digits, '.', '_', ':' and '-' (at most 200)`);
    const reason = { ...(flags.reason !== undefined ? { reason: flags.reason } : {}), ...(flags.commandId !== undefined ? { commandId: flags.commandId } : {}) };
    if (flags.start === undefined) {
      // A repeated flag not given is an empty list.
      const alone = START_FLAGS.find((flag) => (Array.isArray(flags[flag]) ? flags[flag].length > 0 : flags[flag] !== undefined));
      if (alone) throw new UsageError(`--${alone} goes with --start (the workflow to start the run of when it does not exist)`);
      return printOutcome(out, await (await operator()).signal(runId, name, data, reason));
    }
    const registry = await actions(flags.actions);
    const workflow = registry ? compiledFile(flags.start, registry) : checkedVersion(flags.start);
    const tags = tagFlags(flags.tag);
    const start = {
      runId,
      workflow,
      input: startInput(flags.input),
      ...(tags ? { tags } : {}),
      ...(flags.deadline !== undefined ? { deadlineSeconds: secondsFlag("deadline", flags.deadline) } : {}),
    };
    // Checked before the store is opened (and, for a new deployment, made): a refused start writes nothing.
    checkStart(workflow, start.input, { id: runId, ...(tags ? { tags } : {}), ...(start.deadlineSeconds !== undefined ? { deadlineSeconds: start.deadlineSeconds } : {}) });
    const outcome = await (await operator()).signalWithStart(start, name, data, reason);
    if (outcome.result.started) {
      // What validate warns of is said where a run of the file is started, as start says it.
      for (const warning of workflow.warnings) out.note(formatProblemIn(flags.start, warning));
      out.note(`run ${runId} started (${workflow.definition.name}) to take this signal`);
    }
    return printOutcome(out, outcome);
  },
});
