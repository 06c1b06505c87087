import { useEffect, useState } from "react";
import { errorMessage, type ScheduleRecord } from "../../../engine/index.js";
import { Lines, highlight, seg, type Line } from "../components/lines.js";
import { useServices } from "../context.js";
import { useClock } from "../hooks/use-clock.js";
import { useKeys } from "../hooks/use-keys.js";
import { listHandlers, useWindow } from "../hooks/use-list.js";
import { useRemembered } from "../hooks/use-remembered.js";
import { notHere } from "../hooks/use-run-actions.js";
import { PRIORITY } from "../key-router.js";
import { clean, displayWidth, fit } from "../text.js";
import { ACCENT, MUTED } from "../theme.js";
import { nextText, scheduleState } from "../../text/schedule-text.js";

/** Schedules make no events: the list is read again this often. */
const REREAD_MS = 5_000;
const HEAD = ["ID", "WORKFLOW", "CRON", "TZ", "NEXT", "LAST RUN", "STATE"] as const;
/** The widest each column but the last is drawn. */
const CAPS = [24, 20, 16, 16, 30, 34];

/**
 * The store's schedules (read-only), as `pitwall schedule list` prints them: enter opens the run
 * a schedule started last.
 */
export function SchedulesView({ width, height }: { width: number; height: number }) {
  const { store, nav, ui, copy } = useServices();
  const [schedules, setSchedules] = useState<ScheduleRecord[]>();
  const [pickedId, setPickedId] = useRemembered<string | undefined>("schedule", undefined);
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
  }, [store, ui]);
  const list = schedules ?? [];
  const index = Math.max(0, list.findIndex((s) => s.id === pickedId));
  const selected = list[index];
  const rows = Math.max(1, height - 2);
  const start = useWindow(list.length, index, rows);
  const shown = list.slice(start, start + rows);
  const now = useClock(shown.map((s) => s.nextAt));
  useKeys(PRIORITY.view, {
    ...listHandlers(list.length, index, rows, (i) => setPickedId(list[i]?.id)),
    open: selected && (selected.lastRunId ? () => nav.push({ kind: "run", runId: selected.lastRunId! }) : notHere(ui, `schedule ${selected.id} has started no run yet`)),
    copy: selected && (() => copy(selected.id)),
    filter: notHere(ui, "/: the schedules list has no filter"),
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
  return <Lines lines={lines} width={width} height={height} />;
}
