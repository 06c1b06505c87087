import { ConflictError, PitwallError, RunExistsError, StoreError, errorMessage } from "../errors.js";
import { nextCronTime } from "../operator/cron-times.js";
import { fireInstant, fireSchedule, scheduleRunId } from "../operator/schedule-fire.js";
import type { ScheduleAdvance, ScheduleRecord } from "../store/records.js";
import type { Store } from "../store/store.js";
import type { WorkerNotice } from "./notices.js";
import { EarliestTimer } from "./earliest-timer.js";
import { lookUntil } from "./periodic.js";

/** How often a worker lists the schedules afresh: a schedule made or changed is seen within this. */
const RELOAD_MS = 60_000;
/**
 * A time more than this far behind the store's clock when a worker gets to it was missed (no
 * worker ran then): `catchUp: "none"` skips it. Longer than a reload, so that a schedule made
 * just before one of its times is not taken as having missed it.
 */
export const MISSED_AFTER_MS = 2 * RELOAD_MS;
/** How long a fire that failed (the store did not answer) waits before it is tried again. */
const RETRY_MS = 5_000;

/**
 * Fires the schedules (`ScheduleRecord`) as their times come, in every worker: each keeps their
 * next times in memory (listed at start and every minute) and one timer for the earliest. At a
 * time it reads the schedule again, starts its run (an id derived from the schedule and the time,
 * so workers firing together make one run) or decides to skip it, and moves the schedule on with
 * a compare-and-set on that time: one worker writes what the time did. Times are the store's
 * clock; a time that passed while no worker ran is fired (or skipped, `catchUp: "none"`) as soon
 * as one starts.
 */
export class ScheduleWatch {
  /** Next times (store clock) of the schedules not paused, by id, and when each fires (later by its jitter, or a retry's wait). */
  private readonly due = new Map<string, { at: number; fireAt: number }>();
  private readonly timer = new EarliestTimer(() => void this.fireDue());
  private aheadMs = 0;
  /** How many times it has acted on (runs started or times skipped), for a drain to tell whether to look again. */
  fired = 0;
  /** One look at the due times at a time: the timer's, a reload's, a drain's. */
  private turn: Promise<number> = Promise.resolve(0);

  constructor(
    private readonly store: Store,
    private readonly actor: string,
    private readonly notify: (notice: WorkerNotice) => void,
  ) {}

  /** Watches until `signal` aborts: lists the schedules now and every minute, and sets a timer for the next time. */
  start(signal: AbortSignal): void {
    this.timer.until(signal);
    lookUntil(signal, RELOAD_MS, () => this.reload(), (error) => this.notify({ level: "warn", kind: "schedule-fired", message: `looking for schedules that are due failed: ${errorMessage(error)}; trying again later` }));
  }

  /** Lists the schedules afresh (and the store's clock), and fires those due; returns how many times it acted on. */
  async reload(): Promise<number> {
    const sent = Date.now();
    const [schedules, clock] = await Promise.all([this.store.listSchedules(), this.store.clock()]);
    this.aheadMs = clock - Math.round((sent + Date.now()) / 2);
    this.due.clear();
    for (const schedule of schedules) this.keep(schedule);
    return this.fireDue();
  }

  /** Fires the schedules whose time has come; returns how many times it acted on. */
  fireDue(): Promise<number> {
    this.turn = this.turn.then(async () => {
      let acted = 0;
      for (const [id, { at, fireAt }] of [...this.due]) {
        if (fireAt > this.now()) continue;
        this.due.delete(id);
        if (await this.fire(id, at)) acted++;
      }
      this.fired += acted;
      this.arm();
      return acted;
    });
    return this.turn;
  }

  private keep(schedule: ScheduleRecord): void {
    if (schedule.paused || schedule.nextAt === null) this.due.delete(schedule.id);
    else this.due.set(schedule.id, { at: schedule.nextAt, fireAt: fireInstant(schedule, schedule.nextAt) });
  }

  private now(): number {
    return Date.now() + this.aheadMs;
  }

  private arm(): void {
    this.timer.arm([...this.due.values()].map((d) => d.fireAt), this.now());
  }

  /** Acts on one schedule's time `at`, if it is still its next one; whether this worker moved it on. */
  private async fire(id: string, at: number): Promise<boolean> {
    let schedule: ScheduleRecord | undefined;
    try {
      schedule = await this.store.getSchedule(id);
      if (!schedule || schedule.paused || schedule.nextAt !== at) {
        if (schedule) this.keep(schedule);
        return false;
      }
      const now = this.now();
      const late = now - fireInstant(schedule, at);
      const outcome = await this.outcome(schedule, at, late);
      const advance: ScheduleAdvance = {
        // The times passed while no worker ran are one (catch-up); those its jitter passed are not.
        nextAt: nextCronTime(schedule.cron, schedule.timezone, Math.max(at, at + late)),
        lastFiredAt: at,
        lastRunId: "runId" in outcome ? outcome.runId : schedule.lastRunId,
        lastSkip: "skipped" in outcome ? { at, reason: outcome.skipped } : null,
      };
      if (!(await this.store.advanceSchedule(id, at, advance))) {
        // Another worker moved it on first (it found the run this one made, or made it).
        this.keep((await this.store.getSchedule(id)) ?? { ...schedule, nextAt: null });
        return false;
      }
      this.keep({ ...schedule, ...advance });
      this.notify(firedNotice(schedule, at, outcome));
      return true;
    } catch (error) {
      this.due.set(id, { at, fireAt: this.now() + RETRY_MS });
      // The claim loop reports a failing store, once.
      if (!(error instanceof StoreError)) this.notify({ level: "warn", kind: "schedule-fired", message: `firing schedule ${id} for ${new Date(at).toISOString()} failed: ${errorMessage(error)}; trying again in ${RETRY_MS / 1000} s` });
      return false;
    }
  }

  /** What a time does, reached `lateMs` after it was due: the run it starts, or why it starts none. A failing store throws (the time is tried again). */
  private async outcome(schedule: ScheduleRecord, at: number, lateMs: number): Promise<Outcome> {
    // A run made for the time (by a worker that stopped before it moved the schedule on) is its run, missed or not.
    const missed = schedule.catchUp === "none" && lateMs > MISSED_AFTER_MS && !(await this.store.getRun(scheduleRunId(schedule.id, at)));
    if (missed) return { skipped: `missed: no worker ran at that time (catch-up none)`, expected: true };
    try {
      return await fireSchedule(this.store, schedule, at, { actor: this.actor });
    } catch (error) {
      if (error instanceof StoreError || !(error instanceof PitwallError)) throw error;
      // Overlap is the schedule working as told; a workflow gone, an input refused or a run of its id made by someone else needs someone.
      return { skipped: error.message, expected: error instanceof ConflictError && !(error instanceof RunExistsError) };
    }
  }
}

/** What a time did: the run it started (or found made), or why it started none. */
type Outcome = { runId: string; existed: boolean } | { skipped: string; expected: boolean };

function firedNotice(schedule: ScheduleRecord, at: number, outcome: Outcome): WorkerNotice {
  const time = new Date(at).toISOString();
  if ("skipped" in outcome) return { level: outcome.expected ? "info" : "warn", kind: "schedule-fired", message: `schedule ${schedule.id} (${schedule.workflow}) started no run for ${time}: ${outcome.skipped}` };
  return {
    level: "info",
    kind: "schedule-fired",
    runId: outcome.runId,
    message: `schedule ${schedule.id} (${schedule.workflow}) ${outcome.existed ? "found run" : "started run"} ${outcome.runId} for ${time}`,
  };
}
