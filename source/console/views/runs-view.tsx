import { useEffect, useMemo, useRef, useState } from "react";
import { TERMINAL_RUN_STATUSES, UNCLAIMED_MS, checkDeletion, currentStep, errorMessage, unclaimedWhy, type RetryWait, type RunRecord, type RunsAtOnce, type WorkerRecord } from "../../../engine/index.js";
import { Lines, seg, type Line, type Seg } from "../components/lines.js";
import { act, useServices, useSnapshot } from "../context.js";
import type { ConsoleSnapshot } from "../data.js";
import { withoutDone } from "../current-nodes.js";
import { useClock } from "../hooks/use-clock.js";
import { useKeys } from "../hooks/use-keys.js";
import { listHandlers } from "../hooks/use-list.js";
import { useLiveCursor } from "../hooks/use-live-cursor.js";
import { useRemembered } from "../hooks/use-remembered.js";
import { PRIORITY } from "../key-router.js";
import { ago, clean, fit, span, displayWidth } from "../text.js";
import { ACCENT, MUTED, ORPHANED_LOOK, runLook } from "../theme.js";
import { batchOnRuns, type RunBatchKind } from "./run-batch.js";
import { describeFailure } from "./run-failure.js";
import { DEFAULT_SORT, RUN_SORTS, parseRunFilter, runRows, sortLabel, type RunRow, type RunSort } from "./run-rows.js";
import { ranMs } from "../../text/run-time.js";
import { signalWaitText, type SignalWait } from "../../text/signal-text.js";

const FLASH_MS = 800;

/** The times a run's row (or header) counts from or down to: its age and duration, a timer, a retry, its wait for a worker. */
export function runTimes(run: RunRecord, retry?: RetryWait): (number | null)[] {
  const queued = run.status === "queued" && !run.waitingOn;
  return [run.createdAt, run.endedAt === null ? run.startedAt : null, run.wakeAt, retry?.at ?? null, queued ? run.updatedAt : null, queued ? run.updatedAt + UNCLAIMED_MS : null];
}

/**
 * What a run is doing or why it stopped, in a few words; `orphaned`: its lease ran out
 * (ConsoleSnapshot.orphans); `workers`: the store's workers' heartbeats, which tell why a run
 * queued for long is not claimed (none runs, none runs its workflow, all those that do are busy);
 * `signals`: what its nodes wait for, paused for signals (ConsoleSnapshot.signalWaits);
 * `atOnce`: its workflow's `limits.runsAtOnce` and running runs, which may hold a queued run back.
 */
export function runActivity(
  run: RunRecord,
  now: number,
  waiting: readonly string[] = [],
  orphaned = false,
  child?: RunRecord,
  retry?: RetryWait,
  workers?: readonly WorkerRecord[],
  signals: readonly SignalWait[] = [],
  atOnce?: RunsAtOnce,
): string {
  switch (run.status) {
    case "running":
      // The lease first: a narrow NOW column must not cut what tells this run from a running one.
      if (orphaned) return `lease ran out${run.current.length > 0 ? ` · ${run.current.join(", ")}` : ""}`;
      // A worker holding the run through a short backoff: the node waits, it does not run.
      return retry && retry.at > now ? `${run.current.join(", ")} · ${retryText(retry, now)}` : run.current.join(", ");
    case "paused": {
      const nodes = [...new Set([...run.current, ...waiting])];
      // Which signal, where: what the operator (or the system that should have sent it) needs to know.
      if (run.reason === "signal") return signals.length > 0 ? signalWaitText(signals) : `waiting for a signal${nodes.length > 0 ? ` at ${nodes.join(", ")}` : ""}`;
      // A run waiting on a failure says which, where the operator looks first.
      return `${run.reason ?? "paused"}${nodes.length > 0 ? `: ${nodes.join(", ")}` : ""}${run.error ? ` — ${run.error.message}` : ""}`;
    }
    case "failed":
      return run.error ? `${run.error.node ? `${run.error.node}: ` : ""}${run.error.message}` : "";
    case "queued":
      if (!run.waitingOn) {
        if (retry && retry.at > now) return retryText(retry, now);
        if (run.wakeAt !== null && run.wakeAt > now) return `timer, wakes in ${ago(now, run.wakeAt)}`;
        return unclaimedWhy(run, now, workers, atOnce) ?? "";
      }
      return `waiting for ${run.waitingOn}${child?.status === "paused" ? `, paused (${runActivity(child, now)})` : ""}`;
    default:
      return "";
  }
}

