import { CHILD_FAILED, currentStep, errorMessage, resumesText, triesOf, type RunRecord, type Store, type TaskRecord } from "../../../engine/index.js";
import { seg, type Line } from "../components/lines.js";
import type { Services } from "../context.js";
import { clean, clock, span } from "../text.js";
import { MUTED, OUTCOME_COLOR } from "../theme.js";
import { nodeLabel } from "../../text/interrupt-text.js";
import { attemptsRanMs } from "../../text/run-time.js";
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
/** How many child runs down `w` follows a failure (a sub-workflow's sub-workflow...). */
const MAX_DEPTH = 8;

function field(name: string, value: string, color?: string): Line[] {
  // A message of several lines keeps them: each under the value's column.
  return clean(value, 100_000)
    .split("\n")
    .map((part, i): Line => [seg(`   ${i === 0 ? name.padEnd(LABEL) : " ".repeat(LABEL)}`, { color: MUTED }), seg(part, color ? { color } : {})]);
}

/**
 * What `w` shows of a run: why it failed — its error's code, node and message — then the failed
 * task's error as it was thrown, its stack trace line by line, and how each of its tries ended.
 * Undefined when nothing in it failed.
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
  // As it was thrown: the first line repeats the message, each frame on a row of its own. A child
  // run's failure is the engine's own throw: the stack that tells is the child's, below.
  if (error.code === CHILD_FAILED) lines.push([seg("   the engine's, not the node's: the child run's failure follows", { color: MUTED })]);
  else lines.push(...(error.stack ? jsonLines(error.stack, width - 2).map((l): Line => [seg("  "), ...l]) : [[seg("   none recorded (the failure was not a thrown error: a time-out, a lost worker, a bad output)", { color: MUTED })]]));
  lines.push([], [seg(" Attempts", { bold: true })]);
  // Tries, as `show` and the Timeline count them: a pause and its resume are one, its time what it ran.
  triesOf(task.attempts).forEach((attempts, i) => {
    const last = attempts.at(-1)!;
    const outcome = last.outcome ?? "running";
    lines.push([
      seg(`   #${i + 1} `, { color: MUTED }),
      seg(outcome, { color: OUTCOME_COLOR[outcome] }),
      seg(`${last.endedAt !== null ? ` after ${span(attemptsRanMs(attempts, last.endedAt))}` : ""}${resumesText(attempts.length - 1)}`, { color: MUTED }),
      seg(last.error ? ` ${last.code ? `${last.code}: ` : ""}${clean(last.error)}` : ""),
    ]);
  });
  return lines;
}

/**
 * The child run whose failure failed `task` (a subgraph node's CHILD_FAILED): of the runs it
 * started, the last that failed or was canceled (a retry of the node starts a fresh one).
 */
async function failedChild(store: Store, run: RunRecord, task: TaskRecord): Promise<RunRecord | undefined> {
  let found: RunRecord | undefined;
  let cursor: string | undefined;
  do {
    const page = await store.listRuns({ parentRunId: run.id, status: ["failed", "canceled"], ...(cursor ? { cursor } : {}) });
    for (const child of page.runs) if (child.parentTaskId === task.id && (!found || child.createdAt > found.createdAt)) found = child;
    cursor = page.nextCursor;
  } while (cursor);
  return found;
}

/**
 * A failure that is a child run's, followed down: under the run's own failure, each child run that
 * failed it, with its failing node, stack trace and attempts, to the one where a node itself failed.
 */
async function childFailureLines(store: Store, run: RunRecord, tasks: readonly TaskRecord[], width: number): Promise<Line[]> {
  const lines: Line[] = [];
  for (let depth = 0; depth < MAX_DEPTH; depth++) {
    const task = failedTask(run, tasks);
    if (task?.error?.code !== CHILD_FAILED) break;
    const child = await failedChild(store, run, task);
    lines.push([], [seg(` Child run `, { bold: true }), seg(`${child?.id ?? "?"} · started by ${nodeLabel(task.node, task.index)} of ${run.id}`, { color: MUTED })]);
    if (!child) {
      lines.push([seg("   not found: it was deleted (pitwall prune), or the store lost it", { color: MUTED })]);
      break;
    }
    run = child;
    tasks = await store.listTasks(child.id);
    lines.push(...(failureLines(run, tasks, width) ?? [[seg(` ${run.status}${run.reason ? ` (${run.reason})` : ""}: none of its nodes failed`, { color: "yellow" })]]));
  }
  return lines;
}

/**
 * `w` on a run (the runs list's selected one, the run view's): its failure as a page of text, read
 * from the store, followed into the child runs it came from; a run where nothing failed says so in
 * the footer.
 */
export async function describeFailure(services: Services, runId: string, width: number): Promise<void> {
  const { store, nav, ui } = services;
  try {
    const [run, tasks] = await Promise.all([store.getRun(runId), store.listTasks(runId)]);
    if (!run) return ui.report({ tone: "error", text: `run ${runId} not found (deleted?)` });
    const own = failureLines(run, tasks, width);
    if (!own) return ui.report({ tone: "info", text: `w: run ${runId} (${run.status}) has no failure to describe: none of its nodes failed` });
    const lines = [...own, ...(await childFailureLines(store, run, tasks, width))];
    nav.push({ kind: "text", title: `run ${runId}: why it failed`, lines, indent: LABEL + 3 });
  } catch (error) {
    ui.report({ tone: "error", text: `cannot read run ${runId}: ${clean(errorMessage(error))}` });
  }
}
