import { errorMessage, newestVersions, planBatch, runBatch, type BatchAction, type BatchResult, type RunRecord, type WorkflowVersion } from "../../../engine/index.js";
import { seg, type Line } from "../components/lines.js";
import { CONFIRM_MARGIN } from "../components/dialogs.js";
import type { Services, Ui } from "../context.js";
import type { ConsoleSnapshot } from "../data.js";
import { askSignal, type TypedSignal } from "../signal-prompt.js";
import { clean, displayWidth, inline, truncate } from "../text.js";
import { ACCENT, MUTED } from "../theme.js";

/** What the runs list does to several runs at once (`pitwall batch` does the same). */
export type RunBatchKind = "cancel" | "retry" | "approve" | "reject" | "signal" | "upgrade";

/**
 * A batch as it is sent: a signal's name and data are asked for before the confirmation; an
 * upgrade moves each run to the newest version of its workflow stored when it was asked for.
 */
type RunBatch = { kind: Exclude<RunBatchKind, "signal" | "upgrade"> } | { kind: "signal"; signal: TypedSignal } | { kind: "upgrade"; newest: ReadonlyMap<string, WorkflowVersion> };

/** The runs a batch is about, and what the console knows of them (their pending interrupts, the signals they wait for). */
export interface BatchTarget {
  runs: readonly RunRecord[];
  snap: Pick<ConsoleSnapshot, "interrupts" | "signalWaits">;
  width: number;
}

const WORDS: Record<RunBatchKind, { title: string; button: string; doing: string; did: string; reason: "required" | "optional" }> = {
  cancel: { title: "Cancel", button: "Cancel", doing: "canceling", did: "canceled", reason: "required" },
  retry: { title: "Retry the failed tasks of", button: "Retry", doing: "retrying the failed tasks of", did: "retried the failed tasks of", reason: "optional" },
  approve: { title: "Approve the pending interrupts of", button: "Approve", doing: "approving the pending interrupts of", did: "approved the pending interrupts of", reason: "optional" },
  // A reject, as everywhere else, tells each run's node why.
  reject: { title: "Reject the pending interrupts of", button: "Reject", doing: "rejecting the pending interrupts of", did: "rejected the pending interrupts of", reason: "required" },
  signal: { title: "Send the signal to", button: "Signal", doing: "signaling", did: "signaled", reason: "optional" },
  upgrade: { title: "Upgrade", button: "Upgrade", doing: "upgrading", did: "upgraded", reason: "optional" },
};

/**
 * One action on several runs (the marked ones, or the selected one), after a confirmation that
 * lists them, what it does to each and those it leaves, with why (a reason goes to each; a cancel
 * or a reject needs one). A signal's name and data are asked for first. Each run gets its own
 * command: one refused meanwhile fails alone, and the footer counts what was done.
 * `confirmed` is told the runs sent to, once the operator has said yes.
 */
export async function batchOnRuns(services: Services, target: BatchTarget, kind: RunBatchKind, confirmed: (sent: readonly RunRecord[]) => void): Promise<void> {
  if (!services.operator) return;
  const batch: RunBatch | undefined =
    kind === "signal" ? await askRunsSignal(services.ui, target) : kind === "upgrade" ? { kind, newest: await newestVersions(services.store, target.runs.map((run) => run.workflow)) } : { kind };
  if (batch) await confirmAndSend(services, target, batch, confirmed);
}

