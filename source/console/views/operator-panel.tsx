import { useEffect, useMemo, useRef, useState } from "react";
import { checkJson, editPatch, errorMessage, readState, type InterruptRecord, type RunRecord, type State } from "../../../engine/index.js";
import { Lines, seg, wrapWords, type Line } from "../components/lines.js";
import { act, useServices, useSnapshot } from "../context.js";
import { useClock } from "../hooks/use-clock.js";
import { rereadState, stateValidation, useEditState } from "../hooks/use-edit-state.js";
import { useKeys } from "../hooks/use-keys.js";
import { explain } from "../keymap.js";
import { PRIORITY } from "../key-router.js";
import { ago, clean, clock, inline } from "../text.js";
import { ACCENT, MUTED } from "../theme.js";
import { jsonLines } from "./json-lines.js";
import { WHOLE_QUEUE, interruptRows, stepFrom, type QueueOrder } from "./interrupt-rows.js";
import { watchForReask } from "../reask-watch.js";
import { deadlineText } from "../../text/deadline-text.js";
import { editedProposal } from "../../text/interrupt-text.js";
import { stateChangeSince, stateChangeText, type StateChange } from "../state-change.js";

/** Decisions with a key of their own; any other allowed decision goes through `x`. */
const KEYED = new Set(["approve", "reject", "edit", "respond"]);

export function resolvedBy(interrupt: InterruptRecord): string {
  const r = interrupt.resolution;
  if (!r) return `interrupt ${interrupt.id} is already resolved`;
  return `already resolved by ${clean(r.actor)} at ${clock(r.at)} (${clean(r.decision)}${r.reason ? `: ${clean(r.reason)}` : ""})`;
}

interface Loaded {
  interrupt?: InterruptRecord;
  run?: RunRecord;
  /** How the run's state moved on since the question was asked (an operator's edit meanwhile). */
  changed?: StateChange;
  error?: string;
}

/** The interrupt and its run, read again whenever the run changes (someone else may answer first, or edit the state). */
function useInterrupt(id: string): Loaded {
  const { store, feed } = useServices();
  const [state, setState] = useState<Loaded>({});
  useEffect(() => {
    let alive = true;
    let runId: string | undefined;
    const load = async () => {
      try {
        const interrupt = await store.getInterrupt(id);
        if (!interrupt) throw new Error(`interrupt ${id} not found`);
        runId = interrupt.runId;
        const run = await store.getRun(interrupt.runId);
        const changed = run ? await stateChangeSince(store, interrupt, run) : undefined;
        if (alive) setState({ interrupt, ...(run ? { run } : {}), ...(changed ? { changed } : {}) });
      } catch (error) {
        if (alive) setState({ error: errorMessage(error) });
      }
    };
    void load();
    const stop = feed.listen((change) => (runId === undefined || change.runs.has(runId)) && void load());
    return () => {
      alive = false;
      stop();
    };
  }, [store, feed, id]);
  return state;
}

/** The response typed as text: JSON when the interrupt's schema wants something else than a string. */
function parseResponse(text: string, interrupt: InterruptRecord): unknown {
  const type = interrupt.request.responseSchema?.type;
  if (type === undefined || type === "string") return text;
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return text;
  }
}

/**
 * Answering one interrupt: the question, what it shows, and only the decisions it allows.
 * After a decision the panel goes back where the operator came from, never on to another
 * interrupt: a key pressed twice must not decide one nobody has read. If someone answered first,
 * the panel says who and when, and sends nothing.
 */
/** What a decision does at this interrupt, in one line, for its confirmation. */
export function decisionMeaning(interrupt: InterruptRecord, decision: string): string {
  const node = `"${clean(interrupt.node)}"`;
  if (decision === "skip") {
    return interrupt.kind === "recovery"
      ? `${node} will not run again: what it may have done stays done, and it writes nothing.`
      : `${node} will not run: the run goes on along its edges as if it had written nothing.`;
  }
  if (decision === "retry") return `${node} runs again, though it runs at most once: it may have done part of its work already.`;
  if (decision === "reject" && interrupt.kind === "approval") return `Run ${interrupt.runId} goes on along the approval's reject route.`;
  return `${node} gets the answer "${decision}" when it runs again, and goes on from there.`;
}

