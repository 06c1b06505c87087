import { useMemo, useRef } from "react";
import { errorMessage, type InterruptRecord, type Operator } from "../../../engine/index.js";
import { Lines, highlight, seg, type Line } from "../components/lines.js";
import { isStoreFailure, useServices, useSnapshot, type Services, type Ui } from "../context.js";
import { useClock } from "../hooks/use-clock.js";
import { useKeys } from "../hooks/use-keys.js";
import { listHandlers, useWindow } from "../hooks/use-list.js";
import { useRemembered } from "../hooks/use-remembered.js";
import { PRIORITY } from "../key-router.js";
import { ago, clean, displayWidth, fit, truncate } from "../text.js";
import { interruptDetails } from "../../text/interrupt-text.js";
import { deadlineText } from "../../text/deadline-text.js";
import { CONFIRM_MARGIN } from "../components/dialogs.js";
import { keyNames } from "../filter-text.js";
import { DEFAULT_INTERRUPT_SORT, INTERRUPT_FILTER_KEYS, INTERRUPT_SORTS, interruptRows, interruptSortLabel, shownValues, type InterruptSort } from "./interrupt-rows.js";
import { ACCENT, MUTED } from "../theme.js";
import { queueColumns, runCell } from "./queue-columns.js";

/** The decisions the queue takes on several interrupts at once. */
type BulkDecision = "approve" | "reject";

/**
 * One decision on every marked interrupt that allows it, after a confirmation that lists them
 * (a reject's reason goes to each). Each is resolved on its own: one answered meanwhile by
 * someone else is refused alone, and the footer counts what was done and what was refused.
 */
async function decideMarked(services: Services, marked: readonly InterruptRecord[], decision: BulkDecision, width: number, confirmed: (sent: readonly InterruptRecord[]) => void): Promise<boolean> {
  const { ui, operator } = services;
  if (!operator) return false;
  const allowed = marked.filter((i) => i.request.decisions.includes(decision));
  const skipped = marked.length - allowed.length;
  if (allowed.length === 0) {
    ui.report({ tone: "error", text: `none of the ${marked.length} marked interrupts offers ${decision}; nothing sent` });
    return false;
  }
  const listed: Line[] = [];
  if (skipped > 0) listed.push([seg(`${skipped} marked interrupt${skipped === 1 ? " does" : "s do"} not offer ${decision} and ${skipped === 1 ? "is" : "are"} left as ${skipped === 1 ? "it is" : "they are"}`, { color: "yellow" })]);
  listed.push(...allowed.map((i) => decidedLine(i, width)));
  const answer = await ui.confirm({
    title: `${decision === "approve" ? "Approve" : "Reject"} ${allowed.length} interrupt${allowed.length === 1 ? "" : "s"}?`,
    body: listed,
    long: true,
    action: decision === "approve" ? `Approve ${allowed.length}` : `Reject ${allowed.length}`,
    reason: decision === "reject" ? "required" : "optional",
  });
  if (!answer.ok) {
    ui.report({ tone: "info", text: `${decision} not confirmed; nothing sent` });
    return false;
  }
  // The marks of what is sent drop now, not once every answer is in: a key pressed meanwhile
  // must not offer them again.
  confirmed(allowed);
  const doing = `${decision === "approve" ? "approving" : "rejecting"} ${allowed.length} interrupts`;
  ui.report({ tone: "busy", text: `${doing}…` });
  const done = ui.working(doing);
  try {
    return await sendEach(ui, operator, allowed, decision, answer.reason);
  } finally {
    done();
  }
}

/** Resolves each interrupt on its own, and says in the footer what was done and what was refused. */
async function sendEach(ui: Ui, operator: Operator, allowed: readonly InterruptRecord[], decision: BulkDecision, reason: string): Promise<boolean> {
  const refused: string[] = [];
  let done = 0;
  // A store that cannot be reached fails every one alike (each after its time-out): the first stops the rest.
  let failed: { id: string; error: unknown } | undefined;
  for (const interrupt of allowed) {
    try {
      await operator.resolve(interrupt.id, { decision, ...(reason ? { reason } : {}) });
      done++;
    } catch (error) {
      if (isStoreFailure(error)) {
        failed = { id: interrupt.id, error };
        break;
      }
      refused.push(`${interrupt.id}: ${errorMessage(error)}`);
    }
  }
  const verb = decision === "approve" ? "approved" : "rejected";
  if (refused.length === 0 && !failed) {
    ui.report({ tone: "ok", text: `${verb} ${done} interrupt${done === 1 ? "" : "s"}` });
    return true;
  }
  const notSent = allowed.length - done - refused.length - (failed ? 1 : 0);
  const parts = [
    `${verb} ${done} of ${allowed.length}`,
    ...(refused.length > 0 ? [`${refused.length} refused, answered meanwhile or changed (${refused[0]}${refused.length > 1 ? ", …" : ""})`] : []),
    ...(failed ? [`the store failed on ${failed.id}, which may not have been ${verb}: ${errorMessage(failed.error)}`] : []),
    ...(notSent > 0 ? [`${notSent} not sent`] : []),
  ];
  ui.report({ tone: done > 0 && !failed ? "info" : "error", text: clean(parts.join("; ")) });
  return true;
}

