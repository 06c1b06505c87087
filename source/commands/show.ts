import { SKIPPED, currentStep, readRunCalls, redact, runUpgrades, runsAtOnceOf, shownTask, unclaimedWhy, type CallView, type InterruptRecord, type RetryWait, type RunRecord, type RunStatus, type RunTokens, type RunUpgrade, type Store, type TaskRecord, type TokenCount } from "../../engine/index.js";
import { defineCommand } from "../cli/command.js";
import { EXIT } from "../cli/errors.js";
import { age, bytes, childRunState, clock, retryWaitOf, runStatus } from "../cli/format.js";
import { duration, inline, plural } from "../text/plain.js";
import { ranMs } from "../text/run-time.js";
import { deadlineText, runDeadlineText } from "../text/deadline-text.js";
import { inboxText, receivedText } from "../text/signal-text.js";
import { waitingFor } from "../text/waiting-text.js";
import { interruptDetails, nodeLabel } from "../text/interrupt-text.js";
import { callStatusText, madeText, triesText } from "../text/attempt-text.js";
import { answerExcerpt, callTarget, sentExcerpt, tokenText, tokenTotal } from "../text/call-text.js";
import { mustGetRun } from "../cli/lookup.js";
import { noteRoom } from "../cli/room.js";
import type { Output } from "../cli/output.js";

const SHOWN_TASKS = 20;
const SHOWN_CALLS = 20;
const SHOWN_UPGRADES = 10;

export const show = defineCommand({
  name: "show",
  usage: "show <run>",
  summary: "a run: status and why it waits, tasks, pending interrupts, storage",
  details: `ATTEMPTS counts tries: an attempt that paused (a question, a timer, a sub-workflow) and the one
that resumed it are one ("1 (+1 resume)"); a durable call says how often it was made ("made 2
times": a retry of its node made it again, and it succeeded each time).
Model and tool calls are listed with what each was sent and what came back (one line each),
and the tokens the run's models used, in all and by node. What the finished nodes of a step still
in progress wrote is listed too: the state has it once the step ends. Each upgrade of the run
(pitwall upgrade) is listed: from which version to which, when, by whom, why, and the checkpoint
that fitted its state, if one was written.
--json prints the run record with "upgrades" ([{ from, to, at, actor, reason?, checkpointId? }],
oldest first), "tasks" (every task of the run), "interrupts" (its pending
interrupts), "calls" (each durable call: "kind" model, tool or call, "node", "call", "status",
"tokens", and a model's "prompt" and "answer" or a tool's "arguments" and "result"), "tokens"
({ prompt, completion, byNode }) and "storage" ({ checkpoints, events, artifacts, total } in bytes).`,
  flags: {},
  args: { min: 1, max: 1 },
  readsOnly: true,
  async run({ args, out, store, global }) {
    const s = await store();
    await noteRoom(s, out);
    const { run, tasks, interrupts, storage, child, workers, atOnce, upgrades } = await readTogether(s, args[0]!);
    const { calls, tokens } = await readRunCalls(s, run.id, tasks, { secretKeys: global.secretKeys });
    // Held back by its workflow's limit, or queued for long with nothing else to wait for: what
    // the workers' heartbeats say is missing.
    const unclaimed = unclaimedWhy(run, Date.now(), workers, atOnce);
    if (out.json) {
      const { byCall: _byCall, ...totals } = tokens;
      out.value({ ...run, upgrades, tasks: tasks.map((t) => shownTask(t, global.secretKeys)), interrupts, calls, tokens: totals, storage, ...(unclaimed ? { unclaimed } : {}) });
      return EXIT.ok;
    }
    printRun(out, run, child, tasks, tokens, await retryWaitOf(s, run, tasks), unclaimed && waitingFor(unclaimed, run, atOnce), upgrades);
    await printTasks(out, tasks);
    await printHeldWrites(out, run, tasks, global.secretKeys);
    await printCalls(out, calls, tasks);
    await printInterrupts(out, interrupts, tasks);
    out.line();
    out.line(`storage   checkpoints ${bytes(storage.checkpoints)} · events ${bytes(storage.events)} · artifacts ${bytes(storage.artifacts)} · total ${bytes(storage.total)}`);
    return EXIT.ok;
  },
});

