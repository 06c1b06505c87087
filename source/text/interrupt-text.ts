import type { InterruptRequest } from "../../engine/index.js";
import { inline } from "./plain.js";

/**
 * What an interrupt puts before the operator beside its question, on one line (`interrupts`,
 * `show`): the tool call an agent asks to make with its arguments (`chargeCard {"amount":42}`),
 * else the data it carries as JSON, else the values it shows (`plan: "…"`).
 */
export function interruptDetails(request: InterruptRequest, max = 100): string {
  const data = request.data as { tool?: unknown; arguments?: unknown } | undefined;
  if (data && typeof data === "object" && typeof data.tool === "string" && "arguments" in data) return `${inline(data.tool, 40)} ${inline(data.arguments ?? null, max)}`;
  if (request.data !== undefined) return inline(request.data, max);
  const shown = Object.entries(request.show ?? {});
  return shown.length === 0 ? "" : inline(shown.map(([path, value]) => `${path}: ${JSON.stringify(value) ?? "undefined"}`).join(" · "), max);
}

/**
 * What decision "edit" edits at an interrupt whose answer is the edited values themselves (an
 * agent's tool call: its arguments, checked against the tool's parameters), for `resolve --edit`
 * and the console alike; undefined when an edit there is of the run's state.
 */
export function editedProposal(request: InterruptRequest): { value: unknown; schema: NonNullable<InterruptRequest["responseSchema"]> } | undefined {
  if (!request.responseSchema) return undefined;
  const data = request.data as { arguments?: unknown } | undefined;
  return { value: (data && typeof data === "object" ? data.arguments : undefined) ?? {}, schema: request.responseSchema };
}

/** A node as listings name it: with the item of a mapped node (`act[2]`). */
export function nodeLabel(node: string, index: number | null | undefined): string {
  return index === null || index === undefined ? node : `${node}[${index}]`;
}