/**
 * An interrupt a bulk decision sends, on one line cut to the screen: its run, its node, and what
 * it proposes (a tool call's arguments, its data, else the values it shows), else its question.
 */
function decidedLine(interrupt: InterruptRecord, width: number): Line {
  const details = interruptDetails(interrupt.request, width);
  const head = `${interrupt.runId} ${clean(interrupt.node)} `;
  const room = Math.max(10, width - CONFIRM_MARGIN - displayWidth(head) - 1);
  return [seg(`${interrupt.runId} `, { color: ACCENT }), seg(`${clean(interrupt.node)} `, { bold: true }), details ? seg(truncate(clean(details), room)) : seg(truncate(clean(interrupt.request.question ?? ""), room), { color: MUTED })];
}

/**
 * The global queue of pending interrupts, oldest first (or by deadline, soonest first: what a
 * timeout is about to answer); `enter` opens the operator panel;
 * `space` marks several for one decision on all of them.
 */
export function InterruptsView({ width, height }: { width: number; height: number }) {
  const services = useServices();
  const { nav, copy, operator, ui } = services;
  const { interrupts: pending, runs, queueRead } = useSnapshot();
  const [pickedId, setPickedId] = useRemembered<string | undefined>("interrupt-selected", undefined);
  const [markedIds, setMarkedIds] = useRemembered<readonly string[]>("interrupt-marks", []);
  const [filterText, setFilterText] = useRemembered("interrupt-filter", "");
  const [sort, setSort] = useRemembered<InterruptSort>("interrupt-sort", DEFAULT_INTERRUPT_SORT);
  const interrupts = useMemo(() => interruptRows(pending, filterText, sort, runs), [pending, filterText, sort, runs]);
  // Marks of interrupts answered meanwhile (here or elsewhere) fall away; those the filter hides stay.
  const marked = pending.filter((i) => markedIds.includes(i.id));
  const hiddenMarks = marked.filter((i) => !interrupts.includes(i)).length;
  // An interrupt answered meanwhile leaves the cursor where it was (on the next one), not at the top.
  const lastIndex = useRef(0);
  // A new filter or order starts at its top.
  const reorder = () => {
    lastIndex.current = 0;
    setPickedId(undefined);
  };
  let index = interrupts.findIndex((i) => i.id === pickedId);
  if (index < 0) index = Math.max(0, Math.min(lastIndex.current, interrupts.length - 1));
  lastIndex.current = index;
  const selected = interrupts[index];
  const sending = useRef(false);
  const decide = (decision: BulkDecision) => {
    if (sending.current) return;
    sending.current = true;
    return decideMarked(services, marked, decision, width, (sent) => setMarkedIds((ids) => ids.filter((id) => !sent.some((i) => i.id === id)))).finally(() => (sending.current = false));
  };
  const rows = Math.max(1, height - 2);
  const start = useWindow(interrupts.length, index, rows);
  const now = useClock(interrupts.slice(start, start + rows).flatMap((i) => [i.createdAt, i.deadline?.at]));
  useKeys(PRIORITY.view, {
    ...listHandlers(interrupts.length, index, rows, (i) => setPickedId(interrupts[i]?.id)),
    open: selected && (() => nav.push({ kind: "operator", interruptId: selected.id, queue: { filter: filterText, sort } })),
    copy: selected && (() => copy(selected.id)),
    markInterrupt: selected && (() => setMarkedIds(marked.some((i) => i.id === selected.id) ? marked.filter((i) => i.id !== selected.id).map((i) => i.id) : [...marked.map((i) => i.id), selected.id])),
    // With anything marked, `*` clears: it never marks an interrupt that arrived since unseen, nor one the filter hides.
    markAll: (marked.length > 0 || interrupts.length > 0) && (() => setMarkedIds(marked.length > 0 ? [] : interrupts.map((i) => i.id))),
    filter: () => {
      // The queue follows the filter as it is typed, as the runs list does; esc puts back the one before.
      const before = filterText;
      const set = (text: string) => (reorder(), setFilterText(text.trim()));
      return ui
        .prompt({ title: "/", initial: filterText, hint: `text · ${keyNames(INTERRUPT_FILTER_KEYS)} — enter keeps · esc cancels`, onChange: set })
        .then((text) => set(text ?? before));
    },
    back: filterText !== "" && (() => (reorder(), setFilterText(""))),
    sort: () => (reorder(), setSort((s) => ({ key: INTERRUPT_SORTS[(INTERRUPT_SORTS.indexOf(s.key) + 1) % INTERRUPT_SORTS.length]!, reversed: false }))),
    reverse: () => (reorder(), setSort((s) => ({ ...s, reversed: !s.reversed }))),
    // Nothing marked: no handler, so that the second key of a double tap on a panel's decision,
    // arriving here once the panel has closed, changes nothing and says nothing.
    approveMarked: operator !== null && marked.length > 0 && (() => decide("approve")),
    rejectMarked: operator !== null && marked.length > 0 && (() => decide("reject")),
  });

  const questionOf = (i: InterruptRecord) => i.request.question ?? (runs.get(i.runId)?.workflow ? `(${runs.get(i.runId)!.workflow})` : "");
  const c = useMemo(() => queueColumns(width, interrupts, questionOf), [width, interrupts, runs]);
  const head = [
    fit("#", c.k),
    fit("AGE", c.age, "right"),
    ...(c.run > 0 ? [fit("RUN", c.run)] : []),
    fit("NODE", c.node),
    ...(c.kind > 0 ? [fit("KIND", c.kind)] : []),
    ...(c.deadline > 0 ? [fit("DEADLINE", c.deadline)] : []),
    ...(c.values > 0 && c.valuesFirst ? [fit("SHOWS", c.values)] : []),
    fit("QUESTION", c.question),
    ...(c.values > 0 && !c.valuesFirst ? [fit("SHOWS", c.values)] : []),
  ];
  const count = `${pending.length} pending${interrupts.length !== pending.length ? `, ${interrupts.length} shown` : ""}`;
  const lines: Line[] = [
    [
      seg(" Interrupts", { bold: true }),
      ...(!queueRead
        ? [seg("  reading the queue…", { color: MUTED })]
        : marked.length === 0
        ? [seg(`  ${count}, ${interruptSortLabel(sort)} · enter answers · space marks`, { color: MUTED })]
        : [
            seg(`  ${count}, ${interruptSortLabel(sort)} · `, { color: MUTED }),
            seg(`${marked.length} marked${hiddenMarks > 0 ? ` (${hiddenMarks} not shown)` : ""}`, { color: "yellow", bold: true }),
            seg(operator ? ": a approves, r rejects them" : "", { color: MUTED }),
          ]),
      ...(filterText ? [seg("  filter: ", { color: MUTED }), seg(clean(filterText), { color: "yellow" })] : []),
    ],
    [seg(` ${head.join(" ")}`, { color: MUTED, bold: true })],
  ];
  if (queueRead && interrupts.length === 0) lines.push([seg(pending.length === 0 ? " nothing is waiting for an operator" : " no interrupt matches the filter (esc clears it)", { color: MUTED })]);
  for (let i = start; i < Math.min(interrupts.length, start + rows); i++) {
    const it = interrupts[i]!;
    const values = c.values > 0 ? [seg(`${fit(shownValues(it), c.values)}${c.valuesFirst ? " " : ""}`, { color: MUTED })] : [];
    const line: Line = [
      seg(markedIds.includes(it.id) ? "◆" : " ", { color: ACCENT }),
      seg(`${fit(String(i + 1), c.k, "right")} `, { color: MUTED }),
      seg(`${fit(ago(it.createdAt, now), c.age, "right")} `),
      ...(c.run > 0 ? [seg(`${runCell(c, it.runId)} `, { color: ACCENT })] : []),
      seg(`${fit(clean(it.node), c.node)} `, { bold: true }),
      ...(c.kind > 0 ? [seg(`${fit(it.kind, c.kind)} `, { color: "magenta" })] : []),
      ...(c.deadline > 0 ? [seg(`${fit(clean(deadlineText(it.deadline, now)), c.deadline)} `, { color: "yellow" })] : []),
      ...(c.valuesFirst ? values : []),
      seg(`${fit(clean(questionOf(it)), c.question)} `),
      ...(c.valuesFirst ? [] : values),
    ];
    lines.push(i === index ? highlight(line, width) : line);
  }
  return <Lines lines={lines} width={width} height={height} />;
}
