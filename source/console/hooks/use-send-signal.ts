import { useRef } from "react";
import { signalWaits } from "../../text/signal-text.js";
import { seg, type Line } from "../components/lines.js";
import { act, useServices } from "../context.js";
import { askSignal } from "../signal-prompt.js";
import type { Handler } from "../keymap.js";
import { hasEnded } from "../run-end.js";
import { clean, inline } from "../text.js";
import { MUTED } from "../theme.js";
import { notHere } from "./use-run-actions.js";
import type { RunDetail } from "./use-run-detail.js";

/** Names the run's nodes take signals of: those its tasks wait for now first, then its wait nodes'. */
function signalNames(detail: RunDetail): string[] {
  const waited = signalWaits(detail.run, detail.tasks).map((w) => w.name);
  const declared = Object.values(detail.definition?.nodes ?? {}).flatMap((node) => (node.kind === "wait" && node.signal !== undefined ? [node.signal] : []));
  return [...new Set([...waited, ...declared])];
}

/** The node of the run that waits for `name` now, the one a signal of it lets go on. */
function waiterOf(detail: RunDetail, name: string): string | undefined {
  return signalWaits(detail.run, detail.tasks).find((w) => w.name === name)?.node;
}

/**
 * What sending `name` does, as the run stands: the node it lets go on, or that it is kept — and
 * the run below (a sub-workflow's) that waits for it, if one does.
 */
function effectLines(detail: RunDetail, name: string, data: unknown, below: string | undefined): Line[] {
  const waiting = waiterOf(detail, name);
  return [
    waiting
      ? [seg(clean(waiting), { bold: true }), seg(" waits for it and goes on with it.")]
      : [seg(`No node waits for ${clean(name)} now: it is kept until a node takes it.`, { color: MUTED })],
    ...(!waiting && below ? [[seg(`Run ${clean(below)} waits for it: signal that run.`, { bold: true })]] : []),
    data === undefined ? [seg("No data.", { color: MUTED })] : [seg("Data: ", { color: MUTED }), seg(inline(data))],
  ];
}

/**
 * `!` in a run: sends it a signal — its name (the one its nodes wait for offered), then its data as
 * JSON (empty: none; text that is not JSON is refused, nothing sent) — once a confirmation that says
 * what it lets go on is accepted. Undefined where the console may not write.
 */
export function useSendSignal(detail: RunDetail | undefined): Handler | undefined {
  const { operator, ui } = useServices();
  // The dialogs take a while: what they say is of the run as it is by then.
  const latest = useRef(detail);
  latest.current = detail;
  if (!operator || !detail) return undefined;
  const { run } = detail;
  if (hasEnded(run)) return notHere(ui, `!: run ${run.id} has ended (${run.status}); a signal reaches only a run that has not`);
  return async () => {
    const waited = signalWaits(run, detail.tasks)[0];
    const typed = await askSignal(ui, waited?.name ?? "", signalNames(detail), waited ? `${clean(waited.node)} waits for ${waited.name}` : "");
    if (!typed) return;
    const { name, data } = typed;
    const now = latest.current ?? detail;
    // Where none of the run's nodes waits for it, a sub-workflow's run may: the sender likely meant that one.
    const below = waiterOf(now, name) ? undefined : await operator.signalWaiterBelow(run.id, name).then((r) => r?.id, () => undefined);
    const answer = await ui.confirm({
      title: `Send signal ${name} to run ${run.id}?`,
      body: effectLines(now, name, data, below),
      action: "Send signal",
      reason: "optional",
      runId: run.id,
    });
    if (answer.closed) return;
    if (!answer.ok) return ui.report({ tone: "info", text: `signal ${name} not confirmed; nothing sent` });
    await act(ui, `signal ${name}`, async () => (await operator.signal(run.id, name, data, answer.reason ? { reason: answer.reason } : {})).effect);
  };
}
