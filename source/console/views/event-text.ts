import type { EventRecord } from "../../../engine/index.js";

/** Colour of an event's type. */
export function eventColor(event: EventRecord): string | undefined {
  if (event.type.endsWith(".failed") || event.type === "operator.refused") return "red";
  if (event.type.endsWith(".succeeded") || event.type === "operator.accepted") return "green";
  if (event.type.startsWith("interrupt.") || event.type === "run.paused" || event.type === "task.interrupted") return "magenta";
  if (event.type === "task.started" || event.type === "run.claimed") return "yellow";
  if (event.type.startsWith("operator.")) return "cyan";
  return undefined;
}
