import { fireInstant, zonedTime, type ScheduleRecord } from "../../engine/index.js";
import { span } from "./plain.js";

/** When a schedule fires next, as of `now`: `2026-12-03 03:00 (in 17h)`; past it, `(due 2m ago)`: a worker fires it when one runs. */
export function nextText(schedule: Pick<ScheduleRecord, "id" | "nextAt" | "timezone" | "paused" | "jitterSeconds">, now: number): string {
  if (schedule.nextAt === null) return "never (its cron has no time left)";
  const when = zonedTime(schedule.nextAt, schedule.timezone);
  // Paused, a time passed means nothing: resumed, it fires from its next time after then.
  if (schedule.paused) return schedule.nextAt > now ? `${when} (paused)` : "- (paused: resumed, from its next time after then)";
  // With a jitter, when it fires too: the same instant in every worker.
  const fires = fireInstant(schedule, schedule.nextAt);
  const jittered = fires !== schedule.nextAt ? `; fires ${zonedTime(fires, schedule.timezone).slice(11)}` : "";
  return `${when} (${schedule.nextAt > now ? `in ${span(schedule.nextAt - now)}` : `due ${span(now - schedule.nextAt)} ago`}${jittered})`;
}

/** `active`, `paused`, or `done` (no time left); `, last time skipped` when its last time started no run. */
export function scheduleState(schedule: Pick<ScheduleRecord, "nextAt" | "paused" | "lastSkip">): string {
  const state = schedule.paused ? "paused" : schedule.nextAt === null ? "done" : "active";
  return schedule.lastSkip ? `${state}, last time skipped` : state;
}

/** One operator's change of a schedule, at the schedule's time zone: `2026-12-02 14:00 by ann: paused ("maintenance")`. */
export function changeText(change: NonNullable<ScheduleRecord["history"]>[number], timezone: string): string {
  return `${zonedTime(change.at, timezone)} by ${change.by}: ${change.what}${change.reason ? ` (${JSON.stringify(change.reason)})` : ""}`;
}

/** A schedule's last `count` changes, newest first: who paused it, and why, is what an operator looks for. */
export function recentChanges(schedule: Pick<ScheduleRecord, "history">, count: number): NonNullable<ScheduleRecord["history"]> {
  return (schedule.history ?? []).slice(-count).reverse();
}
