import { Box } from "ink";
import { useEffect, useSyncExternalStore } from "react";
import { currentStep, nextRetry, type RunRecord } from "../../../engine/index.js";
import { Lines, lineWidth, seg, type Line } from "../components/lines.js";
import { useServices } from "../context.js";
import { useClock } from "../hooks/use-clock.js";
import { useKeys } from "../hooks/use-keys.js";
import { useRemembered } from "../hooks/use-remembered.js";
import { notHere, useRunActions } from "../hooks/use-run-actions.js";
import { useSendSignal } from "../hooks/use-send-signal.js";
import type { ConsoleSnapshot } from "../data.js";
import { useRunDetail, type RunDetail } from "../hooks/use-run-detail.js";
import { PRIORITY } from "../key-router.js";
import { ago, clean } from "../text.js";
import { ACCENT, MUTED, runLook } from "../theme.js";
import { CheckpointsTab } from "./checkpoints-tab.js";
import { EventsTab } from "./events-tab.js";
import { GraphTab } from "./graph-tab.js";
import { doneInStep, withoutDone } from "../current-nodes.js";
import { runActivity, runDuration, runTimes } from "./runs-view.js";
import { describeFailure } from "./run-failure.js";
import { batchOnRuns } from "./run-batch.js";
import { StateTab } from "./state-tab.js";
import { TimelineTab } from "./timeline-tab.js";
import { deadlineText, runDeadlineText } from "../../text/deadline-text.js";
import { inboxText, signalWaitText, signalWaits } from "../../text/signal-text.js";
import { hasEnded } from "../run-end.js";

export const TABS = ["Graph", "Events", "State", "Checkpoints", "Timeline"] as const;

function summary(detail: RunDetail, now: number, orphaned: boolean, child: RunRecord | undefined, pausedAt: number | undefined, askedBelow: boolean, width: number): Line[] {
  const { run } = detail;
  const pending = detail.interrupts.filter((i) => i.status === "pending");
  const look = runLook(run.status, orphaned);
  const first: Line = [
    // First on the line (a narrow terminal cuts its end): an orphaned run says so before anything.
    seg(` ${look.glyph} ${look.word}`, { color: look.color, bold: true }),
    seg(`  ${run.id}`, { bold: true }),
    seg(`  ${clean(run.workflow)}`, { color: ACCENT }),
    // Its version, as `runs` prints it (an upgrade moves a run to another), where the line has room.
    ...(width >= 100 ? [seg(`@${run.version.slice(0, 8)}`, { color: MUTED })] : []),
    seg(`  step ${currentStep(run)}`),
    ...(pending.length > 0 ? [seg(`  ⚑ ${pending.length}`, { color: "magenta", bold: true })] : []),
    seg(`  age ${ago(run.createdAt, now)}${run.startedAt ? ` · ran ${runDuration(run, now, pausedAt)}` : ""}`, { color: MUTED }),
    // On the first line, which is short: the error's own line is often cut.
    ...(run.error ? [seg("  w: why it failed", { color: MUTED })] : []),
  ];
  const second: Line = [];
  const signals = signalWaits(run, detail.tasks);
  const activity = runActivity(withoutDone(run, doneInStep(run, detail.tasks)), now, pending.map((i) => i.node), orphaned, child, nextRetry(detail.tasks, undefined, now), undefined, signals);
  if (activity) second.push(seg(` ${clean(activity)}`, { color: run.status === "failed" ? "red" : look.color }));
  // A node parked on a signal beside others at work (or a timer): the run's status does not say it.
  if (signals.length > 0 && run.reason !== "signal") second.push(seg(`${activity ? " ·" : ""} ${clean(signalWaitText(signals))}`, { color: look.color }));
  if (pending[0]) second.push(seg(`${pending[0].request.question ? ` — ${clean(pending[0].request.question)}` : ""} · o answers`, { color: "magenta" }));
  else if (askedBelow) second.push(seg(" · o answers it", { color: "magenta" }));
  if (run.forkOf) second.push(seg(`  fork of ${run.forkOf.checkpointId} — p opens its source`, { color: MUTED }));
  else if (run.parentRunId) second.push(seg(`  child of ${run.parentRunId} — p opens it`, { color: MUTED }));
  if (run.breakpoints.length > 0) second.push(seg(`  ◉ breakpoints: ${run.breakpoints.map((b) => clean(b)).join(", ")}`, { color: "yellow" }));
  if (run.recoveries > 0) second.push(seg(`  recovered ${run.recoveries}×`, { color: MUTED }));
  const third = inboxAndDeadline(run, now, width);
  return third ? [first, second, third] : [first, second];
}

