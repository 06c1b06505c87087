import { editPatch, leaseRanOut, nodesRunOnRetry, readState, type TaskRecord } from "../../../engine/index.js";
import { seg } from "../components/lines.js";
import { act, useServices, type Ui } from "../context.js";
import { explain, type Handler, type Handlers } from "../keymap.js";
import { hasEnded } from "../run-end.js";
import { clean } from "../text.js";
import { MUTED } from "../theme.js";
import { rereadState, stateValidation, useEditState } from "./use-edit-state.js";
import type { RunDetail } from "./use-run-detail.js";

/**
 * Tasks of the step in progress (the head's step + 1), where kill and retry apply: the nodes'
 * tasks, not their durable calls (a failed model call fails its node, which is what runs again).
 */
export function currentTasks(detail: RunDetail): TaskRecord[] {
  return detail.tasks.filter((t) => t.step === detail.run.step + 1 && t.parent === null);
}

/** What retrying `task` runs again, as the engine decides it. */
export function willRunAgain(detail: RunDetail, task: TaskRecord): string[] {
  return nodesRunOnRetry(currentTasks(detail), task);
}

/** A key that does not apply here: the footer says why, and what to do instead. */
export function notHere(ui: Ui, text: string): Handler {
  return explain(() => ui.report({ tone: "info", text }));
}

/**
 * Kill, retry (as it was, or with the state edited) and breakpoint on one node (or one task, from the timeline), and cancel on the
 * run. Handlers exist where the console may write; an action that does not apply says why.
 */