function retryText(retry: RetryWait, now: number): string {
  return `retry of ${retry.node} in ${ago(now, retry.at)}, attempt ${retry.attempt}${retry.maxAttempts ? ` of ${retry.maxAttempts}` : ""}`;
}

/** The runs below `runId` (its child runs, theirs...) among `runs`. */
function descendants(runs: Iterable<RunRecord>, runId: string): RunRecord[] {
  const children = new Map<string, RunRecord[]>();
  for (const run of runs) if (run.parentRunId !== null) children.set(run.parentRunId, [...(children.get(run.parentRunId) ?? []), run]);
  const found: RunRecord[] = [];
  const queue = [runId];
  while (queue.length > 0) {
    for (const child of children.get(queue.pop()!) ?? []) {
      found.push(child);
      queue.push(child.id);
    }
  }
  return found;
}

/** How long a run has run, as the DUR column shows it (and `s` sorts it). */
export function runDuration(run: RunRecord, now: number, pausedAt: number | undefined): string {
  const ms = ranMs(run, now, pausedAt);
  return ms === undefined ? "" : span(ms);
}

interface Columns {
  status: number;
  id: number;
  workflow: number;
  step: number;
  activity: number;
  age: number;
  duration: number;
  pending: number;
}

/** Column widths for a list `width` wide (one column goes to the selection mark). */
function columns(width: number, idWidth: number, workflowWidth: number): Columns {
  // Narrow terminals show the status as its glyph only: the NOW column needs the room.
  const wide = width >= 120;
  const c: Columns = { status: width >= 100 ? 11 : 1, id: Math.min(32, Math.max(wide ? 24 : 15, idWidth)), workflow: Math.min(wide ? 28 : 19, Math.max(8, workflowWidth)), step: 4, activity: 0, age: 4, duration: 5, pending: 2 };
  // The selection mark and the status, then each shown column after a space.
  const room = () => width - 1 - c.status - Object.entries(c).reduce((sum, [key, w]) => (key === "status" || key === "activity" || w === 0 ? sum : sum + w + 1), 0) - 1;
  // What gives way first on a narrow screen: the names shrink (the run view shows them whole),
  // then age, duration and step go, before what a run is doing and what waits for a person.
  const giveWay = [() => (c.workflow = Math.min(c.workflow, 10)), () => (c.id = Math.min(c.id, 12)), () => (c.age = 0), () => (c.duration = 0), () => (c.step = 0), () => (c.workflow = 0)];
  for (const shrink of giveWay) {
    if (room() >= MIN_NOW) break;
    shrink();
  }
  return { ...c, activity: Math.max(6, room()) };
}

/** The narrowest NOW column worth keeping other columns out for: a reason in a few words. */
const MIN_NOW = 16;

/** One column of a row after a space, or nothing when the screen has no room for it. */
function cell(text: string, width: number, style: Omit<Seg, "text">, align: "left" | "right" = "left"): Seg[] {
  return width > 0 ? [seg(" ", style), seg(fit(text, width, align), style)] : [];
}

function headerLine(c: Columns): Line {
  const style = { color: MUTED, bold: true };
  return [
    seg(` ${fit(c.status > 1 ? "STATUS" : "", c.status)}`, style),
    ...cell("RUN", c.id, style),
    ...cell("WORKFLOW", c.workflow, style),
    ...cell("STEP", c.step, style, "right"),
    ...cell("NOW", c.activity, style),
    ...cell("AGE", c.age, style, "right"),
    ...cell("DUR", c.duration, style, "right"),
    ...cell("⚑", c.pending, style, "right"),
  ];
}

