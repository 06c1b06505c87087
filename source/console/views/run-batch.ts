import { errorMessage, planBatch, runBatch, type BatchAction, type BatchResult, type RunRecord } from "../../../engine/index.js";
import { seg, type Line } from "../components/lines.js";
import { CONFIRM_MARGIN } from "../components/dialogs.js";
import type { Services } from "../context.js";
import { clean, displayWidth, truncate } from "../text.js";
import { ACCENT, MUTED } from "../theme.js";

/** What the runs list does to several runs at once (`pitwall batch` does the same). */
export type RunBatchKind = "cancel" | "retry";

const WORDS: Record<RunBatchKind, { title: string; doing: string; did: string }> = {
  cancel: { title: "Cancel", doing: "canceling", did: "canceled" },
  retry: { title: "Retry the failed tasks of", doing: "retrying the failed tasks of", did: "retried the failed tasks of" },
};

/**
 * One action on several runs (the marked ones, or the selected one), after a confirmation that
 * lists them and those it leaves, with why (a cancel's reason goes to each). Each run gets its
 * own command: one refused meanwhile fails alone, and the footer counts what was done.
 * `confirmed` is told the runs sent to, once the operator has said yes.
 */
export async function batchOnRuns(services: Services, runs: readonly RunRecord[], kind: RunBatchKind, width: number, confirmed: (sent: readonly RunRecord[]) => void): Promise<void> {
  const { ui, operator, store } = services;
  if (!operator) return;
  // The reason is asked in the dialog: what is left, and why, does not depend on it.
  const probe: BatchAction = kind === "cancel" ? { kind, reason: "-" } : { kind };
  const plans = await planBatch(store, runs, probe);
  const planned = runs.map((run, i) => ({ run, skip: plans[i]!.status === "skipped" ? (plans[i] as { why: string }).why : undefined }));
  const acted = planned.filter((p) => !p.skip).map((p) => p.run);
  if (acted.length === 0) {
    ui.report({ tone: "error", text: clean(`nothing to ${kind}: ${runs.length === 1 ? planned[0]!.skip! : `none of the ${runs.length} runs (${planned[0]!.skip})`}`) });
    return;
  }
  const body: Line[] = planned.map(({ run, skip }) => runLine(run, skip, width));
  const count = `${acted.length} run${acted.length === 1 ? "" : "s"}`;
  const answer = await ui.confirm({
    title: `${WORDS[kind].title} ${count}?`,
    body,
    long: true,
    action: `${kind === "cancel" ? "Cancel" : "Retry"} ${count}`,
    reason: kind === "cancel" ? "required" : "optional",
  });
  if (!answer.ok) {
    ui.report({ tone: "info", text: `${kind} not confirmed; nothing sent` });
    return;
  }
  confirmed(acted);
  const doing = `${WORDS[kind].doing} ${count}`;
  ui.report({ tone: "busy", text: `${doing}…` });
  const done = ui.working(doing);
  try {
    const action: BatchAction = kind === "cancel" ? { kind, reason: answer.reason } : { kind, ...(answer.reason ? { reason: answer.reason } : {}) };
    report(services, kind, await runBatch(operator, store, acted, action));
  } finally {
    done();
  }
}

function runLine(run: RunRecord, skip: string | undefined, width: number): Line {
  const head = `${run.id} ${clean(run.workflow)} `;
  const what = skip ? `left: ${skip}` : run.reason ? `${run.status} (${run.reason})` : run.status;
  return [seg(`${run.id} `, { color: skip ? MUTED : ACCENT }), seg(`${clean(run.workflow)} `, { bold: !skip }), seg(truncate(what, Math.max(10, width - CONFIRM_MARGIN - displayWidth(head) - 1)), { color: skip ? "yellow" : MUTED })];
}

function report({ ui }: Services, kind: RunBatchKind, results: readonly BatchResult[]): void {
  const done = results.filter((r) => r.status === "done").length;
  const skipped = results.filter((r) => r.status === "skipped");
  const failed = results.filter((r): r is Extract<BatchResult, { status: "failed" }> => r.status === "failed");
  const parts = [
    `${WORDS[kind].did} ${done} run${done === 1 ? "" : "s"}${results.length > done ? ` of ${results.length}` : ""}`,
    ...(skipped.length > 0 ? [`${skipped.length} left (${skipped[0]!.why})`] : []),
    ...(failed.length > 0 ? [`${failed.length} refused or failed (${failed[0]!.runId}: ${errorMessage(failed[0]!.error)}${failed.length > 1 ? ", …" : ""})`] : []),
  ];
  ui.report({ tone: failed.length === 0 ? "ok" : done > 0 ? "info" : "error", text: clean(parts.join("; ")) });
}