/**
 * The run and what is shown with it, as of one moment: a commit landing between the reads (a
 * worker's, every few milliseconds) would show the run of one step with the tasks of the next.
 * Every commit adds events, so the run's event count read again after the others tells; read
 * again then (a few times at most: a run that never stops moving is shown as last read).
 */
async function readTogether(s: Store, runId: string) {
  let run = await mustGetRun(s, runId);
  for (let tries = 1; ; tries++) {
    const [tasks, interrupts, storage, child, workers, atOnce, upgrades] = await Promise.all([
      s.listTasks(run.id),
      s.listInterrupts({ runId: run.id, status: "pending" }),
      s.runStorage(run.id),
      run.waitingOn ? s.getRun(run.waitingOn) : undefined,
      run.status === "queued" ? s.listWorkers() : undefined,
      run.status === "queued" ? runsAtOnceOf(s, [run.workflow]).then((limits) => limits.get(run.workflow)) : undefined,
      runUpgrades(s, run.id),
    ]);
    const again = await s.getRun(run.id);
    if (!again || again.eventCount === run.eventCount || tries === 3) return { run, tasks, interrupts, storage, child, workers, atOnce, upgrades };
    run = again;
  }
}

function printRun(out: Output, run: RunRecord, child: RunRecord | undefined, tasks: readonly TaskRecord[], tokens: RunTokens, retry: RetryWait | undefined, unclaimed: string | undefined, upgrades: readonly RunUpgrade[]): void {
  const rows: [string, string][] = [
    ["run", `${run.id}  ${run.workflow} (version ${run.version.slice(0, 12)})`],
    ["status", runStatus(run, retry)],
  ];
  if (run.error && run.status !== "paused") rows.push(["error", `${run.error.code}${run.error.node ? ` at ${run.error.node}` : ""}: ${inline(run.error.message, 200)}`]);
  // A paused run's failed tasks are why it waits: their errors whole, not cut in the task table.
  if (run.status === "paused") {
    for (const t of tasks) if (t.step === run.step + 1 && t.parent === null && t.status === "failed" && t.error) rows.push(["failed", `${t.node}: ${t.error.message}`]);
  }
  rows.push(["step", `${currentStep(run)} · checkpoint ${run.headN} · ${run.eventCount} events${run.current.length ? ` · ${currentNodes(run, tasks)}` : ""}`]);
  const ran = ranMs(run, Date.now());
  const paused = (run.pausedMs ?? 0) > 0 ? ` (paused ${duration(run.pausedMs!)} besides)` : "";
  rows.push(["created", `${clock(run.createdAt)} (${age(run.createdAt)} ago) · updated ${age(run.updatedAt)} ago${run.endedAt ? ` · ended ${age(run.endedAt)} ago` : ""}${ran !== undefined ? ` · ran ${duration(ran)}${paused}` : ""}`]);
  const earlier = upgrades.length - SHOWN_UPGRADES;
  if (earlier > 0) rows.push(["upgraded", `${plural(earlier, "time")} before these (pitwall events ${run.id} --type run.upgraded)`]);
  for (const u of upgrades.slice(-SHOWN_UPGRADES)) rows.push(["upgraded", upgradeText(u)]);
  if (run.status === "running" && run.owner) rows.push(["owner", `worker:${run.owner} (${leaseState(run.leaseUntil ?? 0, Date.now())})`]);
  if (run.breakpoints.length) rows.push(["breaks", run.breakpoints.join(", ")]);
  if (run.tags) rows.push(["tags", Object.entries(run.tags).map(([k, v]) => `${k}=${v}`).join(" · ")]);
  if (run.inbox?.length) rows.push(["inbox", inboxText(run.inbox)]);
  if (typeof run.deadlineAt === "number" && run.endedAt === null) rows.push(["deadline", runDeadlineText(run.deadlineAt, Date.now())]);
  if (run.forkOf) rows.push(["fork of", `run ${run.forkOf.runId} at checkpoint ${run.forkOf.checkpointId}`]);
  else if (run.parentRunId) rows.push(["parent", `run ${run.parentRunId}`]);
  if (run.waitingOn) {
    // A child paused for an operator holds this run up: say so here, where the operator looks.
    const held = child ? `, ${childRunState(child)}` : "";
    rows.push(["waiting", `for child run ${run.waitingOn}${held}`]);
  }
  if (unclaimed) rows.push(["waiting", unclaimed]);
  const byNode = Object.entries(tokens.byNode);
  const nodesText = (counts: [string, TokenCount][]) => counts.map(([node, t]) => `${node} ${tokenText(t)}`).join(" · ");
  if (byNode.length > 0) rows.push(["tokens", `${tokenTotal(tokens)}${byNode.length > 1 ? ` (${nodesText(byNode)})` : ""}`]);
  const below = tokens.subWorkflows;
  if (below) rows.push([byNode.length > 0 ? "" : "tokens", `${byNode.length > 0 ? "+ " : ""}${tokenTotal(below)} in sub-workflows (${nodesText(Object.entries(below.byNode))})`]);
  if (run.recoveries) rows.push(["recovered", `${plural(run.recoveries, "time")} after a worker was lost`]);
  for (const [k, v] of rows) out.line(`${k.padEnd(9)} ${inline(v, 400)}`);
}

