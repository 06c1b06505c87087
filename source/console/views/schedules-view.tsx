import { useEffect, useState } from "react";
import { errorMessage, type ScheduleRecord } from "../../../engine/index.js";
import { Lines, highlight, seg, type Line } from "../components/lines.js";
import { act, useServices } from "../context.js";
import { useClock } from "../hooks/use-clock.js";
import { useKeys } from "../hooks/use-keys.js";
import { listHandlers, useWindow } from "../hooks/use-list.js";
import { useRemembered } from "../hooks/use-remembered.js";
import { notHere } from "../hooks/use-run-actions.js";
import { PRIORITY } from "../key-router.js";
import { clean, displayWidth, fit } from "../text.js";
import { ACCENT, MUTED } from "../theme.js";
import { changeText, nextText, recentChanges, scheduleState } from "../../text/schedule-text.js";

/** Schedules make no events: the list is read again this often. */
const REREAD_MS = 5_000;
const HEAD = ["ID", "WORKFLOW", "CRON", "TZ", "NEXT", "LAST RUN", "STATE"] as const;
/** The widest each column but the last is drawn. */
const CAPS = [24, 20, 16, 16, 30, 34];
/** The selected schedule's changes shown under the list, newest first (`schedule show` lists five). */
const CHANGES_SHOWN = 3;

/**
 * The store's schedules, as `pitwall schedule list` prints them, and under them the selected one's
 * last changes (who paused it, and why): enter opens the run a schedule started last, `p` pauses
 * or resumes it, `t` starts a run of it now.
 */
export function SchedulesView({ width, height }: { width: number; height: number }) {
  const { store, nav, ui, copy, operator } = useServices();
  const [schedules, setSchedules] = useState<ScheduleRecord[]>();
  const [pickedId, setPickedId] = useRemembered<string | undefined>("schedule", undefined);
  // Bumped by a change made here: the list is read again at once, not at the next re-read.
  const [changed, setChanged] = useState(0);
  useEffect(() => {
    let live = true;
    const read = () =>
      store.listSchedules().then(
        (list) => live && setSchedules(list),
        (error: unknown) => live && ui.report({ tone: "error", text: clean(`reading the schedules failed: ${errorMessage(error)}`) }),
      );
    void read();
    const timer = setInterval(() => void read(), REREAD_MS);
    return () => {
      live = false;
      clearInterval(timer);
    };
  }, [store, ui, changed]);
  const list = schedules ?? [];
  const index = Math.max(0, list.findIndex((s) => s.id === pickedId));
  const selected = list[index];
  const changes = selected ? recentChanges(selected, CHANGES_SHOWN) : [];
  // The changes take the bottom lines only where the list keeps room for a few rows.
  const changeLines = changes.length > 0 && height - 2 - (changes.length + 1) >= 3 ? changes.length + 1 : 0;
  const rows = Math.max(1, height - 2 - changeLines);
  const start = useWindow(list.length, index, rows);
  const shown = list.slice(start, start + rows);
  const now = useClock(shown.map((s) => s.nextAt));
  useKeys(PRIORITY.view, {
    ...listHandlers(list.length, index, rows, (i) => setPickedId(list[i]?.id)),
    open: selected && (selected.lastRunId ? () => nav.push({ kind: "run", runId: selected.lastRunId! }) : notHere(ui, `schedule ${selected.id} has started no run yet`)),
    copy: selected && (() => copy(selected.id)),
    filter: notHere(ui, "/: the schedules list has no filter"),
    pauseSchedule:
      operator !== null &&
      selected &&
      (() =>
        act(ui, `${selected.paused ? "resume" : "pause"} schedule ${selected.id}`, async () => {
          const after = selected.paused ? await operator.schedules.resume(selected.id) : await operator.schedules.pause(selected.id);
          setChanged((n) => n + 1);
          return after.paused ? `schedule ${after.id} paused: it fires nothing until resumed` : `schedule ${after.id} resumed: next ${nextText(after, Date.now())}`;
        })),
    triggerSchedule:
      operator !== null &&
      selected &&
      (async () => {
        const answer = await ui.confirm({
          title: `Start a run of schedule ${selected.id} now?`,
          body: [[seg(`A run of ${clean(selected.workflow)} with the schedule's input, outside its times (its next time stays)${selected.overlap === "skip" ? "; refused while the last run it started has not ended" : ""}.`, { color: MUTED })]],
          action: "Start run",
          reason: "none",
        });
        if (!answer.ok) return ui.report({ tone: "info", text: "trigger not confirmed; nothing started" });
        await act(ui, `trigger schedule ${selected.id}`, async () => {
          const fired = await operator.schedules.trigger(selected.id);
          setChanged((n) => n + 1);
          return `schedule ${selected.id} started run ${fired.runId} (enter opens it)`;
        });
      }),
  });

  const cells = (s: ScheduleRecord) => [s.id, s.version ? `${s.workflow}@${s.version.slice(0, 8)}` : s.workflow, s.cron, s.timezone, nextText(s, now), s.lastRunId ?? "-", scheduleState(s)].map((v) => clean(v));
  const table = shown.map(cells);
  const widths = CAPS.map((cap, i) => Math.min(cap, Math.max(HEAD[i]!.length, ...table.map((row) => displayWidth(row[i]!)))));
  const row = (values: readonly string[]) => values.map((v, i) => (i < widths.length ? fit(v, widths[i]!) : v)).join(" ");
  const lines: Line[] = [
    [seg(" Schedules", { bold: true }), seg(schedules === undefined ? "  reading…" : `  ${list.length} · fired by the workers · enter opens the last run`, { color: MUTED })],
    [seg(` ${row(HEAD)}`, { color: MUTED, bold: true })],
  ];
  if (schedules !== undefined && list.length === 0) lines.push([seg(" no schedules (pitwall schedule add makes one)", { color: MUTED })]);
  shown.forEach((s, i) => {
    const [id, ...rest] = table[i]!;
    const line: Line = [seg(` ${fit(id!, widths[0]!)} `, { color: ACCENT }), seg(rest.map((v, j) => (j < rest.length - 1 ? fit(v, widths[j + 1]!) : v)).join(" "), s.paused || s.lastSkip ? { color: "yellow" } : {})];
    lines.push(start + i === index ? highlight(line, width) : line);
  });
  if (changeLines > 0 && selected) {
    while (lines.length < height - changeLines) lines.push([]);
    lines.push([seg(` changes of ${clean(selected.id)}, newest first`, { color: MUTED, bold: true })]);
    for (const change of changes) lines.push([seg(` ${clean(changeText(change, selected.timezone))}`)]);
  }
  return <Lines lines={lines} width={width} height={height} />;
}
