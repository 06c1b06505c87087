import { useEffect, useRef, useState } from "react";
import { errorMessage } from "../../../engine/index.js";
import { useServices, type Dialog, type QuitQuestion } from "../context.js";
import { hasEnded, howRunEnded } from "../run-end.js";
import { PRIORITY } from "../key-router.js";
import { useKeys } from "../hooks/use-keys.js";
import { useLiveState, useTextField } from "../hooks/use-text-field.js";
import { ACCENT, MUTED } from "../theme.js";
import { Lines, seg, wrapLine, type Line } from "./lines.js";

/** Lines a dialog takes at the bottom of the screen, so that the view above can shrink by that much. */
export function dialogHeight(dialog: Dialog, maxBody: number, width: number): number {
  if (dialog.kind === "prompt") return 2 + (dialog.complete ? SHOWN_SUGGESTIONS + 1 : 0);
  return 3 + Math.min(bodyRows(dialog, width).length, maxBody) + (dialog.reason === "none" ? 0 : 1);
}

/** A confirmation's explanation as it fits beside its margin: long lines broken between words. */
function bodyRows(dialog: Extract<Dialog, { kind: "confirm" }>, width: number): Line[] {
  return dialog.body.flatMap((line) => wrapLine(line, Math.max(10, width - MARGIN.length)));
}

/** The rows of a body shown in `rows`: one cut short says how much is left out. */
function shownBody(body: Line[], rows: number): Line[] {
  if (body.length <= rows) return body;
  const kept = Math.max(0, rows - 1);
  return [...body.slice(0, kept), [seg(`… and ${body.length - kept} more (a taller terminal shows them)`, { color: MUTED })]];
}

const MARGIN = "▌ ";
/** Columns a confirmation's margin takes: a body line as wide as the screen less these is not broken. */
export const CONFIRM_MARGIN = MARGIN.length;

/**
 * Asks before an action: the buttons start on Cancel (enter right away does nothing), the
 * reason is typed directly, `tab` moves between the buttons (the arrows too, with no reason
 * field); enter after a reason,
 * with the focus still where it started, moves to the action, and the next enter acts. Enter on
 * a Cancel the operator chose cancels.
 */
export function ConfirmDialog({ dialog, width, height }: { dialog: Extract<Dialog, { kind: "confirm" }>; width: number; height: number }) {
  const [warning, setWarning] = useState<string>();
  const reasonField = useTextField(
    "",
    (text) => {
      if (text.trim()) setWarning(undefined);
    },
    dialog.reason !== "none",
  );
  const reasonNow = reasonField.now;
  const [onAction, setOnAction, onActionNow] = useLiveState(false);
  // The operator's answer stands: the run ending once it is given (the action itself may end it)
  // is no reason to close the dialog, which is closing already.
  const answered = useRef(false);
  const answer: typeof dialog.resolve = (result) => {
    answered.current = true;
    dialog.resolve(result);
  };
  useClosedWhenRunEnds(dialog, answered);
  const [, setChosen, chosenNow] = useLiveState(false);
  useKeys(
    PRIORITY.dialog,
    {
      ...reasonField.handlers,
      switch: (key) => {
        // In a text field the arrows are the field's: they never move the focus onto the action.
        if (key !== "tab" && dialog.reason !== "none") return;
        setChosen(() => true);
        setOnAction((v) => !v);
      },
      dismiss: () => answer({ ok: false, reason: "" }),
      submit: () => {
        if (!onActionNow.current) {
          // A typed reason shows what the operator means to do: enter takes them to the action, not
          // away — unless they moved to Cancel themselves.
          if (reasonNow.current.trim() && !chosenNow.current) return setOnAction(() => true);
          return answer({ ok: false, reason: "" });
        }
        if (dialog.reason === "required" && !reasonNow.current.trim()) return setWarning("a reason is required");
        answer({ ok: true, reason: reasonNow.current.trim() });
      },
    },
    { modal: true, text: reasonField.type },
  );
  const shownRows = Math.max(0, height - 3 - (dialog.reason === "none" ? 0 : 1));
  // The focused button is bracketed as well as reversed, so it reads without colour too.
  const button = (label: string, focused: boolean): Line => [seg(focused ? `[${label}]` : ` ${label} `, focused ? { inverse: true, bold: true } : { color: MUTED })];
  const lines: Line[] = [
    [seg("▌ ", { color: "yellow" }), seg(dialog.title, { bold: true })],
    ...shownBody(bodyRows(dialog, width), shownRows).map((l) => [seg(MARGIN, { color: "yellow" }), ...l]),
  ];
  if (dialog.reason !== "none") {
    lines.push([
      seg("▌ ", { color: "yellow" }),
      seg(`Reason${dialog.reason === "required" ? "" : " (optional)"}: `, { color: MUTED }),
      seg(reasonField.text),
      seg("█", { color: ACCENT }),
    ]);
  }
  lines.push([
    seg("▌ ", { color: "yellow" }),
    ...button("Cancel", !onAction),
    seg("  "),
    ...button(dialog.action, onAction),
    seg("   tab switch · enter choose · esc cancel", { color: MUTED }),
  ]);
  lines.push(warning ? [seg("▌ ", { color: "yellow" }), seg(warning, { color: "red", bold: true })] : []);
  return <Lines lines={lines.slice(0, height)} width={width} />;
}

