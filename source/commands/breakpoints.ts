import type { CommandOutcome, Operator } from "../../engine/index.js";
import { defineCommand } from "../cli/command.js";
import { printOutcome } from "../cli/outcome.js";

const BREAK_DETAILS = `A breakpoint pauses the run before the node each time it is scheduled, as an interrupt of
kind "breakpoint" (resolve it to go on), until it is removed with unbreak.
--json prints { "commandId", "effect" }.`;

const UNBREAK_DETAILS = `Removes a breakpoint set with break: the run no longer pauses before the node. A run paused
at it now stays paused until that interrupt is resolved (as in a debugger).
--json prints { "commandId", "effect" }.`;

function breakpointCommand(
  name: string,
  summary: string,
  details: string,
  apply: (op: Operator, runId: string, node: string, reason?: string) => Promise<CommandOutcome>,
) {
  return defineCommand({
    name,
    usage: `${name} <run> <node> [--reason TEXT]`,
    summary,
    details,
    flags: { reason: { type: "string" } },
    args: { min: 2, max: 2 },
    async run({ args, flags, out, operator }) {
      const [runId, node] = args as [string, string];
      return printOutcome(out, await apply(await operator(), runId, node, flags.reason));
    },
  });
}

export const breakpoint = breakpointCommand("break", "pause a live run before a node, every time it is scheduled", BREAK_DETAILS, (op, run, node, reason) =>
  op.breakpoint(run, node, reason),
);
export const unbreak = breakpointCommand("unbreak", "remove a breakpoint", UNBREAK_DETAILS, (op, run, node, reason) => op.clearBreakpoint(run, node, reason));
