import { PitwallError, StoreError, ValidationError, errorMessage } from "../errors.js";
import type { ScheduleRecord } from "../store/records.js";
import type { Store } from "../store/store.js";
import { cronTimesBetween, zonedInstant, zonedTime } from "./cron-times.js";
import { fireSchedule, scheduleRunId, scheduledVersion } from "./schedule-fire.js";
import { checkStart } from "./start.js";

/** The most times one backfill starts: a longer stretch is backfilled in parts. */
export const MAX_BACKFILL_TIMES = 1_000;

/** A moment given to a backfill: an instant, or a date (and time) read in the schedule's time zone unless it gives an offset. */
export type BackfillBound = number | Date | string;

export interface BackfillOptions {
  from: BackfillBound;
  /** Not included: `--from 2026-11-20 --to 2026-11-27` is one week of daily times. */
  to: BackfillBound;
  /** Only say what it would do (`time.run` says which run each time has, or would get). */
  dryRun?: boolean;
}

/** One cron time of a backfill and its run: made now, there before (by a worker at the time, or an earlier backfill), or not made and why. */
export type BackfillTime =
  | { at: number; runId: string; outcome: "started" | "existed" | "would start" }
  | { at: number; runId: string; outcome: "failed"; error: string };

/**
 * Starts the runs of a schedule's cron times in a stretch of the past (Temporal's schedule
 * backfill): one run per time, with the id a worker firing at that time would have given it, so a
 * time that has its run (fired then, or backfilled before) keeps it, and a backfill made again
 * starts only what is missing. Every run starts at once, queued, oldest time first — the overlap
 * rule is not applied among them, as it is about a run still going when the next time comes —
 * and the schedule itself (its next time, its last run) is not changed. Checked before any run
 * starts: the stretch (in the past, `from` before `to`, at most MAX_BACKFILL_TIMES times), the
 * workflow and the input (a ValidationError or NotFoundError, nothing started). A failing store
 * stops it (the times after are not tried: backfill again); a time whose run id another run has
 * is reported failed, the others go on.
 */
export async function backfillSchedule(store: Store, schedule: ScheduleRecord, options: BackfillOptions, actor: string): Promise<BackfillTime[]> {
  const from = instant(options.from, schedule.timezone, "from");
  const to = instant(options.to, schedule.timezone, "to");
  const zoned = (at: number) => `${zonedTime(at, schedule.timezone)} ${schedule.timezone}`;
  if (from >= to) throw new ValidationError(`backfill from ${zoned(from)} to ${zoned(to)}: give a from before the to`);
  const now = await store.clock();
  if (to > now) throw new ValidationError(`backfill to ${zoned(to)} is later than now (${zoned(now)}): a backfill covers past times, the schedule fires the later ones itself`);
  const times = cronTimesBetween(schedule.cron, schedule.timezone, from, to, MAX_BACKFILL_TIMES);
  if (times === undefined) throw new ValidationError(`backfill from ${zoned(from)} to ${zoned(to)} holds more than ${MAX_BACKFILL_TIMES} times of ${schedule.cron}: backfill it in parts`);
  const workflow = await scheduledVersion(store, schedule);
  checkStart(workflow, schedule.input, {});
  const done: BackfillTime[] = [];
  for (const at of times) {
    const runId = scheduleRunId(schedule.id, at);
    if (options.dryRun) {
      done.push({ at, runId, outcome: (await store.getRun(runId)) ? "existed" : "would start" });
      continue;
    }
    try {
      const fired = await fireSchedule(store, schedule, at, { actor, force: true, backfill: true });
      done.push({ at, runId, outcome: fired.existed ? "existed" : "started" });
    } catch (error) {
      if (error instanceof StoreError || !(error instanceof PitwallError)) throw error;
      done.push({ at, runId, outcome: "failed", error: errorMessage(error) });
    }
  }
  return done;
}

function instant(bound: BackfillBound, timezone: string, label: string): number {
  const at = typeof bound === "string" ? zonedInstant(bound, timezone, label) : typeof bound === "number" ? bound : bound.getTime();
  if (!Number.isFinite(at)) throw new ValidationError(`${label}: give a time`);
  return at;
}
