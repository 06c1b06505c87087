import { StateValidator, diffStates, errorMessage, parseJsonText, type State, type WorkflowDefinition } from "../../../engine/index.js";
import { seg, type Line } from "../components/lines.js";
import { act, useServices } from "../context.js";
import { clean } from "../text.js";
import { MUTED } from "../theme.js";
import { diffLines } from "../views/diff-lines.js";
import { withoutCommentLines } from "../../text/plain.js";

export interface EditRequest {
  /** Where the edit goes, for the file's header and the dialogs. */
  what: string;
  /** The JSON value edited: a run's state, or the arguments of a tool call awaiting approval. */
  value: State;
  /** Returns the value as it will be used, or throws naming what is wrong (as the engine would). */
  validate(value: unknown): State;
  /** The confirmation's action button. */
  action: string;
  /** Sends the validated value; returns what the engine says it did. */
  send(value: State, reason: string): Promise<string>;
}

/** A run's state, validated as a worker would validate it. */
export function stateValidation(definition: WorkflowDefinition): (value: unknown) => State {
  const validator = new StateValidator(definition.state);
  return (value) => validator.parse(value, "edited state");
}

type Checked = { ok: true; value: State } | { ok: false; problem: string };

/** Parses the saved file (comments allowed) and validates it. */
export function checkEdit(text: string, validate: (value: unknown) => State): Checked {
  const parsed = parseJsonText(text, { comments: true, trailingCommas: true });
  if (parsed.error !== undefined) return { ok: false, problem: `not valid JSON at ${parsed.error}` };
  const { value } = parsed;
  try {
    return { ok: true, value: validate(value) };
  } catch (error) {
    return { ok: false, problem: errorMessage(error) };
  }
}

function fileText(request: EditRequest, body: string, problem?: string): string {
  const header = [
    `// ${request.what}.`,
    "// Save and quit to continue: the edit is validated and its diff shown before anything is sent.",
    "// Quit without saving to cancel. Lines starting with // are ignored.",
    ...(problem ? ["//", `// ERROR: ${problem}`, "// Fix it, or quit without saving to cancel."] : []),
  ];
  return `${header.join("\n")}\n${body}`;
}

/**
 * Editing JSON like `kubectl edit`: it opens in $EDITOR; on save it is parsed and validated (a
 * refusal names the failing path and offers to edit again), the diff is shown and confirmed
 * (default Cancel), and only then is it sent.
 */
export function useEditState(): ((request: EditRequest) => Promise<void>) | undefined {
  const { editor, ui, operator } = useServices();
  if (!operator) return undefined;
  return async (request) => {
    let body = JSON.stringify(request.value, null, 2);
    let problem: string | undefined;
    for (;;) {
      const result = editor.edit(fileText(request, body, problem), "state");
      if (result.status === "failed") return ui.report({ tone: "error", text: clean(result.message) });
      if (result.status === "unchanged") return ui.report({ tone: "info", text: "edit closed without changes; nothing sent" });
      body = withoutCommentLines(result.text);
      // Checked with its header, so that an error's line and column are those of the file as saved.
      const checked = checkEdit(result.text, request.validate);
      if (!checked.ok) {
        problem = checked.problem;
        ui.report({ tone: "error", text: clean(`edit refused: ${problem}`) });
        const again = await ui.confirm({
          title: "The edit is not valid; nothing was sent",
          body: [[seg(clean(problem), { color: "red" })]],
          action: "Edit again",
          reason: "none",
        });
        if (!again.ok) return;
        continue;
      }
      const diff = diffStates(request.value, checked.value);
      if (diff.length === 0) return ui.report({ tone: "info", text: "the edit changes nothing; nothing sent" });
      const lines: Line[] = diffLines(diff);
      const shown = lines.slice(0, 6);
      if (lines.length > shown.length) shown.push([seg(` … and ${lines.length - shown.length} more change${lines.length - shown.length === 1 ? "" : "s"}`, { color: MUTED })]);
      const answer = await ui.confirm({ title: "Apply this change?", body: [[seg(request.what, { color: MUTED })], ...shown], action: request.action, reason: "optional" });
      if (!answer.ok) return ui.report({ tone: "info", text: "edit not confirmed; nothing sent" });
      await act(ui, request.action, () => request.send(checked.value, answer.reason));
      return;
    }
  };
}
