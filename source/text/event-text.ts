import type { EventPayloads, EventRecord, EventType } from "../../engine/index.js";
import { diffLine } from "./diff-text.js";
import { duration, inline } from "./plain.js";

/**
 * An event in words, as both the CLI's `events` and the console's events tab show it: the node it
 * is about (a column of its own in the console) and what happened, safe to print.
 */
export interface EventText {
  /** The node, with the item of a map node and the durable call when there are: `agent[2] · search`. */
  subject?: string;
  text: string;
}

type Describers = { [T in EventType]: (p: EventPayloads[T]) => EventText | string };

const about = (node: string, text: string, index?: number, call?: string): EventText => ({
  subject: `${index === undefined ? node : `${node}[${index}]`}${call ? ` · ${call}` : ""}`,
  text,
});

const describers: Describers = {
  "run.created": (p) =>
    `${p.workflow} (version ${p.version.slice(0, 12)})${p.forkOf ? ` forked from ${p.forkOf.runId} at ${p.forkOf.checkpointId}` : p.parentRunId ? ` child of ${p.parentRunId}` : ""}${p.schedule ? ` by schedule ${p.schedule}${p.scheduledFor !== undefined ? ` for ${new Date(p.scheduledFor).toISOString()}` : ""}${p.backfill ? " (backfill)" : ""}` : ""}${p.reason ? ` (${p.reason})` : ""}${p.signal ? `, started to take signal ${p.signal.name} (${p.signal.id})` : ""}${p.carriedSignals ? `, carrying ${p.carriedSignals} signal${p.carriedSignals === 1 ? "" : "s"} its source had not taken` : ""}`,
  "run.claimed": (p) => `by ${p.worker} (fence ${p.fence})${p.recovered ? ": taken over, its worker was lost" : ""}`,
  "run.released": (p) => `${p.status}: ${p.why}`,
  "run.paused": (p) => `${p.reason}${p.nodes.length ? ` at ${p.nodes.join(", ")}` : ""}`,
  "run.resumed": (p) => `by ${p.by}`,
  "run.upgraded": (p) => `from version ${p.from.slice(0, 12)} to ${p.to.slice(0, 12)}${p.checkpointId ? `, state fitted (checkpoint ${p.checkpointId})` : ""}${p.reason ? ` (${p.reason})` : ""}`,
  "run.succeeded": (p) => `after ${p.steps} steps`,
  "run.failed": (p) => `${p.error.code}${p.error.node ? ` at ${p.error.node}` : ""}: ${p.error.message}`,
  "run.canceled": (p) => p.reason,
  "run.signaled": (p) => `signal ${p.name} (${p.signalId})${p.for ? `: ${p.for} goes on` : ": kept until a node takes it"}`,
  "step.completed": (p) => `step ${p.step}: ${p.nodes.join(", ") || "-"} wrote ${p.keys.join(", ") || "nothing"}${p.next.length ? ` → ${p.next.join(", ")}` : ""}`,
  "task.scheduled": (p) => about(p.node, p.why, p.index),
  "task.started": (p) => about(p.node, `attempt ${p.attempt}${p.inputChanged ? " (made again: its input changed)" : ""}`, p.index, p.call),
  "task.succeeded": (p) =>
    p.skipped
      ? about(p.node, "skipped by an operator: it did not run")
      : about(p.node, `attempt ${p.attempt} in ${duration(p.durationMs)}${p.route ? ` → route ${p.route}` : ""}${p.keys.length ? `, wrote ${p.keys.join(", ")}` : ""}`, undefined, p.call),
  "task.failed": (p) => about(p.node, `attempt ${p.attempt}: ${p.error}${p.willRetry ? ` (retry in ${duration(p.retryInMs ?? 0)})` : ""}${failedAfter(p)}`, p.index, p.call),
  "task.interrupted": (p) => about(p.node, `waits for ${waitText(p.waitingFor)}`),
  "task.canceled": (p) => about(p.node, `canceled: ${p.reason}`, undefined, p.call),
  "interrupt.created": (p) =>
    about(p.node, `${p.kind} ${p.interruptId}${p.asksAgain ? ` (asks ${p.asksAgain} again)` : ""}${p.question ? `: ${p.question}` : ""}${p.deadline !== undefined ? ` (deadline ${new Date(p.deadline).toISOString()})` : ""}`),
  "interrupt.resolved": (p) => `${p.interruptId}: ${p.decision}${p.reason ? ` (${p.reason})` : ""}`,
  "state.edited": (p) => `checkpoint ${p.checkpointId}${p.asNode ? ` as ${p.asNode}` : ""}: ${p.diff.map((d) => diffLine(d)).join("; ")}${p.truncated ? " …" : ""}`,
  "operator.requested": (p) => `${p.command} ${inline(p.args, 60)}${p.reason ? ` (${p.reason})` : ""}`,
  "operator.accepted": (p) => `${p.command}: ${p.effect}`,
  "operator.refused": (p) => `${p.command}: ${p.reason}`,
  "node.progress": (p) => about(p.node, [p.fraction !== undefined ? `${Math.round(p.fraction * 100)}%` : "", p.message ?? ""].filter(Boolean).join(" ")),
  "node.log": (p) => about(p.node, `${p.level}: ${p.message}`),
};

/** Where a failure its node's catch took goes, or why the catch could not take it. */
function failedAfter(p: EventPayloads["task.failed"]): string {
  if (p.caught && p.tolerate !== undefined) return ` (caught; → ${p.caught.join(", ")} only if more than ${typeof p.tolerate === "number" ? `${p.tolerate} of its items fail` : `${p.tolerate} of its items fail`})`;
  if (p.caught) return ` (caught → ${p.caught.join(", ")})`;
  return p.uncaught ? ` (${p.uncaught})` : "";
}

function waitText(wait: EventPayloads["task.interrupted"]["waitingFor"]): string {
  switch (wait.kind) {
    case "interrupt":
      return `interrupt ${wait.interruptId}`;
    case "run":
      return `run ${wait.runId}`;
    case "time":
      return `its timer, until ${new Date(wait.until).toISOString()}`;
    case "signal":
      return `signal ${wait.name}${wait.until !== undefined ? `, until ${new Date(wait.until).toISOString()}` : ""}`;
  }
}

/** What an event says, at most `max` characters; an unknown type or payload shows as compact JSON. */
export function eventText(event: EventRecord, max = 160): EventText {
  const describe = describers[event.type] as ((p: unknown) => EventText | string) | undefined;
  let described: EventText;
  try {
    const said = describe ? describe(event.payload) : inline(event.payload, max);
    described = typeof said === "string" ? { text: said } : said;
  } catch {
    described = { text: inline(event.payload, max) };
  }
  return { ...(described.subject !== undefined ? { subject: inline(described.subject, 60) } : {}), text: inline(described.text, max) };
}

/** One readable line about an event: its node, then what happened. */
export function describeEvent(event: EventRecord): string {
  const { subject, text } = eventText(event);
  return subject === undefined ? text : `${subject} ${text}`;
}
