import type { EventPayloads, EventRecord, EventType } from "../../engine/index.js";
import { diffLine } from "./diff-text.js";
import { duration } from "./format.js";
import { inline } from "./output.js";

type Describers = { [T in EventType]: (p: EventPayloads[T]) => string };

const describers: Describers = {
  "run.created": (p) => `${p.workflow} (version ${p.version.slice(0, 12)})${p.forkOf ? ` forked from ${p.forkOf.runId} at ${p.forkOf.checkpointId}` : p.parentRunId ? ` child of ${p.parentRunId}` : ""}${p.reason ? ` (${p.reason})` : ""}`,
  "run.claimed": (p) => `by ${p.worker} (fence ${p.fence}${p.recovered ? ", recovered" : ""})`,
  "run.released": (p) => `${p.status}: ${p.why}`,
  "run.paused": (p) => `${p.reason}${p.nodes.length ? ` at ${p.nodes.join(", ")}` : ""}`,
  "run.resumed": (p) => `by ${p.by}`,
  "run.succeeded": (p) => `after ${p.steps} steps`,
  "run.failed": (p) => `${p.error.code}${p.error.node ? ` at ${p.error.node}` : ""}: ${p.error.message}`,
  "run.canceled": (p) => p.reason,
  "step.completed": (p) => `step ${p.step}: ${p.nodes.join(", ") || "-"} wrote ${p.keys.join(", ") || "nothing"}${p.next.length ? ` → ${p.next.join(", ")}` : ""}`,
  "task.scheduled": (p) => `${node(p.node, p.index)} (${p.why})`,
  "task.started": (p) => `${node(p.node, p.index, p.call)} attempt ${p.attempt}`,
  "task.succeeded": (p) => (p.skipped ? `${p.node} skipped by an operator: it did not run` : `${node(p.node, undefined, p.call)} in ${duration(p.durationMs)}${p.route ? ` → route ${p.route}` : ""}`),
  "task.failed": (p) => `${node(p.node, undefined, p.call)} attempt ${p.attempt}: ${p.error}${p.willRetry ? ` (retry in ${duration(p.retryInMs ?? 0)})` : ""}`,
  "task.interrupted": (p) => `${p.node} waits for ${p.waitingFor.kind === "interrupt" ? `interrupt ${p.waitingFor.interruptId}` : p.waitingFor.kind}`,
  "task.canceled": (p) => `${node(p.node, undefined, p.call)}: ${p.reason}`,
  "interrupt.created": (p) => `${p.interruptId} ${p.kind} at ${p.node}${p.question ? `: ${p.question}` : ""}`,
  "interrupt.resolved": (p) => `${p.interruptId}: ${p.decision}${p.reason ? ` (${p.reason})` : ""}`,
  "state.edited": (p) => `checkpoint ${p.checkpointId}: ${p.diff.map((d) => diffLine(d)).join("; ")}${p.truncated ? " …" : ""}`,
  "operator.requested": (p) => `${p.command} ${inline(p.args, 60)}${p.reason ? ` (${p.reason})` : ""}`,
  "operator.accepted": (p) => `${p.command}: ${p.effect}`,
  "operator.refused": (p) => `${p.command}: ${p.reason}`,
  "node.progress": (p) => `${p.node} ${p.fraction !== undefined ? `${Math.round(p.fraction * 100)}%` : ""}${p.message ? ` ${p.message}` : ""}`,
  "node.log": (p) => `${p.node} ${p.level}: ${p.message}`,
};

/** `agent`, `items[2]`, and a durable call of a node as `agent · search` (as show names it). */
function node(name: string, index?: number, call?: string): string {
  return `${index === undefined ? name : `${name}[${index}]`}${call ? ` · ${call}` : ""}`;
}

/** One readable line about an event's payload; unknown types fall back to compact JSON. */
export function describeEvent(event: EventRecord): string {
  const describe = describers[event.type] as ((p: unknown) => string) | undefined;
  try {
    return inline(describe ? describe(event.payload) : event.payload, 160);
  } catch {
    return inline(event.payload, 160);
  }
}
