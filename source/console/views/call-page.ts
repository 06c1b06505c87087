import type { AttemptRecord, CallView, RecordedMessage } from "../../../engine/index.js";
import { seg, type Line } from "../components/lines.js";
import { clean, span } from "../text.js";
import { MUTED, OUTCOME_COLOR } from "../theme.js";
import { callTarget, tokenTotal } from "../../text/call-text.js";
import { callStatusText } from "../../text/attempt-text.js";
import { jsonLines } from "./json-lines.js";

/** The page `enter` opens on a call: its title. */
export function callTitle(call: CallView): string {
  return `${clean(call.node)}${call.index !== null ? `[${call.index}]` : ""} · ${clean(call.call)}${call.kind !== "call" ? ` · ${clean(callTarget(call))}` : ""}`;
}

/**
 * A durable call whole: how it went, then what it was sent (a model's new messages, each whole
 * as the record keeps them; a tool's arguments) and what came back (the answer and the tools it
 * chose; the tool's result), or its error. `attempts`: its record's, for how often it was made
 * (as `pitwall show` says it).
 */
export function callPageLines(call: CallView, attempts: readonly AttemptRecord[], width: number): Line[] {
  const lines: Line[] = [summary(call, attempts), []];
  switch (call.kind) {
    case "model": {
      const prompt = call.prompt;
      const note = prompt
        ? [prompt.earlier > 0 ? `after ${prompt.earlier} earlier messages, not kept here` : "", prompt.tools?.length ? `tools offered: ${prompt.tools.join(", ")}` : ""].filter(Boolean).join(" · ")
        : "not recorded (a call made before prompts were kept)";
      lines.push(heading("Sent", note));
      for (const message of prompt?.messages ?? []) lines.push(...messageLines(message, width));
      lines.push([], heading("Answer", call.answer ? "" : waitingNote(call)));
      if (call.answer) lines.push(...messageLines({ role: "assistant", content: call.answer.content, toolCalls: call.answer.toolCalls }, width, false));
      break;
    }
    case "tool":
      lines.push(heading("Arguments"), ...jsonLines(call.arguments, width), [], heading("Result", "result" in call ? "" : waitingNote(call)));
      if ("result" in call) lines.push(...jsonLines(call.result, width));
      break;
    default:
      lines.push(heading("Input", call.input === undefined ? "not recorded" : ""));
      if (call.input !== undefined) lines.push(...jsonLines(call.input, width));
      lines.push([], heading("Output", "output" in call ? "" : waitingNote(call)));
      if ("output" in call) lines.push(...jsonLines(call.output, width));
  }
  if (call.error) lines.push([], [seg(" Error ", { bold: true, color: "red" }), seg(clean(call.error), { color: "red" })]);
  return lines;
}

function summary(call: CallView, attempts: readonly AttemptRecord[]): Line {
  const color = OUTCOME_COLOR[call.status === "succeeded" || call.status === "failed" || call.status === "canceled" || call.status === "interrupted" ? call.status : "running"];
  const parts = [
    call.startedAt !== null && call.endedAt !== null ? span(call.endedAt - call.startedAt) : "",
    call.tokens ? tokenTotal(call.tokens) : "",
    `step ${call.step}`,
  ].filter(Boolean);
  return [seg(` ${callStatusText(call.status, attempts)}`, { color, bold: true }), seg(` · ${parts.join(" · ")}`, { color: MUTED })];
}

function heading(title: string, note = ""): Line {
  return [seg(` ${title}`, { bold: true }), ...(note ? [seg(`  ${clean(note)}`, { color: MUTED })] : [])];
}

function waitingNote(call: CallView): string {
  return call.status === "running" ? "waiting for it" : call.status === "succeeded" ? "" : `none (${call.status})`;
}

/** A message: its role, then its text whole, line by line; an assistant's tool calls after it. */
function messageLines(message: RecordedMessage, width: number, withRole = true): Line[] {
  const lines: Line[] = [];
  if (withRole) lines.push([seg(`  ${message.role}${message.toolCallId ? ` (answers ${clean(message.toolCallId)})` : ""}`, { color: "cyan" })]);
  if (message.content) lines.push(...jsonLines(message.content, width - 2).map((l) => [seg("  "), ...l]));
  for (const call of message.toolCalls ?? []) lines.push([seg("   → ", { color: "yellow" }), seg(`${clean(call.name)} `, { bold: true }), seg(clean(call.arguments))]);
  if (!message.content && !message.toolCalls?.length) lines.push([seg("   (empty)", { color: MUTED })]);
  return lines;
}
