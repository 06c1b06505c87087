import { ConflictError, PitwallError, ValidationError } from "../errors.js";
import { newId } from "../ids.js";
import type { ScheduleCatchUp, ScheduleOverlap, ScheduleRecord } from "../store/records.js";
import type { Store } from "../store/store.js";
import { checkTags } from "../tags.js";
import { checkCron, checkTimezone, nextCronTime, shortestCronGap, zonedTime } from "./cron-times.js";
import { notFound } from "./must-get.js";
import { backfillSchedule, type BackfillOptions, type BackfillTime } from "./schedule-backfill.js";
import { BACKFILL_TAG, SCHEDULE_TAG, fireSchedule, scheduleRunId, scheduledVersion, type Fired } from "./schedule-fire.js";
import { checkStart, type WorkflowVersion } from "./start.js";
import { scheduleChangeText, withChange } from "./schedule-history.js";

/** What makes a schedule (`Schedules.create`); what `update` changes is the same, less the id. */
export interface ScheduleSpec {
  /** Letters, digits, '.', '_' and '-', at most 100 (the runs' ids add the time to it). */
  id: string;
  /** A stored workflow's name. */
  workflow: string;
  /** A version to start always; default (null): the workflow's latest stored version when it fires. */
  version?: string | null;
  cron: string;
  /** Default UTC. */
  timezone?: string;
  /** Each run's input, checked against the workflow now (and against the version that fires). */
  input?: Record<string, unknown>;
  /** Default `skip`. */
  overlap?: ScheduleOverlap;
  /** Default `one`. */
  catchUp?: ScheduleCatchUp;
  paused?: boolean;
  tags?: Record<string, string>;
  /** Each time fires up to this many seconds late, spread by the schedule and the time (default, or 0: on time). */
  jitterSeconds?: number;
}

const ID = /^[A-Za-z0-9._-]{1,100}$/;
/** A store change refused because a worker fired the schedule meanwhile is made again from a new read, this many times at most. */
const TRIES = 5;

/**
 * Schedules: runs of a workflow started at cron times by whichever worker watches the store
 * (worker/schedule-watch.ts), exactly once per time however many do. Every change is checked
 * before anything is written (a ValidationError naming the field), and made on the schedule as
 * last read: one that a worker fired meanwhile is read again.
 */
export class Schedules {
  constructor(
    private readonly store: Store,
    private readonly actor: string,
  ) {}

  async create(spec: ScheduleSpec): Promise<ScheduleRecord> {
    return this.store.putSchedule(await this.newRecord(spec), null);
  }

  private async newRecord(spec: ScheduleSpec): Promise<ScheduleRecord> {
    if (typeof spec.id !== "string" || !ID.test(spec.id)) throw new ValidationError(`schedule id ${JSON.stringify(spec.id)} may only use letters, digits, '.', '_' and '-' (at most 100)`);
    if (await this.store.getSchedule(spec.id)) throw new ConflictError(`schedule ${spec.id} already exists (remove it first, or update it)`);
    const now = await this.store.clock();
    const record: ScheduleRecord = {
      id: spec.id,
      workflow: spec.workflow,
      version: spec.version ?? null,
      cron: spec.cron,
      timezone: spec.timezone ?? "UTC",
      input: spec.input ?? {},
      overlap: spec.overlap ?? "skip",
      catchUp: spec.catchUp ?? "one",
      paused: spec.paused ?? false,
      nextAt: null,
      lastFiredAt: null,
      lastRunId: null,
      lastSkip: null,
      createdAt: now,
      updatedAt: now,
      updatedBy: this.actor,
      history: [{ at: now, by: this.actor, what: "created" }],
      revision: 0,
      ...(spec.tags && Object.keys(spec.tags).length > 0 ? { tags: spec.tags } : {}),
      ...(spec.jitterSeconds !== undefined ? { jitterSeconds: spec.jitterSeconds } : {}),
    };
    return this.checked(record, now);
  }

  /** Changes what `changes` gives (undefined: unchanged); a new cron or time zone moves its next time. */
  update(id: string, changes: Partial<Omit<ScheduleSpec, "id">>, options: { reason?: string } = {}): Promise<ScheduleRecord> {
    if ("id" in changes) throw new ValidationError("a schedule's id cannot change: make a new one");
    const given = Object.fromEntries(Object.entries(changes).filter(([, value]) => value !== undefined));
    return this.change(id, (s) => ({ ...s, ...given }), { check: true, reason: options.reason });
  }