export function useRunActions(detail: RunDetail | undefined, target: { node?: string; taskId?: string }): Handlers {
  const { operator, ui, store } = useServices();
  const edit = useEditState();
  if (!operator || !detail) return {};
  const { run } = detail;
  const step = currentTasks(detail).filter((t) => (target.taskId ? t.id === target.taskId : t.node === target.node));
  const running = step.find((t) => t.status === "running");
  // A task a lost worker left running (its lease ran out) can be retried as a failed one.
  const lost = leaseRanOut(run, Date.now());
  const retryable =
    hasEnded(run) && run.status !== "failed" ? undefined : step.find((t) => t.status === "failed" || t.status === "canceled" || (lost && t.status === "running"));
  const retryWhat = retryable && `${retryable.node} (task ${retryable.id}, ${retryable.status === "running" ? "left running by a lost worker" : retryable.status})`;
  const node = target.node ?? step[0]?.node;
  // Where the selected node stands, for a key that does not apply to it.
  const ended = hasEnded(run) ? `run ${run.id} has ended (${run.status})` : undefined;
  const earlier = target.taskId ? detail.tasks.find((t) => t.id === target.taskId) : undefined;
  const where =
    node === undefined
      ? "no node is selected"
      : step[0]
        ? `${clean(node)} is ${step[0].status} in step ${step[0].step}`
        : earlier
          ? `this task of ${clean(node)} is from step ${earlier.step}, not the step in progress (${run.step + 1})`
          : `${clean(node)} has not run in step ${run.step + 1}`;
  const noRetry = (key: string) =>
    notHere(
      ui,
      ended && run.status !== "failed"
        ? `${key}: ${ended}; nothing to retry — F in Checkpoints forks it from a checkpoint`
        : running
          ? `${key}: ${clean(running.node)} is running: kill it first (ctrl-k), then ${key} retries it`
          : `${key}: ${where}; only a failed or canceled task is retried`,
    );

  return {
    kill:
      (running &&
      (async () => {
        const answer = await ui.confirm({
          title: `Kill ${running.node} (task ${running.id})?`,
          body: [
            [
              seg(
                lost
                  ? "Its worker was lost: nothing runs it any more. It is marked canceled and the run pauses; R retries it."
                  : "Its signal is aborted; after a grace period its late result is refused. The run pauses; R retries it.",
                { color: MUTED },
              ),
            ],
          ],
          action: "Kill task",
          reason: "optional",
          runId: run.id,
        });
        if (answer.closed) return;
        if (!answer.ok) return ui.report({ tone: "info", text: "kill canceled; nothing sent" });
        await act(ui, `kill ${running.node}`, async () => (await operator.kill(run.id, { task: running.id, ...(answer.reason ? { reason: answer.reason } : {}) })).effect);
      })) ||
      notHere(ui, `ctrl-k: ${ended ?? where}; only a running task can be killed`),
    retry:
      (retryable &&
      (async () => {
        const again = willRunAgain(detail, retryable);
        const answer = await ui.confirm({
          title: `Retry ${retryWhat}?`,
          body: [
            [seg("Runs again in step "), seg(String(retryable.step), { bold: true }), seg(": "), seg(again.join(", "), { bold: true, color: "yellow" })],
            [seg("Tasks of that step that succeeded keep their results; the graph then goes on from there.", { color: MUTED })],
          ],
          action: "Retry",
          reason: "optional",
          runId: run.id,
        });
        if (answer.closed) return;
        if (!answer.ok) return ui.report({ tone: "info", text: "retry canceled; nothing sent" });
        await act(ui, `retry ${retryable.node}`, async () => {
          const outcome = await operator.retry(run.id, retryable.id, answer.reason ? { reason: answer.reason } : {});
          const willRun = outcome.result.willRun as string[] | undefined;
          return willRun ? `retrying; will run again: ${willRun.join(", ")}` : outcome.effect;
        });
      })) ||
      noRetry("R"),
    retryEdited:
      (retryable &&
      edit &&
      detail.definition &&
      (async () => {
        // The state the retried step starts from: the run's head.
        const state = await readState(store, run.id, run.headN);
        await edit({
          what: `Retrying ${retryWhat} of run ${run.id} (runs again: ${willRunAgain(detail, retryable).join(", ")}) from this state`,
          at: run.headN,
          value: state,
          validate: stateValidation(detail.definition!),
          runId: run.id,
          action: "Retry",
          reread: () => rereadState(store, run.id),
          send: async (edited, reason, base) => {
            const outcome = await operator.retry(run.id, retryable.id, { patch: editPatch(base, edited), ...(reason ? { reason } : {}) });
            const willRun = outcome.result.willRun as string[] | undefined;
            return willRun ? `retrying with the edited state; will run again: ${willRun.join(", ")}` : outcome.effect;
          },
        });
      })) ||
      (retryable && !detail.definition ? notHere(ui, `E: the workflow version ${run.version} of run ${run.id} is not in the store; R retries without an edit`) : noRetry("E")),
    breakpoint:
      (node !== undefined &&
      !hasEnded(run) &&
      (() => {
        const set = run.breakpoints.includes(node);
        return act(ui, set ? `clear breakpoint on ${node}` : `breakpoint on ${node}`, async () =>
          (set ? await operator.clearBreakpoint(run.id, node) : await operator.breakpoint(run.id, node)).effect,
        );
      })) ||
      notHere(ui, ended ? `b: ${ended}; breakpoints are for runs still going` : "b: select a node first (j/k)"),
    cancelRun:
      (!hasEnded(run) &&
      (async () => {
        const answer = await ui.confirm({
          title: `Cancel run ${run.id} (${clean(run.workflow)})?`,
          body: [[seg("Running tasks are aborted, pending interrupts closed, child runs canceled. This cannot be undone.", { color: MUTED })]],
          action: "Cancel run",
          reason: "required",
          runId: run.id,
        });
        if (answer.closed) return;
        if (!answer.ok) return ui.report({ tone: "info", text: "cancel not confirmed; nothing sent" });
        await act(ui, `cancel ${run.id}`, async () => (await operator.cancel(run.id, { reason: answer.reason })).effect);
      })) ||
      notHere(ui, `C: ${ended}; nothing to cancel`),
  };
}
