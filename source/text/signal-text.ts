import type { RunRecord, SignalRecord, TaskRecord } from "../../engine/index.js";

/**
 * The signals a run holds that no node has taken: how many of each name, oldest name first, and
 * (unless `carried` is false, where room is short) how many of them a fork carried from the run
 * it was forked from (`(2 carried from run R)`).
 */
export function inboxText(inbox: readonly SignalRecord[], { carried: sayCarried = true }: { carried?: boolean } = {}): string {
  const counts = new Map<string, number>();
  const carried = new Map<string, number>();
  for (const s of inbox) {
    counts.set(s.name, (counts.get(s.name) ?? 0) + 1);
    if (sayCarried && s.carriedFrom) carried.set(s.carriedFrom, (carried.get(s.carriedFrom) ?? 0) + 1);
  }
  const names = [...counts].map(([name, n]) => (n > 1 ? `${name} ×${n}` : name)).join(", ");
  const from = [...carried].map(([run, n]) => `${n} carried from run ${run}`).join(", ");
  return `${inbox.length} signal${inbox.length === 1 ? "" : "s"} no node has taken: ${names}${from ? ` (${from})` : ""}`;
}

/** A node of the step in progress parked until a signal of `name` comes (`ctx.receive`, a wait node's `signal`). */
export interface SignalWait {
  node: string;
  name: string;
}

/**
 * What the tasks of the run's step in progress wait for among signals, the longest waiting first
 * (the one a signal of its name lets go on), each node and name once.
 */
export function signalWaits(run: Pick<RunRecord, "step">, tasks: readonly TaskRecord[]): SignalWait[] {
  const waits = new Map<string, SignalWait>();
  const parked = tasks.filter((t) => t.step === run.step + 1 && t.status === "interrupted").sort((a, b) => a.createdAt - b.createdAt);
  for (const { node, waitingFor } of parked) if (waitingFor?.kind === "signal") waits.set(`${node}\u0000${waitingFor.name}`, { node, name: waitingFor.name });
  return [...waits.values()];
}

/** `waiting for signal payment.confirmed at paid`; several: `…signal a at x, y; signal b at z`. */
export function signalWaitText(waits: readonly SignalWait[]): string {
  const byName = new Map<string, string[]>();
  for (const w of waits) byName.set(w.name, [...(byName.get(w.name) ?? []), w.node]);
  return `waiting for ${[...byName].map(([name, nodes]) => `signal ${name} at ${nodes.join(", ")}`).join("; ")}`;
}

/**
 * What a task took of signals, by its receives (`name#k`: its k-th receive of `name`):
 * `took signal paid#1`, `took signals item#1, item#2`; a receive that gave up, none having come in
 * time: `no signal reply#1 in time`. Empty when it took none.
 */
export function receivedText(received: TaskRecord["received"]): string {
  const entries = Object.entries(received ?? {});
  const took = entries.filter(([, s]) => !s.timedOut).map(([key]) => key);
  const missed = entries.filter(([, s]) => s.timedOut).map(([key]) => key);
  return [
    ...(took.length > 0 ? [`took signal${took.length > 1 ? "s" : ""} ${took.join(", ")}`] : []),
    ...(missed.length > 0 ? [`no signal ${missed.join(", ")} in time`] : []),
  ].join(" · ");
}