async function confirmAndSend(services: Services, target: BatchTarget, batch: RunBatch, confirmed: (sent: readonly RunRecord[]) => void): Promise<void> {
  const { ui, store } = services;
  const { width } = target;
  // As the store has them now, as pitwall batch reads them: the list may not show the last change yet.
  const runs = (await Promise.all(target.runs.map((run) => store.getRun(run.id)))).map((fresh, i) => fresh ?? target.runs[i]!);
  const words = WORDS[batch.kind];
  const named = batch.kind === "signal" ? `signal ${batch.signal.name}` : batch.kind;
  // The reason is asked in the dialog: what is left, and why, does not depend on it.
  const plans = await Promise.all(runs.map(async (run) => (await planBatch(store, [run], actionOf(batch, "-", run)))[0]!));
  const planned = runs.map((run, i) => ({ run, skip: plans[i]!.status === "skipped" ? (plans[i] as { why: string }).why : undefined }));
  const acted = planned.filter((p) => !p.skip).map((p) => p.run);
  if (acted.length === 0) {
    ui.report({ tone: "error", text: clean(`nothing to ${batch.kind}: ${runs.length === 1 ? planned[0]!.skip! : `none of the ${runs.length} runs (${planned[0]!.skip})`}`) });
    return;
  }
  const body: Line[] = [
    ...(batch.kind === "signal" ? [batch.signal.data === undefined ? [seg("No data.", { color: MUTED })] : [seg("Data: ", { color: MUTED }), seg(truncate(inline(batch.signal.data), Math.max(10, width - CONFIRM_MARGIN - 7)))]] : []),
    ...runLines(planned.map(({ run, skip }) => ({ run, what: skip ? `left: ${skip}` : effectOn(run, batch, target), left: skip !== undefined })), width),
  ];
  const count = `${acted.length} run${acted.length === 1 ? "" : "s"}`;
  const answer = await ui.confirm({
    title: batch.kind === "signal" ? `Send signal ${batch.signal.name} to ${count}?` : `${words.title} ${count}?`,
    body,
    long: true,
    action: `${words.button} ${count}`,
    reason: words.reason,
  });
  if (!answer.ok) {
    ui.report({ tone: "info", text: `${named} not confirmed; nothing sent` });
    return;
  }
  confirmed(acted);
  const doing = `${words.doing} ${count}`;
  ui.report({ tone: "busy", text: `${doing}…` });
  const done = ui.working(doing);
  try {
    report(services, words.did, await send(services, acted, batch, answer.reason));
  } finally {
    done();
  }
}

/** The batch sent to the runs together, an upgrade's those of one workflow together (the version is their workflow's). */
async function send({ operator, store }: Services, runs: readonly RunRecord[], batch: RunBatch, reason: string): Promise<BatchResult[]> {
  const byWorkflow = new Map<string, RunRecord[]>();
  for (const run of runs) {
    const key = batch.kind === "upgrade" ? run.workflow : "";
    byWorkflow.set(key, [...(byWorkflow.get(key) ?? []), run]);
  }
  const results: BatchResult[] = [];
  for (const group of byWorkflow.values()) results.push(...(await runBatch(operator!, store, group, actionOf(batch, reason, group[0]!))));
  return results;
}

/** The engine's batch action for `batch` on `run`, with the reason typed (empty: none). */
function actionOf(batch: RunBatch, reason: string, run: RunRecord): BatchAction {
  const why = reason ? { reason } : {};
  switch (batch.kind) {
    case "cancel":
      return { kind: "cancel", reason };
    case "retry":
      return { kind: "retry", ...why };
    case "approve":
    case "reject":
      return { kind: "resolve", decision: batch.kind, ...why };
    case "signal":
      return { kind: "signal", name: batch.signal.name, ...(batch.signal.data !== undefined ? { data: batch.signal.data } : {}), ...why };
    case "upgrade":
      // The run's own version is stored, so its workflow always has a newest one.
      return { kind: "upgrade", workflow: batch.newest.get(run.workflow)!, ...why };
  }
}

/**
 * The signal to send the runs: the name most of them wait for is offered, the others they wait for
 * completed with tab.
 */
function askRunsSignal(ui: Ui, { runs, snap }: BatchTarget): Promise<RunBatch | undefined> {
  const waits = runs.flatMap((run) => snap.signalWaits.get(run.id) ?? []);
  const waiting = new Map<string, number>();
  for (const w of waits) waiting.set(w.name, (waiting.get(w.name) ?? 0) + 1);
  const [offered, n] = [...waiting].sort((a, b) => b[1] - a[1])[0] ?? ["", 0];
  const who = runs.length === 1 ? `${clean(waits.find((w) => w.name === offered)?.node ?? "")} waits for ${offered}` : `${n} of the ${runs.length} runs wait for ${offered}`;
  return askSignal(ui, offered, [...waiting.keys()], offered ? who : "").then((signal) => signal && { kind: "signal", signal });
}

