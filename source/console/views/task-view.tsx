import { useMemo } from "react";
import { describeNode, runCalls, type CallView, type RunTokens, type TaskRecord } from "../../../engine/index.js";
import { Lines, seg, type Line } from "../components/lines.js";
import { useServices } from "../context.js";
import { useClock } from "../hooks/use-clock.js";
import { useKeys } from "../hooks/use-keys.js";
import { listHandlers, useWindow } from "../hooks/use-list.js";
import { useRemembered } from "../hooks/use-remembered.js";
import { notHere, useRunActions } from "../hooks/use-run-actions.js";
import { useRunDetail } from "../hooks/use-run-detail.js";
import { useRunTokens } from "../hooks/use-run-tokens.js";
import { PRIORITY } from "../key-router.js";
import { clean, fit, span } from "../text.js";
import { ACCENT, MUTED, NODE_LOOK } from "../theme.js";
import { answerExcerpt, callTarget, sentExcerpt, tokenText, tokenTotal } from "../../text/call-text.js";
import { triesText } from "../../text/attempt-text.js";
import { callPageLines, callTitle } from "./call-page.js";
import { jsonLines } from "./json-lines.js";

/** What the page shows: a node's latest tasks (every item of a mapped node), or one task. */
export interface TaskTarget {
  runId: string;
  node: string;
  taskId?: string;
  /** The call selected when the page opens. */
  call?: string;
}

type Row = { kind: "task"; task: TaskRecord; calls: number } | { kind: "call"; call: CallView };

/**
 * A node's task drilled into (`enter` on the graph or the timeline): how its attempts went, and
 * each model and tool call it made — what it was sent and what came back, its tokens. `enter` on
 * a call shows it whole: every message, the answer, the tool's arguments and result.
 */
export function TaskView({ target, width, height }: { target: TaskTarget; width: number; height: number }) {
  const { nav, ui, copy, secretKeys } = useServices();
  const { detail, error, deleted } = useRunDetail(target.runId);
  const { tokens } = useRunTokens(target.runId);
  const tasks = useMemo(() => (detail ? targetTasks(detail.tasks, target) : []), [detail, target]);
  const rows = useMemo(() => (detail ? taskRows(detail.tasks, tasks, tokens, secretKeys) : []), [detail, tasks, tokens, secretKeys]);
  const [picked, setPicked] = useRemembered<number | undefined>("task-selected", undefined);
  const initial = Math.max(0, target.call ? rows.findIndex((r) => r.kind === "call" && r.call.taskId === target.taskId && r.call.call === target.call) : rows.findLastIndex((r) => r.kind === "call"));
  const index = Math.min(picked ?? initial, Math.max(0, rows.length - 1));
  const selected = rows[index];
  const head = headLines(target, tasks, rows, tokens, detail?.definition?.nodes[target.node]);
  const listRows = Math.max(1, height - head.length - 2);
  // A running attempt's time grows by the second.
  const now = useClock(tasks.filter((t) => t.status === "running").map((t) => t.attempts.at(-1)?.startedAt));
  const start = useWindow(rows.length, index, listRows);
  // Kill and retry act on the selected row's task (a call's row: the task that made it).
  const selectedTask = selected?.kind === "task" ? selected.task : selected ? detail?.tasks.find((t) => t.id === selected.call.taskId) : undefined;
  const actions = useRunActions(detail, selectedTask ? { taskId: selectedTask.id, node: selectedTask.node } : { node: target.node });
  useKeys(PRIORITY.view, {
    ...listHandlers(rows.length, index, listRows, setPicked),
    open:
      selected &&
      (() =>
        nav.push(
          selected.kind === "call"
            ? { kind: "text", title: callTitle(selected.call), lines: callPageLines(selected.call, detail?.tasks.find((t) => t.id === selected.call.id)?.attempts ?? [], width) }
            : { kind: "text", title: `task ${clean(selected.task.id)}`, lines: jsonLines(selected.task, width) },
        )),
    close: () => nav.pop(),
    copy: selectedTask ? () => copy(selectedTask.id) : notHere(ui, "y: no task is selected"),
    filter: notHere(ui, "/: a task's page has nothing to filter; j/k select a call, ⏎ shows it whole"),
    kill: actions.kill,
    retry: actions.retry,
    retryEdited: actions.retryEdited,
  });

  if (!detail || deleted) {
    const text = deleted ? `run ${target.runId} is not in the store (deleted?)` : error ? `✗ ${error}` : `reading run ${target.runId}…`;
    return <Lines lines={[[seg(` ${clean(text)}`, { color: error || deleted ? "red" : MUTED })]]} width={width} height={height} />;
  }
  const lines: Line[] = [...head];
  if (tasks.length === 0) lines.push([seg(` ${clean(target.node)} has not run yet`, { color: MUTED })]);
  const columns = rowColumns(width, rows);
  for (let i = start; i < Math.min(rows.length, start + listRows); i++) lines.push(rowLine(rows[i]!, columns, i === index, now));
  while (lines.length < height - 1) lines.push([]);
  lines.push([seg(` ${rows.length > listRows ? `rows ${start + 1}-${Math.min(rows.length, start + listRows)} of ${rows.length} · ` : ""}j/k select · ⏎ shows it whole (every message, the answer, arguments and result) · esc back`, { color: MUTED })]);
  return <Lines lines={lines} width={width} height={height} />;
}

