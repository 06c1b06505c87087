import { ConflictError } from "../errors.js";
import { Batch } from "../runtime/batch.js";
import type { EventFactory } from "../runtime/event-factory.js";
import { runTransition, transitionTask } from "../runtime/transitions.js";
import { TERMINAL_RUN_STATUSES, type CommandRecord, type SignalRecord, type TaskRecord } from "../store/records.js";
import { wokenRun } from "../store/rules.js";
import { refuse, type Prepared, type RunView } from "./command-view.js";

/** Signals a run holds that no node has taken, at most: past it, a sender is told (a node that never receives, most likely). */
export const MAX_INBOX = 1_000;

/**
 * A signal sent to a run (`Operator.signal`): kept in its inbox, oldest first, until a node takes
 * it (`ctx.receive`). The oldest task of the step in progress that waits for a signal of its name
 * goes on (its run made claimable at once: paused for signals, or parked on a timer or a child
 * run beside), and takes the oldest signal of that name when it runs. A run that has ended takes
 * none.
 */
export function prepareSignal(command: CommandRecord, view: RunView, events: EventFactory): Prepared {
  const { run } = view;
  if (TERMINAL_RUN_STATUSES.includes(run.status)) return refuse(new ConflictError(`run ${run.id} has ended (${run.status}): a signal reaches only a run that has not`));
  const inbox = run.inbox ?? [];
  if (inbox.length >= MAX_INBOX) {
    return refuse(new ConflictError(`run ${run.id} holds ${inbox.length} signals no node has taken (at most ${MAX_INBOX}): does a node receive ${JSON.stringify(command.args.name)}?`));
  }
  const name = command.args.name as string;
  const signal: SignalRecord = {
    id: command.id,
    name,
    ...(command.args.data !== undefined ? { data: command.args.data } : {}),
    actor: command.actor,
    sentAt: Date.now(),
    ...(command.reason ? { reason: command.reason } : {}),
  };
  const batch = new Batch();
  batch.patchRun({ inbox: [...inbox, signal] });
  const waiting = oldestWaiting(view.tasks, name);
  batch.event(events.run("run.signaled", { signalId: signal.id, name, ...(waiting ? { for: waiting.node } : {}) }));
  if (!waiting) return { ok: true, batch, effect: `signal ${name} kept until a node takes it: no node waits for it now`, writesState: false, result: { signalId: signal.id } };
  const resumed = transitionTask(waiting, "pending", { waitingFor: null, notBefore: null });
  batch.task(resumed, events.task(resumed, "task.scheduled", { node: waiting.node, why: "signal" }));
  const woken = wokenRun(run, signal.sentAt);
  if (woken) batch.patchRun(woken);
  if (run.status === "paused" && run.reason === "signal") {
    batch.patchRun(runTransition(run, "queued"));
    batch.event(events.run("run.resumed", { by: command.actor }));
  }
  return { ok: true, batch, effect: `signal ${name} sent: ${waiting.node} goes on`, writesState: false, result: { signalId: signal.id, node: waiting.node } };
}

function oldestWaiting(tasks: readonly TaskRecord[], name: string): TaskRecord | undefined {
  const waiting = tasks.filter((t) => t.status === "interrupted" && t.waitingFor?.kind === "signal" && t.waitingFor.name === name);
  return waiting.sort((a, b) => a.createdAt - b.createdAt || (a.id < b.id ? -1 : 1))[0];
}
