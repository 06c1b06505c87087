import { ConflictError, NotFoundError, RunExistsError } from "../errors.js";
import { hexDigest } from "../ids.js";
import { TERMINAL_RUN_STATUSES, type RunRecord, type ScheduleRecord } from "../store/records.js";
import type { Store } from "../store/store.js";
import { startRun, type WorkflowVersion } from "./start.js";
import { latestVersion } from "./workflow-versions.js";

/** The tag every run a schedule starts has, with the schedule's id (`pitwall runs --tag schedule=nightly`). */
export const SCHEDULE_TAG = "schedule";
/** The tag a run started by a backfill has besides (`backfill=true`): its schedule's live times do not wait for it. */
export const BACKFILL_TAG = "backfill";

/**
 * The id of the run a schedule starts for a time (`nightly-20261202T030000Z`; a trigger's has its
 * milliseconds): the same in every worker, so that the workers that fire one time together start
 * one run (the others find it made).
 */
export function scheduleRunId(scheduleId: string, at: number): string {
  return `${scheduleId}-${new Date(at).toISOString().replace(/[-:]/g, "").replace(/\.000Z$/, "Z")}`;
}

/** When a schedule's time `at` fires: `at`, delayed by its jitter's share for that time (the same in every worker). */
export function fireInstant(schedule: Pick<ScheduleRecord, "id" | "jitterSeconds">, at: number): number {
  if (!schedule.jitterSeconds) return at;
  const share = Number.parseInt(hexDigest(`jitter:${schedule.id}:${at}`, 8), 16) / 2 ** 32;
  return at + Math.floor(share * schedule.jitterSeconds * 1000);
}

/** The version a schedule starts: its pinned one, else its workflow's latest stored one; NotFoundError when there is none. */
export async function scheduledVersion(store: Store, schedule: Pick<ScheduleRecord, "workflow" | "version">): Promise<WorkflowVersion> {
  const version = schedule.version ?? latestVersion(await store.listWorkflows(), schedule.workflow);
  const record = version === undefined ? undefined : await store.getWorkflow(version);
  if (!record || record.name !== schedule.workflow) {
    throw new NotFoundError(schedule.version ? `version ${schedule.version} of workflow` : "workflow", schedule.workflow);
  }
  return { definition: record.definition, version: record.version };
}

/**
 * A run the schedule started at a time of its own (or a trigger) that has not ended, if one (what
 * `overlap: "skip"` waits for). A backfill's runs are not waited for: times long past do not hold
 * back the times to come.
 */
export async function unfinishedRun(store: Store, schedule: ScheduleRecord): Promise<RunRecord | undefined> {
  const last = schedule.lastRunId === null ? undefined : await store.getRun(schedule.lastRunId);
  if (last && !TERMINAL_RUN_STATUSES.includes(last.status)) return last;
  let cursor: string | undefined;
  do {
    const page = await store.listRuns({ tags: { [SCHEDULE_TAG]: schedule.id }, status: ["queued", "running", "paused"], limit: 100, ...(cursor ? { cursor } : {}) });
    const live = page.runs.find((run) => run.tags?.[BACKFILL_TAG] === undefined);
    if (live) return live;
    cursor = page.nextCursor;
  } while (cursor);
  return undefined;
}

export interface Fired {
  runId: string;
  /** The run was there already: another worker (or this time's fire before a crash) started it. */
  existed: boolean;
}

/**
 * Starts the run of a schedule's time `at` (as `pitwall start --id` would, by the same path; a
 * trigger gives an id of its own, `runId`, as it is no time of the schedule's):
 * a run of that id made already is taken as started. Refusals are typed errors saying why no run
 * starts: ConflictError while a run it started has not ended (overlap `skip`, unless `force`),
 * NotFoundError for a workflow not stored, ValidationError for an input its version refuses.
 */
export async function fireSchedule(store: Store, schedule: ScheduleRecord, at: number, options: { actor: string; force?: boolean; runId?: string; backfill?: boolean }): Promise<Fired> {
  const runId = options.runId ?? scheduleRunId(schedule.id, at);
  const made = await store.getRun(runId);
  if (made) {
    // Made by this schedule (another worker, or this time's fire before a crash), or by someone else.
    if (made.tags?.[SCHEDULE_TAG] === schedule.id && made.workflow === schedule.workflow) return { runId, existed: true };
    throw new RunExistsError(made, false, `run ${runId} exists and was not started by schedule ${schedule.id} (a run of ${made.workflow}${made.tags?.[SCHEDULE_TAG] ? ` tagged schedule=${made.tags[SCHEDULE_TAG]}` : ""})`);
  }
  if (schedule.overlap === "skip" && !options.force) {
    const running = await unfinishedRun(store, schedule);
    // This time's own run, which another worker firing the same time made since it was looked for
    // above: not an overlap (skipped, the schedule would name no run for a time that ran one).
    if (running?.id === runId) return { runId, existed: true };
    if (running) throw new ConflictError(`run ${running.id} it started has not ended (${running.status}): overlap is skip`);
  }
  const workflow = await scheduledVersion(store, schedule);
  try {
    await startRun(store, workflow, schedule.input, {
      id: runId,
      actor: options.actor,
      tags: { ...schedule.tags, [SCHEDULE_TAG]: schedule.id, ...(options.backfill ? { [BACKFILL_TAG]: "true" } : {}) },
      schedule: { id: schedule.id, at, ...(options.backfill ? { backfill: true } : {}) },
    });
    return { runId, existed: false };
  } catch (error) {
    if (error instanceof RunExistsError && error.sameStart) return { runId, existed: true };
    throw error;
  }
}
