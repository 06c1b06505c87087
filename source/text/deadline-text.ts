import type { InterruptDeadline } from "../../engine/index.js";
import { span } from "./plain.js";

/**
 * What an interrupt's deadline will do, as of `now`: `reject in 23h`; past it, `reject (due 5m
 * ago)` — a worker gives it as soon as one runs. Empty without a deadline.
 */
export function deadlineText(deadline: InterruptDeadline | undefined, now: number): string {
  if (!deadline) return "";
  const left = deadline.at - now;
  return left > 0 ? `${deadline.decision} in ${span(left)}` : `${deadline.decision} (due ${span(-left)} ago)`;
}

/** When a run not ended by then is canceled, as of `now`: `canceled if not ended by 2026-12-03 09:00:00 UTC (in 23h)`; past it, `(due 5m ago)`. */
export function runDeadlineText(at: number, now: number): string {
  const when = new Date(at).toISOString().replace("T", " ").slice(0, 19);
  return `canceled if not ended by ${when} UTC (${at > now ? `in ${span(at - now)}` : `due ${span(now - at)} ago`})`;
}