/**
 * The signals no node has taken and when the run is canceled if it has not ended, on a line of
 * their own when it has either; where the whole does not fit, the deadline said short (`cancel in
 * 23h`), then the inbox without the run its signals were carried from.
 */
function inboxAndDeadline(run: RunRecord, now: number, width: number): Line | undefined {
  const inbox = (carried: boolean): Line => (run.inbox?.length ? [seg(` ✉ inbox: ${clean(inboxText(run.inbox, { carried }))}`, { color: "cyan" })] : []);
  const at = hasEnded(run) ? null : run.deadlineAt;
  const deadline = (held: Line, text: string): Line => [...held, seg(` ${held.length > 0 ? " " : ""}⏱ deadline: ${text}`, { color: "yellow" })];
  const choices: Line[] =
    typeof at !== "number"
      ? [inbox(true), inbox(false)]
      : [deadline(inbox(true), runDeadlineText(at, now)), ...[true, false].map((carried) => deadline(inbox(carried), deadlineText({ at, decision: "cancel" }, now)))];
  const line = choices.find((choice) => lineWidth(choice) <= width) ?? choices.at(-1)!;
  return line.length > 0 ? line : undefined;
}

/** A pending interrupt of a run `runId` waits on (its sub-workflow's run, and so on down), or "". */
function questionBelow(snap: ConsoleSnapshot, runId: string): string {
  let id = snap.runs.get(runId)?.waitingOn;
  for (let depth = 0; id && depth < 16; depth++) {
    const asked = snap.interrupts.find((i) => i.runId === id);
    if (asked) return asked.id;
    id = snap.runs.get(id)?.waitingOn;
  }
  return "";
}

/** The run `p` opens: a sub-workflow run's parent, or the run a fork came from. */
function parentOf(run: RunRecord | undefined): string | null {
  return run ? (run.parentRunId ?? run.forkOf?.runId ?? null) : null;
}

function tabBar(active: number): Line {
  const line: Line = [seg(" ")];
  TABS.forEach((name, i) => {
    line.push(seg(` ${i + 1} ${name} `, i === active ? { inverse: true, bold: true } : { color: MUTED }), seg(" "));
  });
  return line;
}