function targetTasks(all: readonly TaskRecord[], target: TaskTarget): TaskRecord[] {
  if (target.taskId) return all.filter((t) => t.id === target.taskId);
  const own = all.filter((t) => t.node === target.node && t.parent === null);
  const step = Math.max(...own.map((t) => t.step));
  return own.filter((t) => t.step === step).sort((a, b) => (a.index ?? 0) - (b.index ?? 0));
}

function taskRows(all: readonly TaskRecord[], tasks: readonly TaskRecord[], tokens: RunTokens | undefined, secretKeys: readonly string[]): Row[] {
  const ids = new Set(tasks.map((t) => t.id));
  const calls = runCalls(all.filter((t) => t.parent !== null && ids.has(t.parent)), tokens, secretKeys);
  return tasks.flatMap((task): Row[] => {
    const mine = calls.filter((c) => c.taskId === task.id);
    return [{ kind: "task", task, calls: mine.length }, ...mine.map((call): Row => ({ kind: "call", call }))];
  });
}

function headLines(target: TaskTarget, tasks: readonly TaskRecord[], rows: readonly Row[], tokens: RunTokens | undefined, node: Parameters<typeof describeNode>[0] | undefined): Line[] {
  const title: Line = [seg(` ${clean(target.node)}`, { bold: true }), seg(`  run ${target.runId}`, { color: ACCENT })];
  if (tasks[0]) title.push(seg(`  step ${tasks[0].step}`));
  if (node) title.push(seg(` — ${clean(describeNode(node))}`, { color: MUTED }));
  const calls = rows.filter((r): r is Extract<Row, { kind: "call" }> => r.kind === "call").map((r) => r.call);
  const used = calls.reduce((sum, c) => (c.tokens ? { prompt: sum.prompt + c.tokens.prompt, completion: sum.completion + c.tokens.completion } : sum), { prompt: 0, completion: 0 });
  const count = (kind: CallView["kind"], word: string) => {
    const n = calls.filter((c) => c.kind === kind).length;
    return n === 0 ? "" : `${n} ${word}${n === 1 ? "" : "s"}`;
  };
  const facts = [
    tasks.length > 1 ? `${tasks.length} items` : "",
    calls.length === 0 ? "no model or tool calls" : [count("model", "model call"), count("tool", "tool call"), count("call", "other durable call")].filter(Boolean).join(", "),
    used.prompt + used.completion > 0 ? tokenTotal(used) : tokens ? "" : "counting tokens…",
  ].filter(Boolean);
  return [title, [seg(` ${facts.join(" · ")}`, { color: MUTED })], []];
}

interface Columns {
  call: number;
  target: number;
  tokens: number;
  sent: number;
  answer: number;
}

function rowColumns(width: number, rows: readonly Row[]): Columns {
  const calls = rows.flatMap((r) => (r.kind === "call" ? [r.call] : []));
  const widest = (texts: string[], min: number, max: number) => Math.min(max, Math.max(min, ...texts.map((t) => t.length)));
  // On a narrow screen the names give way first: what was sent and answered is what is read.
  const fixed = { call: widest(calls.map((c) => c.call), 8, Math.min(24, Math.floor(width / 5))), target: widest(calls.map(callTarget), 8, Math.min(24, Math.floor(width / 7))), tokens: 9 };
  const rest = Math.max(20, width - 4 - fixed.call - fixed.target - fixed.tokens - 8);
  return { ...fixed, sent: Math.floor(rest * 0.45), answer: rest - Math.floor(rest * 0.45) };
}

function rowLine(row: Row, c: Columns, selected: boolean, now: number): Line {
  const pick = selected ? { inverse: true } : {};
  if (row.kind === "task") {
    const { task } = row;
    const look = NODE_LOOK[task.status];
    const last = task.attempts.at(-1);
    const time = last ? span((last.endedAt ?? now) - last.startedAt) : "";
    const about = [`${task.status}`, `attempt ${triesText(task.attempts)}`, time, task.error ? clean(task.error.message) : "", task.waitingFor?.kind === "interrupt" ? `waiting on interrupt ${task.waitingFor.interruptId}` : ""].filter(Boolean).join(" · ");
    return [seg(` ${look.glyph} `, { color: look.color }), seg(`${clean(task.node)}${task.index !== null ? `[${task.index}]` : ""}`, { bold: true, ...pick }), seg(`  ${about}`, { color: task.error ? "red" : MUTED })];
  }
  const { call } = row;
  const look = NODE_LOOK[call.status];
  return [
    seg(`   ${look.glyph} `, { color: look.color }),
    seg(fit(clean(call.call), c.call), pick),
    seg(` ${fit(clean(callTarget(call)), c.target)}`, { color: ACCENT }),
    seg(` ${fit(tokenText(call.tokens), c.tokens, "right")}`, { color: MUTED }),
    seg(`  ${fit(clean(sentExcerpt(call, c.sent)), c.sent)}`),
    seg(`  ${fit(clean(answerExcerpt(call, c.answer)), c.answer)}`, call.error ? { color: "red" } : {}),
  ];
}