/** A run's pending interrupts, with those of the runs folded under it (a paused sub-workflow's question). */
function pendingLabel(own: number, below: number): string {
  return own + below > 0 ? String(own + below) : "";
}

function idLabel(row: RunRow): string {
  const fold = row.children > 0 ? (row.folded ? `▸${row.children} ` : "▾ ") : "";
  return `${row.prefix}${fold}${row.run.id}`;
}

/** What a run's NOW column says: `runActivity` with what the snapshot knows of it. */
function activityOf(run: RunRecord, snap: ConsoleSnapshot, waiting: ReadonlyMap<string, readonly string[]>, now: number): string {
  const child = run.waitingOn ? snap.runs.get(run.waitingOn) : undefined;
  return runActivity(withoutDone(run, snap.doneInStep.get(run.id)), now, waiting.get(run.id), snap.orphans.has(run.id), child, snap.retries.get(run.id), snap.workers, snap.signalWaits.get(run.id), snap.runsAtOnce?.get(run.workflow));
}

function rowLine(row: RunRow, c: Columns, now: number, selected: boolean, marked: boolean, flashing: boolean, activity: string, orphaned: boolean, pausedAt: number | undefined): Line {
  const { run } = row;
  const look = runLook(run.status, orphaned);
  const base = selected ? { inverse: true } : flashing ? { bold: true, bg: "blackBright" } : row.context ? { dim: true } : {};
  return [
    marked ? seg("◆", { ...base, color: ACCENT }) : seg(selected ? "›" : " ", base),
    seg(fit(c.status > 1 ? `${look.glyph} ${look.word}` : look.glyph, c.status), { ...base, color: look.color, ...(orphaned ? { bold: true } : {}), ...(look.dim && !selected ? { dim: true } : {}) }),
    ...cell(idLabel(row), c.id, base),
    ...cell(clean(run.workflow), c.workflow, base),
    ...cell(String(currentStep(run)), c.step, base, "right"),
    ...cell(clean(activity), c.activity, { ...base, ...(run.status === "failed" ? { color: "red" } : orphaned ? { color: ORPHANED_LOOK.color } : {}) }),
    ...cell(ago(run.createdAt, now), c.age, base, "right"),
    ...cell(runDuration(run, now, pausedAt), c.duration, base, "right"),
    ...cell(pendingLabel(run.pendingInterrupts, row.pendingBelow), c.pending, { ...base, color: "magenta", bold: true }, "right"),
  ];
}

