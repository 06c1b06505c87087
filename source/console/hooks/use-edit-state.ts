import { StateValidator, ValidationError, diffStates, errorMessage, isStaleEdit, parseJsonText, readState, type State, type EventRecord, type Store, type WorkflowDefinition } from "../../../engine/index.js";
import { seg, type Line } from "../components/lines.js";
import { act, useServices } from "../context.js";
import { clean, clock } from "../text.js";
import { MUTED } from "../theme.js";
import { diffLines } from "../views/diff-lines.js";
import { hasEnded } from "../run-end.js";
import { withoutCommentLines } from "../../text/plain.js";

export interface EditRequest {
  /** Where the edit goes, for the file's header and the dialogs. */
  what: string;
  /** The run's checkpoint the value is the state at, said after `what` (and moved on when it is read again). */
  at?: number;
  /** The JSON value edited: a run's state, or the arguments of a tool call awaiting approval. */
  value: State;
  /** Returns the value as it will be used, or throws naming what is wrong (as the engine would). */
  validate(value: unknown): State;
  /** The run edited: the confirmation closes if it ends meanwhile. */
  runId?: string;
  /** The confirmation's action button. */
  action: string;
  /** Sends the validated value, edited from `base` (the value the editor opened on); returns what the engine says it did. */
  send(value: State, reason: string, base: State): Promise<string>;
  /**
   * The value as it is now, for an edit refused because someone changed it meanwhile: the editor
   * reopens on it (the operator's change is to be made again), as `pitwall edit` does.
   */
  reread?(): Promise<Reread>;
}

export interface Reread {
  value: State;
  /** The checkpoint it is the state at. */
  at: number;
  /** Who changed it last and when ("operator:alice at 15:36:54"), when an operator's edit did. */
  by?: string;
}

/** A run's state at its head, and who made that head when an operator's edit did. */
export async function rereadState(store: Store, runId: string): Promise<Reread> {
  const run = await store.getRun(runId);
  if (!run) throw new Error(`run ${runId} no longer exists`);
  const value = await readState(store, runId, run.headN);
  const [edited] = await store.readEvents({ runId, types: ["state.edited"], last: 1 });
  const byEdit = edited !== undefined && (edited as EventRecord<"state.edited">).payload.checkpointId === run.head;
  return { value, at: run.headN, ...(byEdit ? { by: `${clean(edited.actor)} at ${clock(edited.time)}` } : {}) };
}

/** A run's state, validated as a worker would validate it. */
export function stateValidation(definition: WorkflowDefinition): (value: unknown) => State {
  const validator = new StateValidator(definition.state);
  return (value) => validator.parse(value, "edited state");
}

/** `problems`: every failing place (`$.budget: expected number`), when the refusal names more than one. */
type Checked = { ok: true; value: State } | { ok: false; problem: string; problems: string[] };

/** Failing places listed in the editor's header and the refusal's dialog; the others are counted. */
const LISTED_PROBLEMS = 8;

/**
 * Parses the edited value (comments allowed) and validates it. `firstLine`: the line of the file
 * the text starts at, so that a JSON error names the line as the file the person sees numbers it.
 */
export function checkEdit(text: string, validate: (value: unknown) => State, firstLine = 1): Checked {
  const parsed = parseJsonText(text, { comments: true, trailingCommas: true });
  if (parsed.error !== undefined) {
    const error = parsed.error.replace(/^line \d+/, `line ${parsed.line + firstLine - 1}`);
    return { ok: false, problem: `not valid JSON at ${error}`, problems: [] };
  }
  const { value } = parsed;
  try {
    return { ok: true, value: validate(value) };
  } catch (error) {
    // The message names the first place and counts the others: each is listed, so none is found only on the next save.
    const issues = error instanceof ValidationError ? error.issues : [];
    if (issues.length < 2) return { ok: false, problem: errorMessage(error), problems: [] };
    const problems = issues.slice(0, LISTED_PROBLEMS).map((i) => `${i.path}: ${i.message}`);
    if (issues.length > LISTED_PROBLEMS) problems.push(`… and ${issues.length - LISTED_PROBLEMS} more`);
    return { ok: false, problem: `the edit is invalid in ${issues.length} places`, problems };
  }
}

/** What the file says above the value: an error to fix (and each failing place), or a note (the value changed under the last edit). */
type Notice = { error: string; problems: string[] } | { note: string };

/** `what`, and the checkpoint the value is from. */
function described(request: EditRequest, at: number | undefined): string {
  return `${request.what}${at === undefined ? "" : ` at checkpoint ${at}`}`;
}

function fileText(request: EditRequest, at: number | undefined, body: string, notice?: Notice): string {
  return `${fileHeader(request, at, notice).join("\n")}\n${body}`;
}

