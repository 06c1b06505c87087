import { ConflictError } from "../errors.js";
import type { CheckpointRecord, RunRecord, SignalRecord, TaskRecord } from "../store/records.js";
import type { Store } from "../store/store.js";
import { MAX_INBOX } from "../worker/signal-command.js";

/** Whether a fork's inbox starts with the signals its history has not taken (`"carry"`) or empty (`"none"`). */
export type ForkSignals = "carry" | "none";

/** How many signals of each name, names in the order they first come: `[["paid", 2], ["shipped", 1]]`. */
export type SignalTally = [name: string, count: number][];

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
  const later = (await store.listTasks(source.id)).filter((task) => task.step > from.step);
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
  /** Which receive of its name in its node took it (`name#k`). */
  k: number;
}

/** The signals these tasks took (not a receive that gave up, none having come). */
function takenIn(tasks: readonly TaskRecord[]): Taken[] {
  const taken: Taken[] = [];
  for (const task of tasks) {
    for (const [key, signal] of Object.entries(task.received ?? {})) {
      if (!signal.timedOut) taken.push({ signal, step: task.step, k: Number(key.slice(key.lastIndexOf("#") + 1)) });
    }
  }
  return taken;
}

/**
 * The signals oldest first, as the source got them. Within a name the order is the one its
 * nodes met them in (a receive takes the oldest of its name): those taken, by step, then by
 * the time they were sent (parallel nodes), then by receive; then those left in the inbox, in
 * its order. The names are interleaved by the time their signals were sent, never reordering a
 * name's own (the processes that sent them may disagree on the time).
 */
function inOrder(taken: readonly Taken[], inbox: readonly SignalRecord[]): SignalRecord[] {
  const byName = new Map<string, SignalRecord[]>();
  const seen = new Set<string>();
  const add = (signal: SignalRecord) => {
    if (seen.has(signal.id)) return;
    seen.add(signal.id);
    const ofName = byName.get(signal.name);
    if (ofName) ofName.push(signal);
    else byName.set(signal.name, [signal]);
  };
  const sorted = [...taken].sort((a, b) => a.step - b.step || a.signal.sentAt - b.signal.sentAt || a.k - b.k);
  for (const { signal } of sorted) add(signal);
  for (const signal of inbox) add(signal);
  const queues = [...byName.values()].map((signals) => ({ signals, at: 0 }));
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

/** How many of each name. */
export function tallySignals(signals: readonly SignalRecord[]): SignalTally {
  const counts = new Map<string, number>();
  for (const { name } of signals) counts.set(name, (counts.get(name) ?? 0) + 1);
  return [...counts];
}

/** `carried 3 signals (paid ×2, shipped) from run R`. */
export function carriedText(tally: SignalTally, from: string): string {
  const count = tallyCount(tally);
  return `carried ${count} signal${count === 1 ? "" : "s"} (${tally.map(([name, n]) => (n > 1 ? `${name} ×${n}` : name)).join(", ")}) from run ${from}`;
}

/** How many signals a tally counts. */
export function tallyCount(tally: SignalTally | undefined): number {
  return (tally ?? []).reduce((sum, [, n]) => sum + n, 0);
}