/** Every run: status, workflow, what it does now, step, age, duration, pending interrupts. */
export function RunsView({ width, height }: { width: number; height: number }) {
  const services = useServices();
  const { nav, ui, store, data, operator, copy } = services;
  const snap = useSnapshot();
  const [filterText, setFilterText] = useRemembered("filter", "");
  const [folded, setFolded] = useRemembered<ReadonlySet<string>>("folded", new Set());
  // Undefined: the cursor is on the first row and stays there (see useLiveCursor).
  const [selectedId, setSelectedId] = useRemembered<string | undefined>("selected", undefined);
  const [sort, setSort] = useRemembered<RunSort>("sort", DEFAULT_SORT);
  const [markedIds, setMarkedIds] = useRemembered<readonly string[]>("run-marks", []);
  // A new order or filter starts at the top, as `g` does.
  const setOrder = (next: (s: RunSort) => RunSort) => (setSelectedId(undefined), setSort(next));
  const setFilter = (text: string) => (setSelectedId(undefined), setFilterText(text));

  const filter = useMemo(() => parseRunFilter(filterText), [filterText]);
  const waiting = useMemo(() => {
    const byRun = new Map<string, string[]>();
    for (const i of snap.interrupts) byRun.set(i.runId, [...(byRun.get(i.runId) ?? []), i.node]);
    return byRun;
  }, [snap.interrupts]);
  // Free words of the filter are found in what the NOW column says (`interrupt: publish`).
  const rows = useMemo(() => {
    const at = Date.now();
    const shown = (run: RunRecord) => activityOf(run, snap, waiting, at);
    return runRows(snap.runs.values(), filter, folded, sort, at, snap.pausedAt, shown);
  }, [snap, waiting, filter, folded, sort]);
  const ids = useMemo(() => rows.map((r) => r.run.id), [rows]);
  const listHeight = Math.max(1, height - 2);
  const { index, start, selection } = useLiveCursor(ids, selectedId, listHeight);
  const selected = rows[index];
  // Marks of runs deleted meanwhile fall away; those the filter hides stay, and are counted.
  const marked = markedIds.flatMap((id) => snap.runs.get(id) ?? []);
  const hiddenMarks = marked.filter((run) => !ids.includes(run.id)).length;
  const sending = useRef(false);
  const canBatch = operator !== null && (marked.length > 0 || selected !== undefined);
  const onRuns = (kind: RunBatchKind) => {
    if (sending.current) return;
    sending.current = true;
    const runs = marked.length > 0 ? marked : [selected!.run];
    return batchOnRuns(services, { runs, snap, width }, kind, (sent) => setMarkedIds((kept) => kept.filter((id) => !sent.some((run) => run.id === id)))).finally(() => (sending.current = false));
  };
  useEffect(() => {
    if (selection !== selectedId) setSelectedId(selection);
  }, [selection, selectedId]);
  const now = useClock(rows.slice(start, start + listHeight).flatMap(({ run }) => runTimes(run, snap.retries.get(run.id))));
  const flashing = (id: string) => Date.now() - (snap.changedAt.get(id) ?? 0) < FLASH_MS;

  // A flash ends by itself: one timer for the earliest end, only while something flashes.
  const [, setTick] = useState(0);
  useEffect(() => {
    const ends = [...snap.changedAt.values()].map((at) => at + FLASH_MS - Date.now()).filter((ms) => ms > 0);
    if (ends.length === 0) return;
    const timer = setTimeout(() => setTick((t) => t + 1), Math.min(...ends) + 10);
    return () => clearTimeout(timer);
  }, [snap.changedAt]);

  const setFold = (id: string, fold: boolean) =>
    setFolded((set) => {
      const next = new Set(set);
      if (fold) next.add(id);
      else next.delete(id);
      return next;
    });

  useKeys(PRIORITY.view, {
    ...listHandlers(rows.length, index, listHeight, (i) => setSelectedId(i === 0 ? undefined : rows[i]?.run.id)),
    open: selected && (() => nav.push({ kind: "run", runId: selected.run.id })),
    copy: selected && (() => copy(selected.run.id)),
    describe: selected && (() => describeFailure(services, selected.run.id, width)),
    filter: () => {
      // The list follows the filter as it is typed (as k9s does); esc puts the one before back.
      const before = filterText;
      return ui
        .prompt({ title: "/", initial: filterText, hint: "text · status:paused · workflow:NAME — enter keeps · esc cancels", onChange: (text) => setFilter(text.trim()) })
        .then((text) => setFilter(text === undefined ? before : text.trim()));
    },
    back: filterText !== "" && (() => setFilter("")),
    sort: () => setOrder((s) => ({ key: RUN_SORTS[(RUN_SORTS.indexOf(s.key) + 1) % RUN_SORTS.length]!, reversed: false })),
    reverse: () => setOrder((s) => ({ ...s, reversed: !s.reversed })),
    toggle: selected && selected.run && rows[index]!.children > 0 && (() => setFold(selected.run.id, !selected.folded)),
    fold: selected && selected.children > 0 && !selected.folded && (() => setFold(selected.run.id, true)),
    unfold: selected && selected.folded && (() => setFold(selected.run.id, false)),
    markRun: selected && (() => setMarkedIds(marked.some((run) => run.id === selected.run.id) ? marked.filter((run) => run.id !== selected.run.id).map((run) => run.id) : [...marked.map((run) => run.id), selected.run.id])),
    // With anything marked, `*` clears: it never marks a run that appeared since unseen, nor one the filter hides.
    markAll: (marked.length > 0 || rows.length > 0) && (() => setMarkedIds(marked.length > 0 ? [] : ids)),
    cancelMarked: canBatch && (() => onRuns("cancel")),
    retryMarked: canBatch && (() => onRuns("retry")),
    approveRuns: canBatch && (() => onRuns("approve")),
    rejectRuns: canBatch && (() => onRuns("reject")),
    signalRuns: canBatch && (() => onRuns("signal")),
    upgradeRuns: canBatch && (() => onRuns("upgrade")),
    deleteRun:
      operator !== null &&
      selected &&
      selected.run.parentRunId === null &&
      TERMINAL_RUN_STATUSES.includes(selected.run.status) &&
      (async () => {
        const { run } = selected;
        const below = descendants(snap.runs.values(), run.id);
        // The store's own rule, before asking: a deletion it would refuse is not offered.
        try {
          checkDeletion(run, [run, ...below]);
        } catch (error) {
          return ui.report({ tone: "error", text: `cannot delete: ${errorMessage(error)}` });
        }
        const children = below.length;
        const answer = await ui.confirm({
          title: `Delete run ${run.id} (${clean(run.workflow)}, ${run.status})?`,
          body: [
            [seg(`Its checkpoints, tasks, events, interrupts and commands${children > 0 ? `, and its ${children} child run${children > 1 ? "s" : ""},` : ""} are deleted. This cannot be undone.`, { color: MUTED })],
          ],
          action: "Delete run",
          reason: "none",
        });
        if (!answer.ok) return ui.report({ tone: "info", text: "delete not confirmed; nothing deleted" });
        await act(ui, `delete ${run.id}`, async () => {
          const deleted = await store.deleteRun(run.id);
          data.refresh(deleted);
          return `deleted run ${run.id}${deleted.length > 1 ? ` and ${deleted.length - 1} child run${deleted.length > 2 ? "s" : ""}` : ""}`;
        });
      }),
  });

  // Widths from every row, not the page shown: columns stay put while paging.
  const widths = useMemo(
    () => ({ id: rows.reduce((m, r) => Math.max(m, displayWidth(idLabel(r))), 0), workflow: rows.reduce((m, r) => Math.max(m, displayWidth(r.run.workflow)), 0) }),
    [rows],
  );
  const c = columns(width, widths.id, widths.workflow);
  const shownTo = Math.min(rows.length, start + listHeight);
  const title: Line = [
    seg(" Runs ", { bold: true }),
    seg(`${rows.length}${rows.length !== snap.runs.size ? ` of ${snap.runs.size}` : ""}${snap.capped ? "+" : ""}`, { color: MUTED }),
    seg(`  by ${sortLabel(sort)}${rows.length > listHeight ? `  ${start + 1}-${shownTo} shown` : ""}`, { color: MUTED }),
    ...(marked.length > 0
      ? [seg("  "), seg(`${marked.length} marked${hiddenMarks > 0 ? ` (${hiddenMarks} not shown)` : ""}`, { color: "yellow", bold: true }), seg(operator ? ": C, R, a, r, !, U act on them" : "", { color: MUTED })]
      : []),
    ...(filterText ? [seg("  filter: ", { color: MUTED }), seg(clean(filterText), { color: "yellow" })] : []),
  ];
  const lines: Line[] = [title, headerLine(c)];
  if (!snap.ready) lines.push([seg(" reading runs…", { color: MUTED })]);
  else if (rows.length === 0) lines.push([seg(filterText ? " no run matches the filter (esc clears it)" : " no runs yet", { color: MUTED })]);
  for (let i = start; i < shownTo; i++) {
    const { run } = rows[i]!;
    lines.push(rowLine(rows[i]!, c, now, i === index, markedIds.includes(run.id), flashing(run.id), activityOf(run, snap, waiting, now), snap.orphans.has(run.id), snap.pausedAt.get(run.id)));
  }
  return <Lines lines={lines} width={width} height={height} />;
}