  /** Fires no more until resumed (a worker firing it at this moment may still start that time's run). */
  pause(id: string, options: { reason?: string } = {}): Promise<ScheduleRecord> {
    return this.change(id, (s) => ({ ...s, paused: true }), { check: false, reason: options.reason });
  }

  /** Fires again from its next time after now: the times passed while it was paused are not caught up. */
  resume(id: string, options: { reason?: string } = {}): Promise<ScheduleRecord> {
    return this.change(id, (s) => ({ ...s, paused: false }), { check: true, retime: true, reason: options.reason });
  }

  async get(id: string): Promise<ScheduleRecord> {
    return (await this.store.getSchedule(id)) ?? notFound("schedule", id);
  }

  list(): Promise<ScheduleRecord[]> {
    return this.store.listSchedules();
  }

  /** Deletes the schedule; the runs it started are kept. */
  async delete(id: string): Promise<void> {
    if (!(await this.store.deleteSchedule(id))) notFound("schedule", id);
  }

  /**
   * Starts a run now, outside its cron times (its next time stays), with the same checks as a
   * fire — refused (ConflictError) while a run it started has not ended and its overlap is skip,
   * unless `force` — and records it as the schedule's last run.
   */
  async trigger(id: string, options: { force?: boolean } = {}): Promise<Fired> {
    const schedule = await this.get(id);
    const at = await this.store.clock();
    // Each trigger is a run of its own, however soon after another (two in one millisecond too).
    const runId = `${scheduleRunId(id, at)}-${newId("t", 4).slice(2)}`;
    const fired = await fireSchedule(this.store, schedule, at, { actor: this.actor, runId, ...(options.force ? { force: true } : {}) });
    await this.change(id, (s) => ({ ...s, lastFiredAt: at, lastRunId: fired.runId, lastSkip: null }));
    return fired;
  }

  /**
   * Starts the runs of the schedule's times from `from` to `to` (past times) that have none, as a
   * worker would have started them then (schedule-backfill.ts); `dryRun` only says which.
   */
  async backfill(id: string, options: BackfillOptions): Promise<BackfillTime[]> {
    return backfillSchedule(this.store, await this.get(id), options, this.actor);
  }

  /**
   * Reads, changes and writes the schedule, again from a new read while a worker's firing gets in
   * between. An operator's change (`check`) is checked, and moves its next time when it retimes it.
   */
  private async change(id: string, edit: (s: ScheduleRecord) => ScheduleRecord, operator: { check: boolean; retime?: boolean; reason?: string | undefined } | undefined = undefined): Promise<ScheduleRecord> {
    for (let tries = 1; ; tries++) {
      const read = await this.get(id);
      let record = edit(read);
      if (operator) {
        const now = await this.store.clock();
        const retimed = operator.retime === true || record.cron !== read.cron || record.timezone !== read.timezone;
        const { updateReason: _earlier, ...kept } = record;
        record = { ...kept, updatedAt: now, updatedBy: this.actor, ...(operator.reason ? { updateReason: operator.reason } : {}) };
        if (operator.check) record = await this.checked(record, retimed ? now : undefined);
        // Said of the schedule as checked: a version given by its first characters is the whole one by then.
        const what = scheduleChangeText(read, record);
        if (what) record = withChange(record, { at: now, by: this.actor, what, ...(operator.reason ? { reason: operator.reason } : {}) });
      }
      try {
        return await this.store.putSchedule(record, read.revision);
      } catch (error) {
        if (!(error instanceof ConflictError) || tries >= TRIES) throw error;
      }
    }
  }

  /**
   * Checks every field (a ValidationError naming the first one wrong) and, with `now`, sets its
   * next time after it.
   */
  private async checked(record: ScheduleRecord, now?: number, given?: WorkflowVersion): Promise<ScheduleRecord> {
    if (record.version !== null && !given) record = { ...record, version: await this.fullVersion(record.workflow, record.version) };
    let workflow = given;
    if (!workflow) {
      if (typeof record.workflow !== "string" || record.workflow === "") throw new ValidationError("workflow: give the name of a stored workflow");
      try {
        workflow = await scheduledVersion(this.store, record);
      } catch (error) {
        if (!(error instanceof PitwallError) || error.code !== "NOT_FOUND") throw error;
        throw new ValidationError(`workflow ${record.workflow}: ${record.version ? `its version ${record.version} is not stored` : "no version of it is stored (pitwall start FILE stores one, or give the file)"}`);
      }
    }
    const { jitterSeconds: _given, ...fields } = record;
    const { jitterSeconds, ...kept } = checkScheduleFields(record, workflow);
    const checked: ScheduleRecord = { ...fields, ...kept, ...(jitterSeconds ? { jitterSeconds } : {}) };
    if (now === undefined) return checked;
    const nextAt = nextCronTime(checked.cron, checked.timezone, now);
    if (nextAt === null) throw new ValidationError(`cron ${JSON.stringify(checked.cron)} has no time after now in ${checked.timezone}`);
    return { ...checked, nextAt };
  }

