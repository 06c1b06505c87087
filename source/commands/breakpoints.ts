import { defineCommand } from "../cli/command.js";
import { printOutcome } from "../cli/outcome.js";

const details = `A breakpoint pauses the run before the node each time it is scheduled, as an interrupt of
kind "breakpoint" (resolve it to go on), until it is removed with unbreak.
--json prints { "commandId", "effect" }.`;

export const breakpoint = defineCommand({
  name: "break",
  usage: "break <run> <node> [--reason TEXT]",
  summary: "pause a live run before a node, every time it is scheduled",
  details,
  flags: { reason: { type: "string" } },
  args: { min: 2, max: 2 },
  async run({ args, flags, out, operator }) {
    const [runId, node] = args as [string, string];
    return printOutcome(out, await (await operator()).breakpoint(runId, node, flags.reason));
  },
});

export const unbreak = defineCommand({
  name: "unbreak",
  usage: "unbreak <run> <node> [--reason TEXT]",
  summary: "remove a breakpoint",
  details,
  flags: { reason: { type: "string" } },
  args: { min: 2, max: 2 },
  async run({ args, flags, out, operator }) {
    const [runId, node] = args as [string, string];
    return printOutcome(out, await (await operator()).clearBreakpoint(runId, node, flags.reason));
  },
});
