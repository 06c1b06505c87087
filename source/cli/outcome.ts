import type { CommandOutcome } from "../../engine/index.js";
import { EXIT, type ExitCode } from "./errors.js";
import type { Output } from "./output.js";
import { clean } from "../text/plain.js";

/**
 * What every operator command prints when accepted: the effect for people; for scripts
 * `{ "commandId", "effect", ...result }` where result holds e.g. `checkpointId` or `runId`.
 */
export function printOutcome(out: Output, outcome: CommandOutcome, fields: Record<string, unknown> = {}): ExitCode {
  const { effect: _effect, ...result } = outcome.result;
  if (out.json) out.value({ commandId: outcome.command.id, effect: outcome.effect, ...fields, ...result });
  else out.line(clean(outcome.effect));
  return EXIT.ok;
}