  /** A stored version of the workflow named by its id or the start of it (as listings print it); a ValidationError naming what is wrong. */
  private async fullVersion(workflow: string, given: string): Promise<string> {
    if (typeof given !== "string" || given === "") throw new ValidationError(`version ${JSON.stringify(given)}: give a stored version of ${workflow} (or its first characters), or latest`);
    const versions = (await this.store.listWorkflows()).filter((w) => w.name === workflow).map((w) => w.version);
    if (versions.includes(given)) return given;
    const matching = versions.filter((v) => v.startsWith(given));
    if (matching.length === 1) return matching[0]!;
    if (matching.length > 1) throw new ValidationError(`version ${given} of workflow ${workflow} could be any of ${matching.map((v) => v.slice(0, 12)).join(", ")}: give more of it`);
    throw new ValidationError(`workflow ${workflow}: no stored version of it starts with ${given}${versions.length > 0 ? ` (stored: ${versions.map((v) => v.slice(0, 8)).join(", ")})` : ""}`);
  }
}

/**
 * The checks of a schedule's fields that need no store, against the workflow version it would
 * start (a ValidationError naming the first field wrong): what a command checks before it makes a
 * store. Returns the cron and time zone as they are kept.
 */
export function checkScheduleFields(
  record: Pick<ScheduleRecord, "id" | "cron" | "timezone" | "overlap" | "catchUp" | "paused" | "input"> & { tags?: Record<string, string> | undefined; jitterSeconds?: number | undefined },
  workflow: WorkflowVersion,
): { cron: string; timezone: string; jitterSeconds?: number } {
  const cron = checkCron(record.cron);
  const timezone = checkTimezone(record.timezone);
  if (record.overlap !== "skip" && record.overlap !== "allow") throw new ValidationError(`overlap ${JSON.stringify(record.overlap)}: give skip (the default: no run while the last has not ended) or allow`);
  if (record.catchUp !== "one" && record.catchUp !== "none") throw new ValidationError(`catch-up ${JSON.stringify(record.catchUp)}: give one (the default: one run for the times missed) or none`);
  if (typeof record.paused !== "boolean") throw new ValidationError(`paused ${JSON.stringify(record.paused)}: give true or false`);
  if (record.tags !== undefined) {
    if (Object.hasOwn(record.tags, SCHEDULE_TAG)) throw new ValidationError(`tag ${SCHEDULE_TAG} is the schedule's id on every run it starts: give another tag name`);
    if (Object.hasOwn(record.tags, BACKFILL_TAG)) throw new ValidationError(`tag ${BACKFILL_TAG} marks the runs a backfill starts: give another tag name`);
    checkTags({ ...record.tags, [SCHEDULE_TAG]: record.id });
  }
  checkStart(workflow, record.input, {});
  if (nextCronTime(cron, timezone, Date.now()) === null) throw new ValidationError(`cron ${JSON.stringify(cron)} has no time after now in ${timezone}`);
  if (record.jitterSeconds === undefined || record.jitterSeconds === 0) return { cron, timezone };
  return { cron, timezone, jitterSeconds: checkJitter(record.jitterSeconds, cron, timezone) };
}

/**
 * A jitter must be shorter than the time between two of the schedule's times on the wall clock
 * (the shortest of its next hundred): a time fired that late would pass the next one by. The hour
 * the clocks skip is left out: a time it pushes past the next is caught up (schedule-watch.ts).
 */
function checkJitter(seconds: unknown, cron: string, timezone: string): number {
  if (typeof seconds !== "number" || !Number.isFinite(seconds) || seconds < 0) throw new ValidationError(`jitter ${JSON.stringify(seconds)}: give a length of time of 0 or more`);
  const gap = shortestCronGap(cron);
  if (gap && seconds * 1000 >= gap.ms) {
    throw new ValidationError(`jitter of ${seconds} s is not shorter than the ${gap.ms / 1000} s between its times ${zonedTime(gap.from, "UTC")} and ${zonedTime(gap.to, "UTC")} (${timezone}): a time fired that late would pass the next one by`);
  }
  return seconds;
}