/** One run: a summary, then tabs (Graph · Events · State · Checkpoints · Timeline). */
export function RunView({ runId, initialTab, width, height }: { runId: string; initialTab: number; width: number; height: number }) {
  const services = useServices();
  const { nav, ui, data, copy } = services;
  const { detail, error, deleted } = useRunDetail(runId);
  // What it showed is gone from the store: nothing here is true any more (k9s goes back too).
  useEffect(() => {
    if (!deleted) return;
    const what = detail ? "was deleted by another process (pitwall delete or prune)" : "not found";
    ui.report({ tone: "error", text: `run ${runId} ${what}; back to the runs list` });
    nav.home();
  }, [deleted]);
  // A boolean, so that other runs' changes do not draw this view again.
  const orphaned = useSyncExternalStore(data.subscribe, () => data.snapshot().orphans.has(runId));
  const pausedAt = useSyncExternalStore(data.subscribe, () => data.snapshot().pausedAt.get(runId));
  // The child run it waits on, as listed: whether it paused for an operator.
  const waitingOn = useSyncExternalStore(data.subscribe, () => {
    const snap = data.snapshot();
    const child = snap.runs.get(snap.runs.get(runId)?.waitingOn ?? "");
    return child ? `${child.id}:${child.status}` : "";
  });
  // The question a run waits on further down (its sub-workflow's, or that one's own sub-workflow's).
  const askedBelow = useSyncExternalStore(data.subscribe, () => questionBelow(data.snapshot(), runId));
  const [tab, setTab] = useRemembered("tab", initialTab);
  useEffect(() => ui.moved(), [tab]);
  const now = useClock(detail ? [...runTimes(detail.run, nextRetry(detail.tasks, undefined, Date.now())), hasEnded(detail.run) ? null : detail.run.deadlineAt] : []);
  const runActions = useRunActions(detail, {});
  const sendSignal = useSendSignal(detail);
  const pending = detail?.interrupts.find((i) => i.status === "pending");

  useKeys(PRIORITY.view, {
    tab: (key) => setTab(Number(key) - 1),
    nextTab: () => setTab((t) => (t + 1) % TABS.length),
    prevTab: () => setTab((t) => (t + TABS.length - 1) % TABS.length),
    answer: pending
      ? () => nav.push({ kind: "operator", interruptId: pending.id })
      : askedBelow
        ? () => nav.push({ kind: "operator", interruptId: askedBelow })
        : notHere(ui, `o: run ${runId} has no pending interrupt, nor a sub-workflow waiting for one`),
    parent: parentOf(detail?.run) ? () => nav.push({ kind: "run", runId: parentOf(detail!.run)! }) : notHere(ui, `p: run ${runId} has no parent run (it is neither a sub-workflow's run nor a fork)`),
    cancelRun: runActions.cancelRun,
    signal: sendSignal,
    // As the runs list's U on the one run: the confirmation says what it moves from and to, or why not.
    upgradeRun: services.operator !== null && detail !== undefined && (() => void batchOnRuns(services, { runs: [detail.run], snap: data.snapshot(), width }, "upgrade", () => undefined)),
    copy: () => copy(runId),
    describe: () => describeFailure(services, runId, width),
    // The Events tab filters; the other tabs say where filtering is.
    filter: notHere(ui, `/: the ${TABS[tab]} tab has nothing to filter; the Events tab (2) filters events by type or node`),
  });

  if (!detail) {
    return <Lines lines={[[seg(error ? ` ✗ ${clean(error)}` : ` reading run ${runId}…`, { color: error ? "red" : MUTED })]]} width={width} height={height} />;
  }
  const child = waitingOn ? data.snapshot().runs.get(waitingOn.slice(0, waitingOn.lastIndexOf(":"))) : undefined;
  const head = [...summary(detail, now, orphaned, child, pausedAt, askedBelow !== "", width), tabBar(tab)];
  const body = height - head.length;
  return (
    <Box flexDirection="column" height={height}>
      <Lines lines={head} width={width} />
      <TabBody tab={tab} detail={detail} width={width} height={body} />
    </Box>
  );
}

function TabBody({ tab, detail, width, height }: { tab: number; detail: RunDetail; width: number; height: number }) {
  switch (tab) {
    case 0:
      return detail.definition ? (
        <GraphTab detail={detail} definition={detail.definition} width={width} height={height} />
      ) : (
        <Lines lines={[[seg(` workflow version ${detail.run.version} is not in the store`, { color: "red" })]]} width={width} />
      );
    case 1:
      return <EventsTab runId={detail.run.id} width={width} height={height} />;
    case 2:
      return <StateTab detail={detail} width={width} height={height} />;
    case 3:
      return <CheckpointsTab detail={detail} width={width} height={height} />;
    default:
      return <TimelineTab detail={detail} width={width} height={height} />;
  }
}