/** The file's lines above the value. */
function fileHeader(request: EditRequest, at: number | undefined, notice?: Notice): string[] {
  return [
    `// ${described(request, at)}.`,
    "// Save and quit to continue: the edit is validated and its diff shown before anything is sent.",
    "// Quit without saving to cancel. Lines starting with // are ignored.",
    ...(notice && "error" in notice ? ["//", `// ERROR: ${notice.error}`, ...notice.problems.map((p) => `//   ${p}`), "// Fix it, or quit without saving to cancel."] : []),
    ...(notice && "note" in notice ? ["//", `// NOTE: ${notice.note}`] : []),
  ];
}

/**
 * Editing JSON like `kubectl edit`: it opens in $EDITOR; on save it is parsed and validated (a
 * refusal names the failing path and offers to edit again), the diff is shown and confirmed
 * (default Cancel), and only then is it sent. Refused because someone changed the value
 * meanwhile, it says so and offers to edit again on the value as it is now.
 */
export function useEditState(): ((request: EditRequest) => Promise<void>) | undefined {
  const { editor, ui, operator, store } = useServices();
  if (!operator) return undefined;
  return async (request) => {
    // How the run stood before the editor opened: a run that ends while it is open closes the dialogs after it.
    const run = request.runId === undefined ? undefined : await store.getRun(request.runId).catch(() => undefined);
    const onRun = request.runId === undefined ? {} : { runId: request.runId, ...(run ? { runEndedAt: hasEnded(run) ? run.endedAt : null } : {}) };
    let base = request.value;
    let at = request.at;
    let body = JSON.stringify(base, null, 2);
    let notice: Notice | undefined;
    for (;;) {
      const result = editor.edit(fileText(request, at, body, notice), "state");
      if (result.status === "failed") return ui.report({ tone: "error", text: clean(result.message) });
      if (result.status === "unchanged") return ui.report({ tone: "info", text: "edit closed without changes; nothing sent" });
      body = withoutCommentLines(result.text);
      // A JSON error is shown in the reopened file, whose header says it: its line is counted from there.
      const checked = checkEdit(body, request.validate, fileHeader(request, at, { error: "", problems: [] }).length + 1);
      if (!checked.ok) {
        const { problem, problems } = checked;
        notice = { error: problem, problems };
        ui.report({ tone: "error", text: clean(`edit refused: ${problem}${problems.length > 0 ? `: ${problems.join("; ")}` : ""}`) });
        const again = await ui.confirm({
          title: "The edit is not valid; nothing was sent",
          body: [[seg(clean(problem), { color: "red" })], ...problems.map((p) => [seg(`  ${clean(p)}`, { color: "red" })])],
          action: "Edit again",
          reason: "none",
        });
        if (!again.ok) return;
        continue;
      }
      const diff = diffStates(base, checked.value);
      if (diff.length === 0) return ui.report({ tone: "info", text: "the edit changes nothing; nothing sent" });
      const answer = await ui.confirm({
        title: "Apply this change?",
        body: [[seg(described(request, at), { color: MUTED })], ...someOf(diffLines(diff), 6)],
        action: request.action,
        reason: "optional",
        ...onRun,
      });
      if (answer.closed) return;
      if (!answer.ok) return ui.report({ tone: "info", text: "edit not confirmed; nothing sent" });
      const reread = request.reread;
      let stale = false;
      await act(ui, request.action, () => request.send(checked.value, answer.reason, base), (error) => (stale = !!reread && isStaleEdit(error)));
      if (!stale || !reread) return;
      let now: Reread;
      try {
        now = await reread();
      } catch (error) {
        return ui.report({ tone: "error", text: clean(`someone changed the state meanwhile, and it cannot be read again: ${errorMessage(error)}; your edit was not sent`) });
      }
      const again = await ui.confirm({
        title: "Someone changed the state meanwhile; your edit was not sent",
        body: [
          [seg(now.by ? `While you edited, ${now.by} changed it:` : "While you edited, it changed:", { color: MUTED })],
          ...someOf(diffLines(diffStates(base, now.value)), 4),
          [seg("Edit again on the state as it is now, and make your change again?", { color: MUTED })],
        ],
        action: "Edit again",
        reason: "none",
        ...onRun,
      });
      if (again.closed) return;
      if (!again.ok) return ui.report({ tone: "info", text: "the state changed meanwhile; your edit was not sent" });
      base = now.value;
      at = request.at === undefined ? undefined : now.at;
      body = JSON.stringify(base, null, 2);
      notice = { note: `someone${now.by ? ` (${now.by})` : ""} changed the state while you edited it: this is the state now; make your change again.` };
    }
  };
}

/** The first `max` lines, and how many more there are. */
function someOf(lines: Line[], max: number): Line[] {
  const shown = lines.slice(0, max);
  const more = lines.length - shown.length;
  if (more > 0) shown.push([seg(` … and ${more} more change${more === 1 ? "" : "s"}`, { color: MUTED })]);
  return shown;
}