/** `abc123def456 → 0987fedcba65 at 14:02:07.311 (3h ago) by operator:alice ("fix prompt"); state fitted (checkpoint run-…:5)`. */
function upgradeText(u: RunUpgrade): string {
  const why = u.reason ? ` (${JSON.stringify(inline(u.reason, 120))})` : "";
  const fitted = u.checkpointId ? `; state fitted (checkpoint ${u.checkpointId})` : "";
  return `${u.from.slice(0, 12)} → ${u.to.slice(0, 12)} at ${clock(u.at)} (${age(u.at)} ago) by ${u.actor}${why}${fitted}`;
}

/** A lease that ran out means its worker is gone or stalled: say so, and what happens next. */
function leaseState(leaseUntil: number, now: number): string {
  if (leaseUntil > now) return `lease ${duration(leaseUntil - now)} left`;
  return `lease expired ${age(leaseUntil)} ago: the worker is gone or stalled; the next worker to claim the run takes it over`;
}

/**
 * The nodes of the step in progress, what they are to the run; those of them done already, those
 * stopped (killed or failed while the others go on) and those waiting out a retry's backoff (not
 * running, though the run is), said apart.
 */
function currentNodes(run: RunRecord, tasks: readonly TaskRecord[]): string {
  const now = Date.now();
  const stepTasks = tasks.filter((t) => t.step === run.step + 1 && t.parent === null);
  const of = (node: string) => stepTasks.filter((t) => t.node === node);
  const all = (node: string, statuses: readonly TaskRecord["status"][]) => of(node).length > 0 && of(node).every((t) => statuses.includes(t.status));
  const done = run.current.filter((node) => all(node, ["succeeded"]));
  const running = run.status === "running";
  // A node whose catch took its failure is done as far as its step goes.
  const caught = run.current.filter((node) => !done.includes(node) && of(node).length > 0 && of(node).every((t) => t.status === "succeeded" || t.caught));
  const stopped = running ? run.current.filter((node) => !done.includes(node) && !caught.includes(node) && all(node, ["succeeded", "failed", "canceled"])) : [];
  const backingOff = (node: string) => of(node).some((t) => t.status === "pending" && t.notBefore !== null && t.notBefore > now) && !of(node).some((t) => t.status === "running");
  const retrying = running ? run.current.filter((node) => !done.includes(node) && !stopped.includes(node) && backingOff(node)) : [];
  const left = run.current.filter((node) => !done.includes(node) && !caught.includes(node) && !stopped.includes(node) && !retrying.includes(node));
  const parts = [
    ...(left.length > 0 ? [`${CURRENT[run.status]} ${left.join(", ")}`] : []),
    ...(retrying.length > 0 ? [`waiting to retry ${retrying.join(", ")}`] : []),
  ];
  const apart = [...(done.length > 0 ? [`done: ${done.join(", ")}`] : []), ...(caught.length > 0 ? [`caught: ${caught.join(", ")}`] : []), ...(stopped.length > 0 ? [`stopped: ${stopped.join(", ")}`] : [])];
  if (parts.length === 0 || (apart.length === 0 && retrying.length === 0)) return `${CURRENT[run.status]} ${run.current.join(", ")}`;
  return `${parts.join(", ")}${apart.length > 0 ? ` (${apart.join("; ")})` : ""}`;
}