/**
 * A dialog about a run closes when that run ends while it is open (another operator canceled it, say),
 * saying who ended it and when, rather than leaving a question whose answer would be refused.
 */
function useClosedWhenRunEnds(dialog: Extract<Dialog, { kind: "confirm" }>, answered: { readonly current: boolean }): void {
  const { store, feed, ui } = useServices();
  const { runId } = dialog;
  useEffect(() => {
    if (runId === undefined) return;
    let open = true;
    // A run that had ended when the dialog opened (a failed run to retry) closes it by ending again.
    let endedBefore = dialog.runEndedAt; // undefined: not read yet
    const check = async () => {
      try {
        const run = await store.getRun(runId);
        if (!open || answered.current || !run) return;
        const ended = hasEnded(run) ? run.endedAt : null;
        if (endedBefore === undefined) endedBefore = ended;
        if (ended === null || ended === endedBefore) return;
        const how = await howRunEnded(store, run);
        if (!open || answered.current) return;
        open = false;
        dialog.resolve({ ok: false, reason: "", closed: true });
        ui.report({ tone: "error", text: `meanwhile run ${runId} ended: ${how}; nothing sent` });
      } catch (error) {
        if (open && !answered.current) ui.report({ tone: "error", text: `cannot read run ${runId}: ${errorMessage(error)}` });
      }
    };
    void check();
    const stop = feed.listen((change) => change.runs.has(runId) && void check());
    return () => {
      open = false;
      stop();
    };
  }, [runId]);
}

const SHOWN_SUGGESTIONS = 3;

/** The longest text every one of `words` starts with. */
function sharedStart(words: readonly string[]): string {
  if (words.length === 0) return "";
  let shared = words[0]!;
  for (const w of words) while (!w.startsWith(shared)) shared = shared.slice(0, -1);
  return shared;
}

/** One line of text: the filter, the command palette, a reason or a response. */
export function PromptDialog({ dialog, width }: { dialog: Extract<Dialog, { kind: "prompt" }>; width: number }) {
  const field = useTextField(dialog.initial ?? "", dialog.onChange);
  const { text } = field;
  const suggestions = dialog.complete ? dialog.complete(text) : [];
  useKeys(
    PRIORITY.dialog,
    {
      ...field.handlers,
      submit: () => dialog.resolve(field.now.current),
      dismiss: () => dialog.resolve(undefined),
      complete:
        !!dialog.complete &&
        (() => {
          // As a shell does: the one match whole, or as much as all the matches share.
          const shared = sharedStart(dialog.complete?.(field.now.current) ?? []);
          if (shared.length > field.now.current.length) field.set(shared);
        }),
    },
    { modal: true, text: field.type },
  );
  const lines: Line[] = [
    [seg(`${dialog.title} `, { bold: true, color: ACCENT }), seg(text), seg("█", { color: ACCENT })],
    ...suggestions.slice(0, SHOWN_SUGGESTIONS).map((s) => [seg("  ↹ ", { color: MUTED }), seg(s, { color: MUTED })]),
    ...(suggestions.length > SHOWN_SUGGESTIONS ? [[seg(`  … ${suggestions.length - SHOWN_SUGGESTIONS} more: type more to narrow them`, { color: MUTED })]] : []),
    [seg(dialog.hint ?? "enter ok · esc cancel", { color: MUTED })],
  ];
  return <Lines lines={lines} width={width} />;
}

/**
 * `q` or `ctrl-c` while a write is under way asks first, one key to answer: `y` quits (so does
 * `ctrl-c` again), `n` or `esc` stays. Any other key does nothing: a stray key neither quits nor
 * reaches the view or the dialog below.
 */
export function QuitDialog({ dialog, width }: { dialog: QuitQuestion; width: number }) {
  useKeys(
    PRIORITY.dialog,
    {
      quitAnyway: () => dialog.resolve(true),
      stay: () => dialog.resolve(false),
      dismiss: () => dialog.resolve(false),
      // Not offered here in the footer (the console's ctrl-c is): only ctrl-c of its keys quits here, q does not.
      quit: Object.assign(
        (key: string) => {
          if (key === "ctrl-c") dialog.resolve(true);
        },
        { explains: true as const },
      ),
    },
    { modal: true, text: () => undefined },
  );
  return (
    <Lines
      lines={[[seg("▌ ", { color: "yellow" }), seg("quit? ", { bold: true }), seg(`${dialog.underWay}… is still being sent — `), seg("y", { bold: true, color: ACCENT }), seg(" quits · "), seg("n", { bold: true, color: ACCENT }), seg(" stays")]]}
      width={width}
    />
  );
}
