import { currentStep, errorMessage, type RunRecord, type TaskRecord } from "../../../engine/index.js";
import { seg, type Line } from "../components/lines.js";
import type { Services } from "../context.js";
import { clean, clock, span } from "../text.js";
import { MUTED, OUTCOME_COLOR } from "../theme.js";
import { nodeLabel } from "../../text/interrupt-text.js";
import { jsonLines } from "./json-lines.js";

/**
 * The task whose error the run's failure is: the last failed task of the node the run's error
 * names; with no node named (or no error on the run: a node failed and is retried), the task
 * that failed last.
 */
export function failedTask(run: RunRecord, tasks: readonly TaskRecord[]): TaskRecord | undefined {
  const failed = tasks.filter((t) => t.error !== null && t.parent === null);
  const named = run.error?.node ? failed.filter((t) => t.node === run.error!.node) : [];
  const last = (list: TaskRecord[]) => list.reduce<TaskRecord | undefined>((a, t) => (!a || t.step > a.step || (t.step === a.step && (t.endedAt ?? 0) >= (a.endedAt ?? 0)) ? t : a), undefined);
  return last(named) ?? last(failed);
}

const LABEL = 10;

function field(name: string, value: string, color?: string): Line[] {
  // A message of several lines keeps them: each under the value's column.
  return clean(value, 100_000)
    .split("\n")
    .map((part, i): Line => [seg(`   ${i === 0 ? name.padEnd(LABEL) : " ".repeat(LABEL)}`, { color: MUTED }), seg(part, color ? { color } : {})]);
}

/**
 * What `w` shows of a run: why it failed — its error's code, node and message — then the failed
 * task's error as it was thrown, its stack trace line by line, and how each of its attempts
 * ended. Undefined when nothing in it failed.
 */
export function failureLines(run: RunRecord, tasks: readonly TaskRecord[], width: number): Line[] | undefined {
  const task = failedTask(run, tasks);
  if (!run.error && !task) return undefined;
  const lines: Line[] = [[seg(` ${run.status}${run.reason ? ` (${run.reason})` : ""}`, { bold: true, color: run.status === "failed" ? "red" : "yellow" }), seg(`  ${clean(run.workflow)} · step ${currentStep(run)}${run.endedAt ? ` · ended ${clock(run.endedAt)}` : ""}`, { color: MUTED })], []];
  if (run.error) {
    lines.push([seg(" Error", { bold: true })], ...field("code", run.error.code), ...(run.error.node ? field("node", run.error.node) : []), ...field("message", run.error.message, "red"), []);
  } else lines.push([seg(" The run has no error of its own: the last failure of a node follows (it may be retried)", { color: MUTED })], []);
  if (!task?.error) return lines;
  const { error } = task;
  lines.push(
    [seg(` Failed task `, { bold: true }), seg(`${nodeLabel(task.node, task.index)} · step ${task.step} · ${task.id}`, { color: MUTED })],
    ...field("error", `${error.name ?? "Error"}${error.code ? ` (${error.code})` : ""}`),
    ...field("message", error.message, "red"),
    [],
    [seg(" Stack trace", { bold: true })],
  );
  // As it was thrown: the first line repeats the message, each frame on a row of its own.
  lines.push(...(error.stack ? jsonLines(error.stack, width - 2).map((l): Line => [seg("  "), ...l]) : [[seg("   none recorded (the failure was not a thrown error: a time-out, a lost worker, a bad output)", { color: MUTED })]]));
  lines.push([], [seg(" Attempts", { bold: true })]);
  for (const a of task.attempts) {
    const outcome = a.outcome ?? "running";
    lines.push([
      seg(`   #${a.n} `, { color: MUTED }),
      seg(outcome, { color: OUTCOME_COLOR[outcome] }),
      seg(a.endedAt !== null ? ` after ${span(a.endedAt - a.startedAt)}` : "", { color: MUTED }),
      seg(a.error ? ` ${a.code ? `${a.code}: ` : ""}${clean(a.error)}` : ""),
    ]);
  }
  return lines;
}

/**
 * `w` on a run (the runs list's selected one, the run view's): its failure as a page of text, read
 * from the store; a run where nothing failed says so in the footer.
 */
export async function describeFailure(services: Services, runId: string, width: number): Promise<void> {
  const { store, nav, ui } = services;
  try {
    const [run, tasks] = await Promise.all([store.getRun(runId), store.listTasks(runId)]);
    if (!run) return ui.report({ tone: "error", text: `run ${runId} not found (deleted?)` });
    const lines = failureLines(run, tasks, width);
    if (!lines) return ui.report({ tone: "info", text: `w: run ${runId} (${run.status}) has no failure to describe: none of its nodes failed` });
    nav.push({ kind: "text", title: `run ${runId}: why it failed`, lines, indent: LABEL + 3 });
  } catch (error) {
    ui.report({ tone: "error", text: `cannot read run ${runId}: ${clean(errorMessage(error))}` });
  }
}
