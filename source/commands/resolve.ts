import { ConflictError, ValidationError, checkJson, editPatch, isStaleEdit, type InterruptRecord, type Operator } from "../../engine/index.js";
import { defineCommand } from "../cli/command.js";
import { editJson } from "../cli/editor.js";
import { EXIT, UsageError, type ExitCode } from "../cli/errors.js";
import { statePatch } from "../cli/inputs.js";
import { mustGetInterrupt } from "../cli/lookup.js";
import { printOutcome } from "../cli/outcome.js";
import { editedProposal } from "../text/interrupt-text.js";

export const resolve = defineCommand({
  name: "resolve",
  usage: "resolve <interrupt> (--approve | --reject | --respond TEXT | --edit | --decision NAME) [--patch JSON|@file] [--set path=value ...] [--reason TEXT]",
  summary: "answer a pending interrupt, optionally editing the state",
  details: `--patch is a JSON Patch array (RFC 6902) or a partial state written through the reducers;
--set path=value (path like operation.limit, $.tasks[0] or /a/b; value JSON or text) adds
JSON Patch operations. The edited state is validated: if invalid, nothing is written (exit 2).
--respond sends TEXT as the response (parsed as JSON when the interrupt asks for non-text), with
decision "respond", or with the decision of --approve, --reject or --decision given beside it
(a tool call an agent asks approval for, run with edited arguments: --decision edit --respond JSON);
--decision takes any other decision the interrupt offers (pitwall interrupts lists them).
--edit opens $EDITOR on the state as JSON and applies what you save as the patch (decision
"edit" when the interrupt offers it, else "approve"); at an agent's tool call it opens on the
call's arguments instead and sends what you save, checked against the tool's parameters, as the
response. On an error the editor reopens with it.
Resolving an interrupt twice is refused (exit 3).
--json prints { "interruptId", "runId", "decision", "commandId", "effect", "checkpointId"? }.`,
  flags: {
    approve: { type: "boolean" },
    reject: { type: "boolean" },
    respond: { type: "string" },
    edit: { type: "boolean" },
    decision: { type: "string" },
    patch: { type: "string" },
    set: { type: "string", isMultiple: true },
    reason: { type: "string" },
  },
  args: { min: 1, max: 1 },
  async run({ args, flags, out, store, operator }) {
    // --respond alone is the decision "respond"; with a decision it is the answer sent with it.
    const chosen = [flags.approve && "--approve", flags.reject && "--reject", flags.edit && "--edit", flags.decision !== undefined && "--decision"].filter(Boolean);
    if (chosen.length > 1 || (chosen.length === 0 && flags.respond === undefined)) {
      throw new UsageError(`give exactly one of --approve, --reject, --respond, --edit, --decision${chosen.length > 1 ? ` (got ${chosen.join(", ")})` : ""}`);
    }
    if (flags.edit && (flags.patch !== undefined || (flags.set ?? []).length > 0 || flags.respond !== undefined)) {
      throw new UsageError("--edit makes its own patch; leave out --patch, --set and --respond");
    }
    const interrupt = await mustGetInterrupt(await store(), args[0]!);
    const op = await operator();
    const reason = flags.reason ? { reason: flags.reason } : {};
    const fields = { interruptId: interrupt.id, runId: interrupt.runId };

    if (flags.edit) return editAndResolve(op, interrupt, reason, (outcome, decision) => printOutcome(out, outcome, { ...fields, decision }), (text) => out.note(text));

    const decision = flags.approve ? "approve" : flags.reject ? "reject" : (flags.decision ?? "respond");
    const patch = await statePatch({ ...(flags.patch !== undefined ? { patch: flags.patch } : {}), set: flags.set ?? [] }, () => op.state(interrupt.runId));
    const outcome = await op.resolve(interrupt.id, {
      decision,
      // A decision the interrupt does not offer is refused for that, not for the shape of the answer.
      ...(flags.respond !== undefined ? { response: interrupt.request.decisions.includes(decision) ? responseValue(interrupt, flags.respond) : flags.respond } : {}),
      ...(patch !== undefined ? { patch } : {}),
      ...reason,
    });
    return printOutcome(out, outcome, { ...fields, decision });
  },
});

/** Text, unless the interrupt's response schema asks for something else (then JSON). */
function responseValue(interrupt: InterruptRecord, text: string): unknown {
  const type = interrupt.request.responseSchema?.type;
  if (type === undefined || type === "string") return text;
  try {
    return JSON.parse(text);
  } catch {
    throw new UsageError(`--respond: interrupt ${interrupt.id} expects JSON (${JSON.stringify(type)}), and this is not valid JSON`);
  }
}

async function editAndResolve(
  op: Operator,
  interrupt: InterruptRecord,
  reason: { reason?: string },
  print: (outcome: Awaited<ReturnType<Operator["resolve"]>>, decision: string) => ExitCode,
  note: (text: string) => void,
): Promise<ExitCode> {
  if (interrupt.status !== "pending") {
    throw new ConflictError(`interrupt ${interrupt.id} was already resolved (${interrupt.resolution?.decision} by ${interrupt.resolution?.actor})`);
  }
  const decision = interrupt.request.decisions.includes("edit") ? "edit" : "approve";
  const asked = [
    ...(interrupt.request.question ? [`Question: ${interrupt.request.question}`] : []),
    "Lines starting with // are ignored.",
  ];
  const proposal = editedProposal(interrupt.request);
  // An agent's tool call is answered with its arguments as edited; a state patch would leave them as proposed.
  const edit = proposal
    ? await editJson({
        value: proposal.value,
        fileName: "arguments.json",
        header: [
          `What interrupt ${interrupt.id} proposes (run ${interrupt.runId}, paused at ${interrupt.node}), checked against its schema when saved.`,
          `Save to resolve it with decision "${decision}" and these values; save an empty file to cancel.`,
          ...asked,
        ],
        apply: (edited) => op.resolve(interrupt.id, { decision, response: checkJson(proposal.schema, edited, "the edited proposal"), ...reason }),
        retry: (error) => error instanceof ValidationError,
      })
    : await editJson({
        value: await op.state(interrupt.runId),
        fileName: "state.json",
        header: [
          `State of run ${interrupt.runId}, paused at ${interrupt.node} (${interrupt.kind} interrupt ${interrupt.id}).`,
          `Save to resolve it with decision "${decision}" and this state; save an empty file to cancel.`,
          ...asked,
        ],
        apply: (edited, base) => op.resolve(interrupt.id, { decision, patch: editPatch(base, edited), ...reason }),
        retry: (error) => error instanceof ValidationError,
        reread: (error) => (isStaleEdit(error) ? op.state(interrupt.runId) : undefined),
      });
  if (edit.kind === "unchanged") {
    note(`edit canceled, no changes made; interrupt ${interrupt.id} is still pending`);
    return EXIT.ok;
  }
  return print(edit.result, decision);
}
