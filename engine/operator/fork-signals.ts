import { ConflictError } from "../errors.js";
import type { CheckpointRecord, RunRecord, SignalRecord, TaskRecord } from "../store/records.js";
import type { Store } from "../store/store.js";
import { MAX_INBOX } from "../worker/signal-command.js";

/** Whether a fork's inbox starts with the signals its history has not taken (`"carry"`) or empty (`"none"`). */
export type ForkSignals = "carry" | "none";

/**
 * How many signals, and how many of each of the first names (in the order they first come; at
 * most five: a fork may carry a thousand, and what it says is recorded in its events):
 * `{ count: 3, names: [["paid", 2], ["shipped", 1]] }`.
 */
export interface SignalTally {
  count: number;
  names: [name: string, count: number][];
}

const NAMED = 5;

/**
 * The signals a fork from checkpoint `from` of `source` starts with in its inbox: every signal
 * of the source that the fork's history (the source's, up to and including `from`) has not
 * taken — those the source's nodes took in the steps after it, and those still in its inbox —
 * as they were sent (data, sender, time), noting the run they were carried from. A signal is
 * sent to a run to be taken once: a fork from before its taking would otherwise wait for it
 * for ever. Refused (ConflictError) past the most a run holds untaken.
 *
 * `source` is read before its tasks: a signal taken in between is then found twice (once
 * each), not missed, and kept once.
 */
export async function signalsToCarry(store: Store, source: RunRecord, from: Pick<CheckpointRecord, "n" | "step">): Promise<SignalRecord[]> {
  const inbox = source.inbox ?? [];
  // The fork plans the step after `from` anew: what the source's nodes took from then on is not its.
  const later = await store.listTasks(source.id, { afterStep: from.step });
  const carried = inOrder(takenIn(later), inbox).map((signal) => ({ ...signal, carriedFrom: source.id }));
  if (carried.length > MAX_INBOX) {
    throw new ConflictError(
      `a fork of run ${source.id} from checkpoint ${from.n} would carry ${carried.length} signals its history has not taken, more than a run holds untaken (${MAX_INBOX}): fork with no signals carried (pitwall fork --no-signals, signals: "none") and send it those it needs`,
    );
  }
  return carried;
}

interface Taken {
  signal: SignalRecord;
  step: number;
  task: string;
  /** Which receive of its name in its node took it (`name#k`). */
  k: number;
}

/** The signals these tasks took (not a receive that gave up, none having come). */
function takenIn(tasks: readonly TaskRecord[]): Taken[] {
  const taken: Taken[] = [];
  for (const task of tasks) {
    for (const [key, signal] of Object.entries(task.received ?? {})) {
      if (!signal.timedOut) taken.push({ signal, step: task.step, task: task.id, k: Number(key.slice(key.lastIndexOf("#") + 1)) });
    }
  }
  return taken;
}

/**
 * The signals oldest first, as the source got them. Within a name the order is the one its
 * nodes met them in (a receive takes the oldest of its name): those taken, step by step — a
 * node's in the order of its receives, the nodes of one step merged by the time their signals
 * were sent — then those left in the inbox, in its order. The names are merged the same way.
 * Only where the order is not known is the time looked at: the processes that applied the
 * signals may disagree on it.
 */
function inOrder(taken: readonly Taken[], inbox: readonly SignalRecord[]): SignalRecord[] {
  const seen = new Set<string>();
  const byName = new Map<string, SignalRecord[]>();
  const add = (signal: SignalRecord) => {
    if (seen.has(signal.id)) return;
    seen.add(signal.id);
    byName.set(signal.name, [...(byName.get(signal.name) ?? []), signal]);
  };
  const byStep = new Map<number, Map<string, Taken[]>>();
  for (const t of taken) {
    const tasks = byStep.get(t.step) ?? new Map<string, Taken[]>();
    byStep.set(t.step, tasks.set(t.task, [...(tasks.get(t.task) ?? []), t]));
  }
  for (const step of [...byStep.keys()].sort((a, b) => a - b)) {
    const ofTasks = [...byStep.get(step)!.values()].map((ts) => ts.sort((a, b) => a.k - b.k).map((t) => t.signal));
    for (const signal of mergedBySentAt(ofTasks)) add(signal);
  }
  for (const signal of inbox) add(signal);
  return mergedBySentAt([...byName.values()]);
}

/** Lists merged into one, each list's own order kept, the earliest sent of the lists' heads first. */
function mergedBySentAt(lists: readonly (readonly SignalRecord[])[]): SignalRecord[] {
  const queues = lists.map((signals) => ({ signals, at: 0 }));
  const out: SignalRecord[] = [];
  for (;;) {
    let next: (typeof queues)[number] | undefined;
    for (const queue of queues) {
      if (queue.at < queue.signals.length && (!next || queue.signals[queue.at]!.sentAt < next.signals[next.at]!.sentAt)) next = queue;
    }
    if (!next) return out;
    out.push(next.signals[next.at++]!);
  }
}

/** How many, and of which names. */
export function tallySignals(signals: readonly SignalRecord[]): SignalTally {
  const counts = new Map<string, number>();
  for (const { name } of signals) counts.set(name, (counts.get(name) ?? 0) + 1);
  return { count: signals.length, names: [...counts].slice(0, NAMED) };
}

/** `carried 3 signals (paid ×2, shipped) from run R`; past five names, `(a, b ×2, c, d, e and 7 more)`. */
export function carriedText(tally: SignalTally, from: string): string {
  const named = tally.names.map(([name, n]) => (n > 1 ? `${name} ×${n}` : name)).join(", ");
  const rest = tally.count - tally.names.reduce((sum, [, n]) => sum + n, 0);
  return `carried ${tally.count} signal${tally.count === 1 ? "" : "s"} (${named}${rest > 0 ? ` and ${rest} more` : ""}) from run ${from}`;
}
