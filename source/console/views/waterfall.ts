import { resumesText, triesOf, type AttemptRecord, type TaskRecord } from "../../../engine/index.js";
import { attemptsRanMs } from "../../text/run-time.js";
import { seg, type Line } from "../components/lines.js";
import { clean, displayWidth, fit, span, truncate } from "../text.js";
import { MUTED, OUTCOME_COLOR } from "../theme.js";

/** One try of a task: its attempts, as `show` counts them (the engine's `triesOf`). */
export interface AttemptRow {
  task: TaskRecord;
  /** Which try of its task (1 for the first; a retry is the next). */
  n: number;
  /** The try's attempts: the first, and each one that resumed a pause (an answered interrupt, a timer, a child run). */
  attempts: AttemptRecord[];
  /** The last attempt of the try before this one (its end starts this row's wait). */
  previous: AttemptRecord | undefined;
  /** This is the task's last try. */
  last: boolean;
}

/** One row per try of every task, in the order they started: a node resumed after a pause is one row, a retry another. */
export function attemptRows(tasks: readonly TaskRecord[]): AttemptRow[] {
  const rows: AttemptRow[] = [];
  for (const task of tasks) {
    const tries = triesOf(task.attempts);
    tries.forEach((attempts, i) => rows.push({ task, n: i + 1, attempts, previous: tries[i - 1]?.at(-1), last: i === tries.length - 1 }));
  }
  return rows.sort((a, b) => started(a) - started(b) || a.task.step - b.task.step);
}

const started = (row: AttemptRow) => row.attempts[0]!.startedAt;
/** When a row's try ended (null while it runs). */
export const rowEnd = (row: AttemptRow) => row.attempts.at(-1)!.endedAt;

export function timeRange(rows: readonly AttemptRow[], now: number, from: number | null): { start: number; end: number } {
  const start = Math.min(from ?? Infinity, ...rows.map((r) => Math.min(r.task.createdAt, started(r))));
  const end = Math.max(start + 1, ...rows.map((r) => rowEnd(r) ?? now), ...rows.filter((r) => r.last && r.task.status === "interrupted").map(() => now));
  return Number.isFinite(start) ? { start, end } : { start: now, end: now + 1 };
}

/**
 * `s2 draft #1`; a durable call by its id (`s1 act · tool-1-getWeather #1`), told apart from its
 * node's tries and from its other calls. Past `max` columns the node's name is cut, not the
 * call or the try.
 */
export function rowLabel(row: AttemptRow, max = Infinity): string {
  const { task } = row;
  const head = `s${task.step} `;
  const tail = `${task.index !== null ? `[${task.index}]` : ""}${task.call !== null ? ` · ${clean(task.call)}` : ""} #${row.n}`;
  const node = clean(task.node);
  const room = max - head.length - displayWidth(tail);
  return `${head}${displayWidth(node) > room ? truncate(node, Math.max(1, room)) : node}${tail}`;
}

/**
 * A try drawn on the time axis: a dotted lead while it waited (queued `·`, a retry's backoff `┄`),
 * then a bar per attempt coloured by its outcome, a pause between two (`┄`, never less than one
 * column, so a resume always shows), then the time it ran (its pauses left out) and its outcome.
 */
export function waterfallLine(row: AttemptRow, range: { start: number; end: number }, bar: number, now: number): Line {
  const col = (t: number) => Math.max(0, Math.min(bar - 1, Math.floor(((t - range.start) / (range.end - range.start)) * bar)));
  const { attempts, previous, task } = row;
  const final = attempts.at(-1)!;
  const outcome = final.outcome ?? "running";
  const waitingAfter = row.last && task.status === "interrupted" && outcome === "interrupted";
  // Each bar and pause takes a column at least, and ends where it leaves room for those after it:
  // a try that ends at the axis's end still shows every attempt and pause.
  let left = 2 * attempts.length - 1 + (waitingAfter ? 1 : 0);
  const lead = Math.max(0, Math.min(col(previous?.endedAt ?? task.createdAt), bar - left));
  const line: Line = [seg(" ".repeat(lead))];
  let at = lead;
  const fill = (to: number, char: string, color: string) => {
    const n = Math.min(bar, to) - at;
    if (n <= 0) return;
    line.push(seg(char.repeat(n), { color }));
    at += n;
  };
  const piece = (to: number, char: string, color: string) => fill(Math.min(Math.max(at + 1, to), bar - --left), char, color);
  fill(Math.min(col(attempts[0]!.startedAt), bar - left), previous ? "┄" : "·", previous?.outcome === "interrupted" ? "magenta" : MUTED);
  attempts.forEach((attempt, i) => {
    if (i > 0) piece(col(attempt.startedAt), "┄", "magenta");
    piece(col(attempt.endedAt ?? now) + 1, "█", OUTCOME_COLOR[attempt.outcome ?? "running"]);
  });
  if (waitingAfter) piece(col(now) + 1, "┄", "magenta");
  line.push(seg(" ".repeat(Math.max(0, bar - at))));
  const ran = attemptsRanMs(attempts, now);
  const glyph = { succeeded: "✓", failed: "✗", interrupted: "◆", canceled: "⊘", running: "●" }[outcome];
  const detail = `${resumesText(attempts.length - 1)}${final.error ? ` ${clean(final.error)}` : waitingAfter ? " waiting" : ""}`;
  line.push(seg(` ${fit(span(ran), 6, "right")} ${glyph}`, { color: OUTCOME_COLOR[outcome] }), seg(detail, { color: MUTED }));
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
