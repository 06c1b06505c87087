import type { AttemptRecord, TaskRecord } from "../../../engine/index.js";
import { seg, type Line } from "../components/lines.js";
import { clean, displayWidth, fit, span, truncate } from "../text.js";
import { MUTED, OUTCOME_COLOR } from "../theme.js";

export interface AttemptRow {
  task: TaskRecord;
  attempt: AttemptRecord;
  /** The attempt before this one of the same task (its end starts this row's wait). */
  previous: AttemptRecord | undefined;
  /** This is the task's last attempt. */
  last: boolean;
}

/** One row per attempt of every task, in the order they started. */
export function attemptRows(tasks: readonly TaskRecord[]): AttemptRow[] {
  const rows: AttemptRow[] = [];
  for (const task of tasks) {
    task.attempts.forEach((attempt, i) => rows.push({ task, attempt, previous: task.attempts[i - 1], last: i === task.attempts.length - 1 }));
  }
  return rows.sort((a, b) => a.attempt.startedAt - b.attempt.startedAt || a.task.step - b.task.step);
}

export function timeRange(rows: readonly AttemptRow[], now: number, from: number | null): { start: number; end: number } {
  const start = Math.min(from ?? Infinity, ...rows.map((r) => Math.min(r.task.createdAt, r.attempt.startedAt)));
  const end = Math.max(start + 1, ...rows.map((r) => r.attempt.endedAt ?? now), ...rows.filter((r) => r.last && r.task.status === "interrupted").map(() => now));
  return Number.isFinite(start) ? { start, end } : { start: now, end: now + 1 };
}

/**
 * `s2 draft #1`; a durable call by its id (`s1 act · tool-1-getWeather #1`), told apart from its
 * node's attempts and from its other calls. Past `max` columns the node's name is cut, not the
 * call or the attempt.
 */
export function rowLabel(row: AttemptRow, max = Infinity): string {
  const { task } = row;
  const head = `s${task.step} `;
  const tail = `${task.index !== null ? `[${task.index}]` : ""}${task.call !== null ? ` · ${clean(task.call)}` : ""} #${row.attempt.n}`;
  const node = clean(task.node);
  const room = max - head.length - displayWidth(tail);
  return `${head}${displayWidth(node) > room ? truncate(node, Math.max(1, room)) : node}${tail}`;
}

/**
 * An attempt drawn on the time axis: a dotted lead while it waited (queued `·`, a retry's
 * backoff or an interrupt `┄`), then its bar coloured by outcome, then its duration and outcome.
 */
export function waterfallLine(row: AttemptRow, range: { start: number; end: number }, bar: number, now: number): Line {
  const col = (t: number) => Math.max(0, Math.min(bar - 1, Math.floor(((t - range.start) / (range.end - range.start)) * bar)));
  const { attempt, previous, task } = row;
  const waitFrom = previous?.endedAt ?? task.createdAt;
  const waitColor = previous?.outcome === "interrupted" ? "magenta" : MUTED;
  const waitChar = previous ? "┄" : "·";
  const a = col(waitFrom);
  const b = col(attempt.startedAt);
  const end = attempt.endedAt ?? now;
  const c = Math.max(b + 1, col(end) + 1);
  const outcome = attempt.outcome ?? "running";
  const waitingAfter = row.last && task.status === "interrupted" && attempt.outcome === "interrupted";
  const tail = waitingAfter ? Math.max(0, col(now) + 1 - c) : 0;
  const line: Line = [
    seg(" ".repeat(a)),
    seg(waitChar.repeat(Math.max(0, b - a)), { color: waitColor }),
    seg("█".repeat(Math.min(bar - b, c - b)), { color: OUTCOME_COLOR[outcome] }),
    seg("┄".repeat(Math.min(tail, Math.max(0, bar - c))), { color: "magenta" }),
  ];
  const used = Math.min(bar, Math.max(c, c + tail));
  line.push(seg(" ".repeat(Math.max(0, bar - used))));
  const glyph = { succeeded: "✓", failed: "✗", interrupted: "◆", canceled: "⊘", running: "●" }[outcome];
  const detail = attempt.error ? ` ${clean(attempt.error)}` : waitingAfter ? " waiting" : "";
  line.push(seg(` ${fit(span(end - attempt.startedAt), 6, "right")} ${glyph}`, { color: OUTCOME_COLOR[outcome] }), seg(detail, { color: MUTED }));
  return line;
}

/** The time axis above the bars: start, middle and end times. */
export function axisLine(range: { start: number; end: number }, bar: number): string {
  const total = range.end - range.start;
  const middle = span(total / 2);
  const last = span(total);
  const left = "0";
  const mid = Math.floor(bar / 2) - Math.floor(middle.length / 2);
  let text = left.padEnd(Math.max(left.length + 1, mid)) + middle;
  text = text.padEnd(Math.max(text.length + 1, bar - last.length)) + last;
  return text.slice(0, bar + last.length);
}
