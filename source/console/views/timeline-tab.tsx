import { useMemo } from "react";
import { Lines, seg, type Line } from "../components/lines.js";
import { useClock } from "../hooks/use-clock.js";
import { useKeys } from "../hooks/use-keys.js";
import { listHandlers, useWindow } from "../hooks/use-list.js";
import { useRemembered } from "../hooks/use-remembered.js";
import { useRunActions } from "../hooks/use-run-actions.js";
import type { RunDetail } from "../hooks/use-run-detail.js";
import { PRIORITY } from "../key-router.js";
import { fit } from "../text.js";
import { MUTED } from "../theme.js";
import { attemptRows, axisLine, rowLabel, timeRange, waterfallLine } from "./waterfall.js";

/** A waterfall of task attempts over time: where the run spent its time, retries and waits included. */
export function TimelineTab({ detail, width, height }: { detail: RunDetail; width: number; height: number }) {
  const active = detail.run.status === "running" || detail.run.status === "queued";
  // Bars of a run in progress grow by the second.
  const now = useClock(active ? [Date.now()] : []);
  const rows = useMemo(() => attemptRows(detail.tasks), [detail.tasks]);
  const range = timeRange(rows, active ? now : Math.max(...rows.map((r) => r.attempt.endedAt ?? now), detail.run.endedAt ?? 0), detail.run.startedAt);
  const [picked, setPicked] = useRemembered<number | undefined>("timeline-selected", undefined);
  const index = Math.min(picked ?? rows.length - 1, rows.length - 1);
  const selected = rows[index];
  const listRows = Math.max(1, height - 2);
  const start = useWindow(rows.length, Math.max(0, index), listRows);
  const actions = useRunActions(detail, selected ? { taskId: selected.task.id, node: selected.task.node } : {});
  useKeys(PRIORITY.pane, {
    ...listHandlers(rows.length, index, listRows, setPicked),
    kill: actions.kill,
    retry: actions.retry,
    retryEdited: actions.retryEdited,
    breakpoint: actions.breakpoint,
  });

  const labelWidth = Math.min(28, Math.max(12, ...rows.map((r) => rowLabel(r).length)));
  const bar = Math.max(10, width - labelWidth - 24);
  const lines: Line[] = [
    [seg(` ${fit(`${rows.length} attempt${rows.length === 1 ? "" : "s"}`, labelWidth)} `, { bold: true }), seg(axisLine(range, bar), { color: MUTED })],
    [seg(` ${" ".repeat(labelWidth)} `), seg("· queued  █ ran (colour: outcome)  ┄ retry backoff or interrupt", { color: MUTED })],
  ];
  if (rows.length === 0) lines.push([seg(" no task has started yet", { color: MUTED })]);
  for (let i = start; i < Math.min(rows.length, start + listRows); i++) {
    const row = rows[i]!;
    lines.push([seg(` ${fit(rowLabel(row), labelWidth)} `, i === index ? { inverse: true } : { bold: row.attempt.n > 1 }), ...waterfallLine(row, range, bar, now)]);
  }
  return <Lines lines={lines} width={width} height={height} />;
}
