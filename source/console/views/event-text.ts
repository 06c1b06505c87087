import type { EventRecord } from "../../../engine/index.js";
import { inline, span } from "../text.js";

type Payload = Record<string, unknown>;

/** A node's durable call an event is about (`search · `), as the node column does not say it. */
function call(p: Payload): string {
  return typeof p.call === "string" ? `${inline(p.call, true, 40)} · ` : "";
}

/** The node an event is about, if any. */
export function eventNode(event: EventRecord): string | undefined {
  const p = event.payload as Payload;
  return typeof p.node === "string" ? p.node : undefined;
}

/** The gist of an event in a few words (clean text). */
export function eventSummary(event: EventRecord): string {
  const p = event.payload as Payload;
  const s = (v: unknown) => inline(v, true, 300);
  switch (event.type) {
    case "task.started":
      return `${call(p)}attempt ${p.attempt}`;
    case "task.succeeded":
      if (p.skipped) return "skipped by an operator: it did not run";
      return `${call(p)}attempt ${p.attempt} in ${span(Number(p.durationMs))}${p.route ? ` → ${s(p.route)}` : ""}${Array.isArray(p.keys) && p.keys.length ? ` wrote ${s(p.keys.join(", "))}` : ""}`;
    case "task.failed":
      return `${call(p)}attempt ${p.attempt}: ${s(p.error)}${p.willRetry ? ` (retry in ${span(Number(p.retryInMs ?? 0))})` : ""}`;
    case "task.scheduled":
      return `${s(p.why)}`;
    case "task.canceled":
      return `${call(p)}${s(p.reason)}`;
    case "task.interrupted":
      return `waiting for ${s((p.waitingFor as Payload | undefined)?.kind)}`;
    case "step.completed":
      return `step ${p.step}: ${s((p.nodes as string[]).join(", "))}${Array.isArray(p.next) && p.next.length ? ` → ${s(p.next.join(", "))}` : ""}`;
    case "interrupt.created":
      return `${s(p.kind)}: ${s(p.question ?? "")}`;
    case "interrupt.resolved":
      return `${s(p.decision)}${p.reason ? ` — ${s(p.reason)}` : ""}`;
    case "run.paused":
      return `${s(p.reason)}${Array.isArray(p.nodes) && p.nodes.length ? `: ${s(p.nodes.join(", "))}` : ""}`;
    case "run.failed":
      return s((p.error as Payload | undefined)?.message);
    case "run.canceled":
      return s(p.reason);
    case "run.released":
      return `${s(p.status)}: ${s(p.why)}`;
    case "run.created":
      return `${s(p.workflow)}${p.forkOf ? ` forked from ${s((p.forkOf as Payload).checkpointId)}` : p.parentRunId ? ` child of ${s(p.parentRunId)}` : ""}${p.reason ? ` — ${s(p.reason)}` : ""}`;
    case "run.claimed":
      return `by ${s(p.worker)}${p.recovered ? " (taken over: its worker was lost)" : ""}`;
    case "run.resumed":
      return `by ${s(p.by)}`;
    case "run.succeeded":
      return `after ${p.steps} steps`;
    case "operator.requested":
      return `${s(p.command)}${p.reason ? ` — ${s(p.reason)}` : ""}`;
    case "operator.accepted":
      return `${s(p.command)}: ${s(p.effect)}`;
    case "operator.refused":
      return `${s(p.command)}: ${s(p.reason)}`;
    case "node.log":
      return `${s(p.level)}: ${s(p.message)}`;
    case "node.progress":
      return `${p.fraction !== undefined ? `${Math.round(Number(p.fraction) * 100)}%` : ""} ${s(p.message ?? "")}`.trim();
    default: {
      const { node: _node, ...rest } = p;
      return inline(rest, false, 300);
    }
  }
}

/** Colour of an event's type. */
export function eventColor(event: EventRecord): string | undefined {
  if (event.type.endsWith(".failed") || event.type === "operator.refused") return "red";
  if (event.type.endsWith(".succeeded") || event.type === "operator.accepted") return "green";
  if (event.type.startsWith("interrupt.") || event.type === "run.paused" || event.type === "task.interrupted") return "magenta";
  if (event.type === "task.started" || event.type === "run.claimed") return "yellow";
  if (event.type.startsWith("operator.")) return "cyan";
  return undefined;
}
