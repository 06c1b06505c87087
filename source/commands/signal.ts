import { defineCommand } from "../cli/command.js";
import { readJsonArgument } from "../cli/inputs.js";
import { printOutcome } from "../cli/outcome.js";

export const signal = defineCommand({
  name: "signal",
  usage: "signal <run> <name> [--data JSON|@file] [--reason TEXT]",
  summary: "send a run a signal (a payment confirmed, a build finished): a node waiting for it goes on",
  details: `The signal is kept in the run's inbox until a node takes it (a wait node's "signal", or
ctx.receive(name) in code), the oldest of its name first; a node waiting for it goes on at once.
--data is its JSON (@file reads a file, @- standard input); --reason is recorded with it. A run
that has ended takes no signal (exit 3); a name of other than letters, digits, '.', '_', ':' and
'-' is bad input (exit 2).
--json prints { "commandId", "effect", "signalId", "node"? }.`,
  flags: { data: { type: "string" }, reason: { type: "string" } },
  args: { min: 2, max: 2 },
  async run({ args, flags, out, operator }) {
    const data = flags.data === undefined ? undefined : readJsonArgument("data", flags.data);
    const [runId, name] = [args[0]!, args[1]!];
    return printOutcome(out, await (await operator()).signal(runId, name, data, flags.reason !== undefined ? { reason: flags.reason } : {}));
  },
});
