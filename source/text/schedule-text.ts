import { zonedTime, type ScheduleRecord } from "../../engine/index.js";
import { span } from "./plain.js";

/** When a schedule fires next, as of `now`: `2026-12-03 03:00 (in 17h)`; past it, `(due 2m ago)`: a worker fires it when one runs. */
export function nextText(schedule: Pick<ScheduleRecord, "nextAt" | "timezone" | "paused">, now: number): string {
  if (schedule.nextAt === null) return "never (its cron has no time left)";
  const when = zonedTime(schedule.nextAt, schedule.timezone);
  // Paused, a time passed means nothing: resumed, it fires from its next time after then.
  if (schedule.paused) return schedule.nextAt > now ? `${when} (paused)` : "- (paused: resumed, from its next time after then)";
  return `${when} (${schedule.nextAt > now ? `in ${span(schedule.nextAt - now)}` : `due ${span(now - schedule.nextAt)} ago`})`;
}

/** `active`, `paused`, or `done` (no time left); `, last time skipped` when its last time started no run. */
export function scheduleState(schedule: Pick<ScheduleRecord, "nextAt" | "paused" | "lastSkip">): string {
  const state = schedule.paused ? "paused" : schedule.nextAt === null ? "done" : "active";
  return schedule.lastSkip ? `${state}, last time skipped` : state;
}