export function OperatorPanel({ interruptId, queue = WHOLE_QUEUE, width, height }: { interruptId: string; queue?: QueueOrder | undefined; width: number; height: number }) {
  const services = useServices();
  const { store, nav, ui, operator, feed } = services;
  const { interrupts: pending, runs } = useSnapshot();
  // `n`/`N` walk the queue as it was shown: its filter's interrupts, in its order.
  const interrupts = useMemo(() => interruptRows(pending, queue.filter, queue.sort, runs), [pending, queue, runs]);
  const { interrupt, run, changed, error } = useInterrupt(interruptId);
  const now = useClock([interrupt?.createdAt, interrupt?.deadline?.at]);
  const edit = useEditState();
  const position = interrupts.findIndex((i) => i.id === interruptId);
  const decisions = interrupt?.request.decisions ?? [];
  const open = interrupt?.status === "pending";
  const allows = (d: string) => open && operator !== null && decisions.includes(d);
  const others = decisions.filter((d) => !KEYED.has(d));
  // Text answers a question; a response that must be an object (a tool call's arguments) is edited with `e`.
  const schemaType = interrupt?.request.responseSchema?.type;
  const textAnswers = schemaType === undefined || schemaType === "string";
  const respondAs = !textAnswers ? undefined : decisions.includes("respond") ? "respond" : interrupt?.request.responseSchema ? decisions.find((d) => d !== "reject") : undefined;

  const step = (delta: 1 | -1) => {
    const next = stepFrom(interrupts, interruptId, delta);
    return next && (() => nav.replace({ kind: "operator", interruptId: next.id, queue }));
  };
  // An answer covers what was asked: with the state changed since, the node may ask again, and the footer says why.
  const resolve = async (decision: string, input: { response?: unknown; patch?: unknown; reason?: string }): Promise<string> => {
    const why = changed && stateChangeText(changed);
    const unwatch = why ? watchForReask(feed, ui, interrupt!, why) : undefined;
    try {
      const { effect } = await operator!.resolve(interrupt!.id, { decision, ...input });
      return why ? `${effect}; ${why}: it may ask again` : effect;
    } catch (error) {
      unwatch?.();
      throw error;
    }
  };
  // A decision key pressed again while the first is on its way (a double tap) sends nothing more.
  const sending = useRef(false);
  const send = async (decision: string, input: { response?: unknown; patch?: unknown; reason?: string }) => {
    if (!operator || !interrupt || sending.current) return;
    sending.current = true;
    try {
      const fresh = await store.getInterrupt(interrupt.id);
      if (fresh && fresh.status !== "pending") return ui.report({ tone: "error", text: `${resolvedBy(fresh)}; nothing was sent` });
      if (await act(ui, `${decision} ${interrupt.id}`, () => resolve(decision, input))) nav.pop();
    } finally {
      sending.current = false;
    }
  };

  // A decision key that does not apply to this interrupt says why (answered already, and by whom).
  const whyNot = (key: string, notHere: string) => {
    if (!interrupt || !operator) return undefined;
    const text =
      interrupt.status !== "pending"
        ? `interrupt ${interrupt.id} ${resolvedBy(interrupt)}; nothing sent`
        : `${key}: ${key === "t" && !textAnswers ? "this interrupt's answer is a JSON object, not text: e edits it" : `${notHere}; its decisions are ${decisions.join(", ")}`}`;
    return explain(() => ui.report({ tone: interrupt.status !== "pending" ? "error" : "info", text }));
  };

  useKeys(PRIORITY.view, {
    approve: (allows("approve") && (() => send("approve", {}))) || whyNot("a", "approve is not one of this interrupt's decisions"),
    copy: () => services.copy(interruptId),
    reject:
      (allows("reject") &&
      (async () => {
        const answer = await ui.confirm({
          title: `Reject: ${clean(interrupt!.request.question ?? interrupt!.node)}`,
          body: wrapWords(decisionMeaning(interrupt!, "reject"), width - 4).map((l) => [seg(l, { color: MUTED })]),
          action: "Reject",
          reason: "required",
          runId: interrupt!.runId,
        });
        if (answer.closed) return;
        if (answer.ok) await send("reject", { reason: answer.reason });
        else ui.report({ tone: "info", text: "reject not confirmed; nothing sent" });
      })) ||
      whyNot("r", "reject is not one of this interrupt's decisions"),
    edit:
      (allows("edit") &&
      !!edit &&
      (async () => {
        const resolveWith = async (input: { patch?: unknown; response?: unknown }, reason: string) => {
          const fresh = await store.getInterrupt(interrupt!.id);
          if (fresh && fresh.status !== "pending") throw new Error(`${resolvedBy(fresh)}; nothing was sent`);
          const effect = await resolve("edit", { ...input, ...(reason ? { reason } : {}) });
          setTimeout(() => nav.pop(), 0);
          return effect;
        };
        const proposal = editedProposal(interrupt!.request);
        if (proposal) {
          return edit({
            what: `Editing the proposal of interrupt ${interrupt!.id} (run ${interrupt!.runId}, node ${interrupt!.node})`,
            value: proposal.value as State,
            validate: (value) => checkJson(proposal.schema, value, "the edited proposal") as State,
            runId: interrupt!.runId,
            action: "Edit and resolve",
            send: (value, reason) => resolveWith({ response: value }, reason),
          });
        }
        const definition = run ? await services.data.workflow(run.version) : undefined;
        if (!run || !definition) return ui.report({ tone: "error", text: "cannot edit: the run's workflow version is not in the store" });
        const state = await readState(store, run.id, run.headN);
        await edit({
          what: `Editing the state of run ${run.id} (${run.workflow}) to resolve interrupt ${interrupt!.id} with "edit"`,
          at: run.headN,
          value: state,
          validate: stateValidation(definition),
          runId: run.id,
          action: "Edit and resolve",
          send: (edited, reason, base) => resolveWith({ patch: editPatch(base, edited) }, reason),
          reread: () => rereadState(store, run.id),
        });
      })) ||
      whyNot("e", "edit is not one of this interrupt's decisions"),
    respond:
      (respondAs !== undefined &&
      allows(respondAs) &&
      (async () => {
        const text = await ui.prompt({ title: "Response:", hint: "enter sends · esc cancels" });
        if (text === undefined) return ui.report({ tone: "info", text: "no response sent" });
        await send(respondAs, { response: parseResponse(text, interrupt!) });
      })) ||
      whyNot("t", "this interrupt takes no text answer"),
    decide:
      (others.some(allows) &&
      (async () => {
        const text = await ui.prompt({ title: "Decision:", complete: (t) => others.filter((d) => d.startsWith(t) && d !== t), hint: `one of ${others.join(", ")} — tab completes` });
        if (text === undefined) return;
        const decision = text.trim();
        if (!others.includes(decision)) return ui.report({ tone: "error", text: `"${clean(text)}" is not one of ${others.join(", ")}; nothing sent` });
        // The same keys mean different things at different interrupts: say what this one does first.
        const named = `${decision[0]!.toUpperCase()}${decision.slice(1)}`;
        const answer = await ui.confirm({
          title: `${named}: ${clean(interrupt!.request.question ?? interrupt!.node)}`,
          body: wrapWords(decisionMeaning(interrupt!, decision), width - 4).map((l) => [seg(l, { color: MUTED })]),
          action: named,
          reason: "optional",
          runId: interrupt!.runId,
        });
        if (answer.closed) return;
        if (!answer.ok) return ui.report({ tone: "info", text: `${decision} not confirmed; nothing sent` });
        await send(decision, answer.reason ? { reason: answer.reason } : {});
      })) ||
      whyNot("x", "no other decision here"),
    next: step(1),
    prev: step(-1),
    open: interrupt && (() => nav.push({ kind: "run", runId: interrupt.runId })),
    whole: interrupt && (() => nav.push({ kind: "text", title: `interrupt ${interrupt.id}: the whole request`, lines: jsonLines(interrupt.request, width) })),
  });

  if (!interrupt) {
    return <Lines lines={[[seg(error ? ` ✗ ${clean(error)}` : " reading the interrupt…", { color: error ? "red" : MUTED })]]} width={width} height={height} />;
  }
  const lines: Line[] = [
    [
      seg(" ⚑ ", { color: "magenta", bold: true }),
      seg(position >= 0 ? `Interrupt ${position + 1} of ${interrupts.length}` : "Interrupt", { bold: true }),
      ...(queue.filter ? [seg(` (filter: ${clean(queue.filter)})`, { color: "yellow" })] : []),
      seg(`  ${interrupt.kind} at ${clean(interrupt.node)}`, { color: "magenta" }),
      seg(`  ${interrupt.runId}`, { color: ACCENT }),
      seg(run ? ` (${clean(run.workflow)})` : "", { color: MUTED }),
      seg(`  step ${interrupt.step}  ${ago(interrupt.createdAt, now)} ago`, { color: MUTED }),
    ],
    [],
  ];
  // Values shown were read when it was asked: an edit since makes them stale, and an answer may be asked again.
  if (changed) {
    for (const part of wrapWords(`⚠ ${stateChangeText(changed)}: what it shows may be out of date, and answering may make it ask again`, width - 4)) {
      lines.push([seg(`  ${part}`, { color: "yellow", bold: true })]);
    }
    lines.push([]);
  }
  // The question whole (it is what is being decided), broken between words.
  for (const part of wrapWords(clean(interrupt.request.question ?? `(${interrupt.kind} interrupt at ${interrupt.node})`), width - 4)) {
    lines.push([seg(`  ${part}`, { bold: true })]);
  }
  // Unanswered by then, a worker answers it so.
  if (interrupt.status === "pending" && interrupt.deadline) lines.push([seg(`  ⏱ deadline: ${deadlineText(interrupt.deadline, now)}`, { color: "yellow" })]);
  // Whether something was left out: the panel says so, and `v` shows it all.
  let cut = false;
  const upTo = (all: Line[], max: number) => {
    if (all.length > max) cut = true;
    return all.slice(0, max);
  };
  // The values shown share the room the screen has (at least a few lines each), not a fixed few.
  const room = Math.max(0, height - lines.length - 4);
  const shown = Object.entries(interrupt.request.show ?? {});
  const hasData = interrupt.request.data !== undefined;
  const share = Math.max(6, Math.floor(room / Math.max(1, shown.length + (hasData ? 1 : 0))));
  if (shown.length > 0) {
    lines.push([], [seg("  Shows", { color: MUTED })]);
    for (const [key, value] of shown) {
      const label = `    ${clean(key)}: `;
      const one = inline(value, false, 400);
      // A value that does not fit on its line is shown as indented JSON, as much as fits.
      if (one.length + label.length <= width || typeof value !== "object" || value === null) lines.push([seg(label, { color: ACCENT }), seg(one)]);
      else lines.push([seg(label, { color: ACCENT })], ...upTo(jsonLines(value, width - 6), share).map((l) => [seg("     "), ...l]));
    }
  }
  if (hasData) {
    lines.push([], [seg("  Data", { color: MUTED })], ...upTo(jsonLines(interrupt.request.data, width - 4), share).map((l) => [seg("   "), ...l]));
  }
  // What can be decided always shows, whatever had to be cut above it.
  const tail: Line[] = [[]];
  if (interrupt.status !== "pending") {
    tail.push([seg(`  ✓ ${resolvedBy(interrupt)}`, { color: "yellow", bold: true })]);
  } else if (!operator) {
    tail.push([seg(`  read-only console: allowed decisions are ${decisions.join(", ")}`, { color: MUTED })]);
  } else {
    const keys: Line = [seg("  Decide: ", { color: MUTED })];
    const add = (key: string, label: string) => keys.push(seg(key, { bold: true, color: ACCENT }), seg(` ${label}   `));
    if (decisions.includes("approve")) add("a", "approve");
    if (decisions.includes("reject")) add("r", "reject (with a reason)");
    if (decisions.includes("edit")) add("e", editedProposal(interrupt.request) ? "edit the proposal in $EDITOR" : "edit the state in $EDITOR");
    if (respondAs) add("t", "respond with text");
    if (others.length > 0) add("x", others.join(" / "));
    tail.push(keys);
  }
  if (cut || lines.length > Math.max(1, height - tail.length)) tail.unshift([seg("  … more than fits here: v shows the whole request", { color: MUTED })]);
  return <Lines lines={[...lines.slice(0, Math.max(1, height - tail.length)), ...tail]} width={width} height={height} />;
}