/**
 * What the batch does to a run it acts on, as the console last saw the run: the interrupts an
 * answer resolves (those offering the decision), the node a signal lets go on; else its status.
 */
function effectOn(run: RunRecord, batch: RunBatch, { snap }: BatchTarget): string {
  const status = run.reason ? `${run.status} (${run.reason})` : run.status;
  if (batch.kind === "approve" || batch.kind === "reject") {
    const answered = snap.interrupts.filter((i) => i.runId === run.id && i.request.decisions.includes(batch.kind));
    return answered.length > 0 ? `${batch.kind}s ${answered.map((i) => `${i.node}${i.request.question ? `: ${i.request.question}` : ""}`).join("; ")}` : status;
  }
  if (batch.kind === "upgrade") return `moves from version ${run.version.slice(0, 12)} to ${batch.newest.get(run.workflow)!.version.slice(0, 12)}`;
  if (batch.kind === "signal") {
    const waiting = snap.signalWaits.get(run.id)?.find((w) => w.name === batch.signal.name);
    if (waiting) return `${waiting.node} waits for it and goes on with it`;
    // Only for a run paused for signals does the console know every wait: elsewhere, its status.
    return run.reason === "signal" ? `${status}; no node waits for it: it is kept until one takes it` : status;
  }
  return status;
}

/** Runs listed one a line up to this many; more, those of one workflow the batch does the same to are one line that counts them. */
const LISTED_RUNS = 12;

type RunEffect = { run: RunRecord; what: string; left: boolean };

/** A line per run, or, for a batch of many, a line per workflow and effect (`38 runs  review  approves ok: Ship it?`). */
function runLines(effects: readonly RunEffect[], width: number): Line[] {
  if (effects.length <= LISTED_RUNS) return effects.map(({ run, what, left }) => effectLine(`${run.id} `, run.workflow, what, left, width));
  const groups = new Map<string, RunEffect[]>();
  for (const effect of effects) {
    const key = `${effect.run.workflow}\u0000${effect.what}\u0000${effect.left}`;
    groups.set(key, [...(groups.get(key) ?? []), effect]);
  }
  return [...groups.values()].map((group) => {
    const { run, what, left } = group[0]!;
    return effectLine(group.length === 1 ? `${run.id} ` : `${group.length} runs  `, run.workflow, what, left, width);
  });
}

/** Which run (or how many), of which workflow, and what the batch does to it or why it leaves it. */
function effectLine(label: string, workflow: string, what: string, left: boolean, width: number): Line {
  const head = `${label}${clean(workflow)} `;
  return [seg(label, { color: left ? MUTED : ACCENT }), seg(`${clean(workflow)} `, { bold: !left }), seg(truncate(clean(what), Math.max(10, width - CONFIRM_MARGIN - displayWidth(head) - 1)), { color: left ? "yellow" : MUTED })];
}

function report({ ui }: Services, did: string, results: readonly BatchResult[]): void {
  const done = results.filter((r) => r.status === "done").length;
  const skipped = results.filter((r) => r.status === "skipped");
  const failed = results.filter((r): r is Extract<BatchResult, { status: "failed" }> => r.status === "failed");
  const parts = [
    `${did} ${done} run${done === 1 ? "" : "s"}${results.length > done ? ` of ${results.length}` : ""}`,
    ...(skipped.length > 0 ? [`${skipped.length} left (${skipped[0]!.why})`] : []),
    ...(failed.length > 0 ? [`${failed.length} refused or failed (${failed[0]!.runId}: ${errorMessage(failed[0]!.error)}${failed.length > 1 ? ", …" : ""})`] : []),
  ];
  ui.report({ tone: failed.length === 0 ? "ok" : done > 0 ? "info" : "error", text: clean(parts.join("; ")) });
}
