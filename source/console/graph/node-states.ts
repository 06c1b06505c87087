import { END, SKIPPED, type InterruptRecord, type TaskRecord } from "../../../engine/index.js";
import { doneInStep } from "../current-nodes.js";
import type { RunDetail } from "../hooks/use-run-detail.js";
import type { NodeStatus } from "../theme.js";
import type { GraphEdge } from "./layers.js";

export interface NodeState {
  status: NodeStatus;
  /** The node's tasks in the latest step it ran in (several for a mapped node: one per item). */
  tasks: TaskRecord[];
  /** The durable calls those tasks made (an agent's model and tool calls): not items of the node. */
  calls: TaskRecord[];
  /** Times the node has run (from the head checkpoint). */
  visits: number;
  /** Part of the step in progress, or waiting on an interrupt. */
  current: boolean;
  breakpoint: boolean;
  interrupt?: InterruptRecord;
}

const PRIORITY: NodeStatus[] = ["running", "waiting", "interrupted", "failed", "pending", "canceled", "succeeded"];

/** Each node's status as the graph shows it: its latest tasks, its pending interrupt, its visits. */
export function nodeStates(detail: RunDetail, nodes: readonly string[]): Map<string, NodeState> {
  const { run, tasks, checkpoints, interrupts } = detail;
  const latest = new Map<string, TaskRecord[]>();
  const calls = new Map<string, TaskRecord[]>();
  for (const task of tasks) {
    if (task.parent !== null) {
      calls.set(task.parent, [...(calls.get(task.parent) ?? []), task]);
      continue;
    }
    const kept = latest.get(task.node);
    if (!kept || kept[0]!.step < task.step) latest.set(task.node, [task]);
    else if (kept[0]!.step === task.step) kept.push(task);
  }
  const visits = checkpoints[checkpoints.length - 1]?.control.visits ?? {};
  const pending = new Map(interrupts.filter((i) => i.status === "pending").map((i) => [i.node, i]));
  const states = new Map<string, NodeState>();
  const done = doneInStep(run, tasks);
  for (const node of nodes) {
    const own = latest.get(node) ?? [];
    const interrupt = pending.get(node);
    // A node with visits but no task here ran before this run's history began: a fork's source ran it.
    const ranBefore = own.length === 0 && (visits[node] ?? 0) > 0;
    let status: NodeStatus = own.length === 0 ? (ranBefore ? "succeeded" : "idle") : PRIORITY.find((p) => own.some((t) => t.status === p)) ?? "succeeded";
    if (status === "interrupted" && own.every((t) => t.status !== "interrupted" || (t.waitingFor !== null && t.waitingFor.kind !== "interrupt"))) status = "parked";
    if (status === "succeeded" && own.length > 0 && own.every((t) => t.attempts.at(-1)?.code === SKIPPED)) status = "skipped";
    if (status === "failed" && own.every((t) => t.status !== "failed" || t.caught)) status = "caught";
    if (interrupt) status = "waiting";
    if (node === END) status = run.status === "succeeded" ? "succeeded" : "idle";
    const inStep = own.some((t) => t.step === run.step + 1 && t.status !== "succeeded");
    // Listed in the step in progress until the whole step commits, a node done there is not "now".
    const doneHere = done.has(node);
    states.set(node, {
      status,
      tasks: own,
      calls: own.flatMap((t) => calls.get(t.id) ?? []),
      visits: visits[node] ?? 0,
      current: ((run.current.includes(node) || inStep) && !doneHere) || interrupt !== undefined,
      breakpoint: run.breakpoints.includes(node),
      ...(interrupt ? { interrupt } : {}),
    });
  }
  return states;
}

/** Nodes on a cycle: a loop's back edge goes from its last node to its first. */
export function loopNodes(edges: readonly GraphEdge[]): Set<string> {
  const out = new Map<string, string[]>();
  for (const e of edges) out.set(e.from, [...(out.get(e.from) ?? []), e.to]);
  const reach = (from: string) => {
    const seen = new Set<string>([from]);
    const queue = [from];
    while (queue.length > 0) for (const n of out.get(queue.shift()!) ?? []) if (!seen.has(n)) (seen.add(n), queue.push(n));
    return seen;
  };
  const inLoop = new Set<string>();
  for (const back of edges.filter((e) => e.back)) {
    const fromTarget = reach(back.to);
    for (const n of fromTarget) if (reach(n).has(back.from)) inLoop.add(n);
  }
  return inLoop;
}
