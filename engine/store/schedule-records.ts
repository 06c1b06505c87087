/** Whether a schedule starts a run while the last run it started has not ended (`skip`: it does not, and says so). */
export type ScheduleOverlap = "skip" | "allow";
/** What a schedule does with the times it missed while no worker ran: fire once for them (`one`), or not at all (`none`). */
export type ScheduleCatchUp = "one" | "none";

/**
 * A schedule: runs of a workflow started at the times of a cron expression (Temporal's Schedules,
 * LangGraph's cron jobs). Times are on the store's clock (Redis: the server's). Each fire time
 * starts at most one run, whose id derives from the schedule and the time, however many workers
 * watch the store.
 */
export interface ScheduleRecord {
  /** Its name: letters, digits, '.', '_' and '-'. */
  id: string;
  /** The workflow's name: its latest stored version when it fires, unless `version` pins one. */
  workflow: string;
  version: string | null;
  /** Five fields (minute hour day-of-month month day-of-week), or a nickname such as `@daily`. */
  cron: string;
  /** IANA name the cron times are read in (`UTC`, `Europe/Berlin`). */
  timezone: string;
  /** Each run's input (a partial state, checked against the workflow as a start's is). */
  input: Record<string, unknown>;
  overlap: ScheduleOverlap;
  catchUp: ScheduleCatchUp;
  paused: boolean;
  /** Its next fire time; null: its cron has no time left. */
  nextAt: number | null;
  /** The fire time acted on last (a run started, or skipped as `lastSkip` says); null: none yet. */
  lastFiredAt: number | null;
  /** The run it started last. */
  lastRunId: string | null;
  /** Why the last fire time started no run (the run before had not ended, the workflow is gone...); null when it started one. */
  lastSkip: { at: number; reason: string } | null;
  createdAt: number;
  updatedAt: number;
  /** Who made it or changed it last (`operator:ann`), and why when they said. */
  updatedBy?: string;
  updateReason?: string;
  /** Given by the store, one more at each write: a change made from an older read is refused. */
  revision: number;
  /** Tags of the runs it starts (with `schedule: <id>`). */
  tags?: Record<string, string>;
  /**
   * Each time fires this much later at most (seconds; absent: none): the same delay for a time in
   * every worker, drawn from the schedule and the time, so that many schedules of one time spread
   * their runs out. The time itself (the run's id, `nextAt`) does not move.
   */
  jitterSeconds?: number;
  /** Who made it and changed it, when, what and why: the last `SCHEDULE_HISTORY_KEPT`, oldest first. */
  history?: ScheduleChange[];
}

/** One operator's change of a schedule: `created`, `paused`, `cron 0 3 * * * → 0 4 * * *; overlap skip → allow`. */
export interface ScheduleChange {
  at: number;
  by: string;
  what: string;
  reason?: string;
}

/** How many changes a schedule keeps. */
export const SCHEDULE_HISTORY_KEPT = 20;

/** What firing writes to a schedule: its next time, and what the fire did. */
export type ScheduleAdvance = Pick<ScheduleRecord, "nextAt" | "lastFiredAt" | "lastRunId" | "lastSkip">;
