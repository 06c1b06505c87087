import { useMemo } from "react";
import { Lines, seg, type Line } from "../components/lines.js";
import { useClock } from "../hooks/use-clock.js";
import { useServices } from "../context.js";
import { useKeys } from "../hooks/use-keys.js";
import { listHandlers, useWindow } from "../hooks/use-list.js";
import { useRemembered } from "../hooks/use-remembered.js";
import { useRunActions } from "../hooks/use-run-actions.js";
import type { RunDetail } from "../hooks/use-run-detail.js";
import { PRIORITY } from "../key-router.js";
import { displayWidth, fit } from "../text.js";
import { MUTED } from "../theme.js";
import { attemptRows, axisLine, rowEnd, rowLabel, timeRange, waterfallLine } from "./waterfall.js";

/** Columns a row's label takes at most (a durable call's label names its node and the call). */
const LABEL_MAX = 36;

/**
 * What the bars' marks mean, in `room` columns: `┄` is any wait after a start — a retry's backoff,
 * or a pause (a question, a timer, a sub-workflow) — said in full where that fits; `⏎` where it
 * fits too (the footer says it anyway). Whole entries, never cut.
 */
function legend(room: number): string {
  const fits = (text: string) => displayWidth(text) <= room;
  const head = "· queued  █ ran (colour: outcome)  ┄ ";
  const full = `${head}retry backoff or pause (question, timer, sub-workflow)`;
  const marks = fits(full) ? full : `${head}backoff or pause`;
  const open = `${marks}  ⏎ the task, its calls`;
  return fits(open) ? open : marks;
}

/** A waterfall of task attempts over time, a row per try: where the run spent its time, retries, pauses and waits included. */
export function TimelineTab({ detail, width, height }: { detail: RunDetail; width: number; height: number }) {
  const active = detail.run.status === "running" || detail.run.status === "queued";
  // Bars of a run in progress grow by the second.
  const now = useClock(active ? [Date.now()] : []);
  const rows = useMemo(() => attemptRows(detail.tasks), [detail.tasks]);
  const range = timeRange(rows, active ? now : Math.max(...rows.map((r) => rowEnd(r) ?? now), detail.run.endedAt ?? 0), detail.run.startedAt);
  const [picked, setPicked] = useRemembered<number | undefined>("timeline-selected", undefined);
  const index = Math.min(picked ?? rows.length - 1, rows.length - 1);
  const selected = rows[index];
  const listRows = Math.max(1, height - 2);
  const start = useWindow(rows.length, Math.max(0, index), listRows);
  // A durable call's row acts on its node's task: that is what is killed or runs again.
  const actions = useRunActions(detail, selected ? { taskId: selected.task.parent ?? selected.task.id, node: selected.task.node } : {});
  const { nav } = useServices();
  useKeys(PRIORITY.pane, {
    ...listHandlers(rows.length, index, listRows, setPicked),
    // The attempt's task, its calls listed (a call's row selects that call there).
    open:
      selected &&
      (() =>
        nav.push({
          kind: "task",
          runId: detail.run.id,
          node: selected.task.node,
          taskId: selected.task.parent ?? selected.task.id,
          ...(selected.task.call !== null ? { call: selected.task.call } : {}),
        })),
    kill: actions.kill,
    retry: actions.retry,
    retryEdited: actions.retryEdited,
    breakpoint: actions.breakpoint,
  });

  const labelWidth = Math.min(LABEL_MAX, Math.max(12, ...rows.map((r) => displayWidth(rowLabel(r)))));
  const bar = Math.max(10, width - labelWidth - 24);
  const lines: Line[] = [
    [seg(` ${fit(`${rows.length} attempt${rows.length === 1 ? "" : "s"}`, labelWidth)} `, { bold: true }), seg(axisLine(range, bar), { color: MUTED })],
    [seg(` ${" ".repeat(labelWidth)} `), seg(legend(width - labelWidth - 2), { color: MUTED })],
  ];
  if (rows.length === 0) lines.push([seg(" no task has started yet", { color: MUTED })]);
  for (let i = start; i < Math.min(rows.length, start + listRows); i++) {
    const row = rows[i]!;
    lines.push([seg(` ${fit(rowLabel(row, labelWidth), labelWidth)} `, i === index ? { inverse: true } : { bold: row.n > 1 }), ...waterfallLine(row, range, bar, now)]);
  }
  return <Lines lines={lines} width={width} height={height} />;
}