/** What a run's current nodes are to it. */
const CURRENT: Record<RunStatus, string> = { running: "running", paused: "at", queued: "next", succeeded: "at", failed: "at", canceled: "at" };

/** Each node's task followed by its durable calls (`draft_reply · model`), in the order they were made. */
function ordered(tasks: readonly TaskRecord[]): TaskRecord[] {
  const ids = new Set(tasks.map((t) => t.id));
  const calls = new Map<string, TaskRecord[]>();
  for (const t of tasks) if (t.parent !== null && ids.has(t.parent)) calls.set(t.parent, [...(calls.get(t.parent) ?? []), t]);
  return tasks.filter((t) => t.parent === null || !ids.has(t.parent)).flatMap((t) => [t, ...(calls.get(t.id) ?? [])]);
}

function taskLabel(t: TaskRecord): string {
  return t.call !== null ? `${t.node} · ${t.call}` : nodeLabel(t.node, t.index);
}

async function printTasks(out: Output, all: TaskRecord[]): Promise<void> {
  if (all.length === 0) return;
  out.line();
  const tasks = ordered(all);
  const shown = tasks.slice(-SHOWN_TASKS);
  out.line(tasks.length > shown.length ? `tasks (last ${shown.length} of ${tasks.length}; --json for all)` : "tasks");
  await out.table(
    ["STEP", "NODE", "STATUS", "ATTEMPTS", "LAST TIME", "ERROR / WAITING"],
    shown.map((t) => [
      String(t.step),
      taskLabel(t),
      t.attempts.at(-1)?.code === SKIPPED ? "skipped" : t.status,
      t.call === null ? triesText(t.attempts) : t.attempts.length <= 1 ? String(t.attempts.length) : madeText(t.attempts),
      duration(taskTime(t)),
      // Which signals the node took: which sent signal went where.
      [errorOrWait(t), receivedText(t.received)].filter(Boolean).join(" · "),
    ]),
  );
}

/**
 * What the step's finished nodes wrote while others of it still run or wait: the state (`pitwall
 * state`) has none of it until the step's last task ends, when all of it is applied at once.
 */
async function printHeldWrites(out: Output, run: RunRecord, tasks: readonly TaskRecord[], secretKeys: readonly string[]): Promise<void> {
  const held = tasks.filter((t) => t.step === run.step + 1 && t.parent === null && t.writes !== null && t.writes.length > 0);
  if (held.length === 0) return;
  out.line();
  out.line(`written by finished nodes of step ${run.step + 1}, into the state when the step ends`);
  await out.table(
    ["NODE", "KEY", "VALUE"],
    held.flatMap((t) => t.writes!.map(([key, value]) => [nodeLabel(t.node, t.index), key, inline(JSON.stringify((redact({ [key]: value }, secretKeys) as Record<string, unknown>)[key]) ?? "undefined", 80)])),
  );
}

