import { useEffect, useMemo, useRef, useState } from "react";
import { TERMINAL_RUN_STATUSES, checkDeletion, currentStep, errorMessage, unclaimedWhy, type RetryWait, type RunRecord } from "../../../engine/index.js";
import { Lines, seg, type Line, type Seg } from "../components/lines.js";
import { act, useServices, useSnapshot } from "../context.js";
import { withoutDone } from "../current-nodes.js";
import { useClock } from "../hooks/use-clock.js";
import { useKeys } from "../hooks/use-keys.js";
import { listHandlers, useWindow } from "../hooks/use-list.js";
import { useRemembered } from "../hooks/use-remembered.js";
import { PRIORITY } from "../key-router.js";
import { ago, clean, fit, span, displayWidth } from "../text.js";
import { MUTED, ORPHANED_LOOK, runLook } from "../theme.js";
import { DEFAULT_SORT, RUN_SORTS, parseRunFilter, ranMs, runRows, sortLabel, type RunRow, type RunSort } from "./run-rows.js";

const FLASH_MS = 800;

/** What a run is doing or why it stopped, in a few words; `orphaned`: its lease ran out (ConsoleSnapshot.orphans). */
export function runActivity(run: RunRecord, now: number, waiting: readonly string[] = [], orphaned = false, child?: RunRecord, retry?: RetryWait): string {
  switch (run.status) {
    case "running":
      // The lease first: a narrow NOW column must not cut what tells this run from a running one.
      if (orphaned) return `lease ran out${run.current.length > 0 ? ` · ${run.current.join(", ")}` : ""}`;
      // A worker holding the run through a short backoff: the node waits, it does not run.
      return retry && retry.at > now ? `${run.current.join(", ")} · ${retryText(retry, now)}` : run.current.join(", ");
    case "paused": {
      const nodes = [...new Set([...run.current, ...waiting])];
      // A run waiting on a failure says which, where the operator looks first.
      return `${run.reason ?? "paused"}${nodes.length > 0 ? `: ${nodes.join(", ")}` : ""}${run.error ? ` — ${run.error.message}` : ""}`;
    }
    case "failed":
      return run.error ? `${run.error.node ? `${run.error.node}: ` : ""}${run.error.message}` : "";
    case "queued":
      if (!run.waitingOn) {
        if (retry && retry.at > now) return retryText(retry, now);
        if (run.wakeAt !== null && run.wakeAt > now) return `timer, wakes in ${ago(now, run.wakeAt)}`;
        // No worker has taken it: none is running, or none has this workflow's actions.
        return unclaimedWhy(run, now) ?? "";
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

function rowLine(
  row: RunRow,
  c: Columns,
  now: number,
  selected: boolean,
  flashing: boolean,
  waiting: readonly string[] | undefined,
  orphaned: boolean,
  child: RunRecord | undefined,
  pausedAt: number | undefined,
  done: ReadonlySet<string> | undefined,
  retry: RetryWait | undefined,
): Line {
  const { run } = row;
  const look = runLook(run.status, orphaned);
  const base = selected ? { inverse: true } : flashing ? { bold: true, bg: "blackBright" } : row.context ? { dim: true } : {};
  return [
    seg(selected ? "›" : " ", base),
    seg(fit(c.status > 1 ? `${look.glyph} ${look.word}` : look.glyph, c.status), { ...base, color: look.color, ...(orphaned ? { bold: true } : {}), ...(look.dim && !selected ? { dim: true } : {}) }),
    ...cell(idLabel(row), c.id, base),
    ...cell(clean(run.workflow), c.workflow, base),
    ...cell(String(currentStep(run)), c.step, base, "right"),
    ...cell(clean(runActivity(withoutDone(run, done), now, waiting, orphaned, child, retry)), c.activity, { ...base, ...(run.status === "failed" ? { color: "red" } : orphaned ? { color: ORPHANED_LOOK.color } : {}) }),
    ...cell(ago(run.createdAt, now), c.age, base, "right"),
    ...cell(runDuration(run, now, pausedAt), c.duration, base, "right"),
    ...cell(pendingLabel(run.pendingInterrupts, row.pendingBelow), c.pending, { ...base, color: "magenta", bold: true }, "right"),
  ];
}

/** Every run: status, workflow, what it does now, step, age, duration, pending interrupts. */
export function RunsView({ width, height }: { width: number; height: number }) {
  const { nav, ui, store, data, operator, copy } = useServices();
  const snap = useSnapshot();
  const [filterText, setFilterText] = useRemembered("filter", "");
  const [folded, setFolded] = useRemembered<ReadonlySet<string>>("folded", new Set());
  const [selectedId, setSelectedId] = useRemembered<string | undefined>("selected", undefined);
  const [sort, setSort] = useRemembered<RunSort>("sort", DEFAULT_SORT);
  const lastIndex = useRef(0);

  const filter = useMemo(() => parseRunFilter(filterText), [filterText]);
  const rows = useMemo(() => runRows(snap.runs.values(), filter, folded, sort, Date.now(), snap.pausedAt), [snap.runs, snap.pausedAt, filter, folded, sort]);
  let index = selectedId === undefined ? -1 : rows.findIndex((r) => r.run.id === selectedId);
  if (index < 0) index = Math.min(lastIndex.current, rows.length - 1);
  lastIndex.current = Math.max(0, index);
  const selected = rows[index];
  // The row on screen is the selection even before a key moved it: a run that starts later and
  // sorts above it must not take the cursor (and `enter` open the wrong run).
  const shownId = selected?.run.id;
  useEffect(() => {
    if (shownId !== undefined && shownId !== selectedId) setSelectedId(shownId);
  }, [shownId, selectedId]);

  const listHeight = Math.max(1, height - 2);
  const start = useWindow(rows.length, Math.max(0, index), listHeight);
  const now = useClock(rows.slice(start, start + listHeight).flatMap(({ run }) => [run.createdAt, run.endedAt === null ? run.startedAt : null]));
  const waiting = useMemo(() => {
    const byRun = new Map<string, string[]>();
    for (const i of snap.interrupts) byRun.set(i.runId, [...(byRun.get(i.runId) ?? []), i.node]);
    return byRun;
  }, [snap.interrupts]);
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
    ...listHandlers(rows.length, index, listHeight, (i) => setSelectedId(rows[i]?.run.id)),
    open: selected && (() => nav.push({ kind: "run", runId: selected.run.id })),
    copy: selected && (() => copy(selected.run.id)),
    filter: () => {
      // The list follows the filter as it is typed (as k9s does); esc puts the one before back.
      const before = filterText;
      void ui
        .prompt({ title: "/", initial: filterText, hint: "text · status:paused · workflow:NAME — enter keeps · esc cancels", onChange: (text) => setFilterText(text.trim()) })
        .then((text) => setFilterText(text === undefined ? before : text.trim()));
    },
    back: filterText !== "" && (() => setFilterText("")),
    sort: () => setSort((s) => ({ key: RUN_SORTS[(RUN_SORTS.indexOf(s.key) + 1) % RUN_SORTS.length]!, reversed: false })),
    reverse: () => setSort((s) => ({ ...s, reversed: !s.reversed })),
    toggle: selected && selected.run && rows[index]!.children > 0 && (() => setFold(selected.run.id, !selected.folded)),
    fold: selected && selected.children > 0 && !selected.folded && (() => setFold(selected.run.id, true)),
    unfold: selected && selected.folded && (() => setFold(selected.run.id, false)),
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
    ...(filterText ? [seg("  filter: ", { color: MUTED }), seg(clean(filterText), { color: "yellow" })] : []),
  ];
  const lines: Line[] = [title, headerLine(c)];
  if (!snap.ready) lines.push([seg(" reading runs…", { color: MUTED })]);
  else if (rows.length === 0) lines.push([seg(filterText ? " no run matches the filter (esc clears it)" : " no runs yet", { color: MUTED })]);
  for (let i = start; i < shownTo; i++) {
    const { run } = rows[i]!;
    const child = run.waitingOn ? snap.runs.get(run.waitingOn) : undefined;
    lines.push(rowLine(rows[i]!, c, now, i === index, flashing(run.id), waiting.get(run.id), snap.orphans.has(run.id), child, snap.pausedAt.get(run.id), snap.doneInStep.get(run.id), snap.retries.get(run.id)));
  }
  return <Lines lines={lines} width={width} height={height} />;
}
