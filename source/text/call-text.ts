import type { CallView, RecordedMessage, TokenCount } from "../../engine/index.js";
import { inline } from "./plain.js";

/**
 * A model or tool call in words, as `pitwall show` lists it and the console's task page shows
 * it: what it was sent and what came back, each on one line, safe to print.
 */

/** The model that answered, or the tool called. */
export function callTarget(call: CallView): string {
  if (call.kind === "model") return call.model ?? "(default model)";
  return call.kind === "tool" ? call.tool : "";
}

/** A model call's last new message (`user: Draft a reply…`, `tool: {"found":true}`); a tool call's arguments as JSON. */
export function sentExcerpt(call: CallView, max = 60): string {
  switch (call.kind) {
    case "model": {
      const messages = call.prompt?.messages ?? [];
      const last = messages.findLast((m) => m.role !== "system") ?? messages.at(-1);
      if (!last) return call.prompt ? "" : "(not recorded)";
      const more = messages.filter((m) => m.role === last.role).length;
      return inline(`${last.role}${more > 1 ? ` (${more})` : ""}: ${messageText(last)}`, max);
    }
    case "tool":
      return inline(call.arguments, max);
    default:
      return call.input === undefined ? "" : inline(call.input, max);
  }
}

/** The tools a model chose and its text; a tool's result as JSON; the error of a call that failed; nothing yet for one still running. */
export function answerExcerpt(call: CallView, max = 70): string {
  if (call.status === "failed" || call.status === "canceled") return inline(`✗ ${call.error ?? call.status}`, max);
  if (call.status !== "succeeded") return call.status === "running" ? "(waiting for it)" : "";
  switch (call.kind) {
    case "model": {
      const answer = call.answer;
      if (!answer) return "";
      // What the model chose to do first: its text is cut before the tools it called.
      return inline([...answer.toolCalls.map((c) => `→ ${c.name} ${c.arguments}`), answer.content ?? ""].filter(Boolean).join(" "), max);
    }
    case "tool":
      return inline(call.result ?? null, max);
    default:
      return inline(call.output ?? null, max);
  }
}

/** `100+20`: prompt and completion tokens. */
export function tokenText(tokens: TokenCount | null): string {
  return tokens ? `${tokens.prompt}+${tokens.completion}` : "";
}

/** `250 prompt + 28 completion tokens`. */
export function tokenTotal(tokens: TokenCount): string {
  return `${tokens.prompt} prompt + ${tokens.completion} completion tokens`;
}

/** A recorded message's text: its content, and the tools an assistant message called. */
function messageText(message: RecordedMessage): string {
  const calls = (message.toolCalls ?? []).map((c) => `→ ${c.name} ${c.arguments}`);
  return [message.content ?? "", ...calls].filter(Boolean).join(" ");
}