/** How long its last attempt ran (or has been running): a retried task's backoffs and earlier attempts are not its time. */
function taskTime(t: TaskRecord): number | null {
  const last = t.attempts.at(-1);
  if (!last) return null;
  if (last.endedAt !== null) return last.endedAt - last.startedAt;
  return t.status === "running" ? Date.now() - last.startedAt : null;
}

/** Why a task stopped or what it waits for: a pending retry shows the error it retries after. */
function errorOrWait(t: TaskRecord): string {
  if ((t.status === "failed" || t.status === "canceled") && t.error) return inline(`${t.caught ? "caught: " : ""}${t.error.message}`, 60);
  const last = t.attempts.at(-1);
  if (t.status === "pending" && t.notBefore !== null && last?.error) {
    return `${t.notBefore > Date.now() ? `retry in ${age(Date.now(), t.notBefore)}` : "retry due"}: ${inline(last.error, 60)}`;
  }
  return t.waitingFor ? waiting(t.waitingFor) : "";
}

function waiting(wait: NonNullable<TaskRecord["waitingFor"]>): string {
  switch (wait.kind) {
    case "interrupt":
      return `interrupt ${wait.interruptId}`;
    case "time":
      return `until ${new Date(wait.until).toISOString()}`;
    case "run":
      return `child run ${wait.runId}`;
    case "signal":
      return `signal ${wait.name}${wait.until !== undefined ? ` until ${new Date(wait.until).toISOString()}` : ""}`;
  }
}

/** Each model and tool call: what it was sent and what came back, on one line each. */
async function printCalls(out: Output, all: readonly CallView[], tasks: readonly TaskRecord[]): Promise<void> {
  const records = new Map(tasks.map((t) => [t.id, t]));
  const calls = all.filter((c) => c.kind !== "call");
  if (calls.length === 0) return;
  out.line();
  const shown = calls.slice(-SHOWN_CALLS);
  out.line(calls.length > shown.length ? `model and tool calls (last ${shown.length} of ${calls.length}; --json for all)` : "model and tool calls");
  await out.table(
    ["STEP", "NODE", "CALL", "MODEL / TOOL", "STATUS", "TOKENS", "SENT", "ANSWER / RESULT"],
    shown.map((c) => [
      String(c.step),
      nodeLabel(c.node, c.index),
      c.call,
      callTarget(c),
      callStatusText(c.status, records.get(c.id)?.attempts ?? []),
      tokenText(c.tokens),
      sentExcerpt(c),
      answerExcerpt(c),
    ]),
  );
}

/** A mapped node's items ask the same question: the item tells their lines apart. */
function interruptNode(interrupt: InterruptRecord, tasks: readonly TaskRecord[]): string {
  return nodeLabel(interrupt.node, tasks.find((t) => t.id === interrupt.taskId)?.index);
}

async function printInterrupts(out: Output, interrupts: InterruptRecord[], tasks: readonly TaskRecord[]): Promise<void> {
  if (interrupts.length === 0) return;
  out.line();
  out.line("pending interrupts");
  // Only interrupts that have one say what their deadline does.
  const deadlines = interrupts.some((i) => i.deadline) ? ["DEADLINE"] : [];
  const now = Date.now();
  await out.table(
    ["INTERRUPT", "NODE", "KIND", "DECISIONS", ...deadlines, "QUESTION", "DETAILS"],
    interrupts.map((i) => [
      i.id,
      interruptNode(i, tasks),
      i.kind,
      i.request.decisions.join("/"),
      ...(deadlines.length ? [deadlineText(i.deadline, now)] : []),
      inline(i.request.question ?? "", 80),
      interruptDetails(i.request),
    ]),
  );
}
