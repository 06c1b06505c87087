import { checkpointId } from "../ids.js";
import type { State } from "../state/ops.js";
import { DEFAULT_SNAPSHOT_POLICY, StateChain, jsonBytes } from "../state/snapshot.js";
import type { CheckpointRecord, CheckpointSource, PlanControl, RunRecord, SignalRecord } from "../store/records.js";
import type { NewRun } from "../store/store.js";
import { EventFactory } from "./event-factory.js";
import { START } from "./planner.js";
import type { DiffEntry } from "../state/diff.js";

export interface NewRunOptions {
  id: string;
  workflow: { name: string; version: string };
  state: State;
  actor: string;
  parentRunId?: string | null;
  parentTaskId?: string | null;
  forkOf?: { runId: string; checkpointId: string } | null;
  interruptBefore?: string[] | null;
  interruptAfter?: string[] | null;
  /** A fork starts from the source checkpoint's plan; a new run from the start node. */
  control?: PlanControl;
  step?: number;
  /** Names of secrets, added to the default ones, to redact from the first events. */
  secretKeys?: readonly string[];
  /** What the first step will run, when known (a fork: its source checkpoint's). */
  next?: string[];
  /** A fork started with a state edit: its diff, recorded in the fork's own log. */
  edited?: { diff: DiffEntry[]; truncated?: boolean };
  /** Why the operator forked, in the fork's own log. */
  reason?: string;
  /** What its starter tagged it with (checked). */
  tags?: Record<string, string>;
  /** Canceled unless it ended this long after it is made (checked: `checkDeadlineSeconds`). */
  deadlineSeconds?: number | undefined;
  /** The signal it is made to deliver (signal-with-start), said in its `run.created`. */
  signal?: { id: string; name: string };
  /** A start under an id of the caller's: the start's own id, said in its `run.created`, to tell it from another start of that id. */
  request?: string;
  /** The signals a fork carries from its source (`signalsToCarry`): its inbox to begin with, oldest first. */
  carriedSignals?: readonly SignalRecord[];
  /** The schedule that started it, and the time it was started for (in `run.created`). */
  schedule?: { id: string; at: number; backfill?: boolean };
}

/** A run, its first checkpoint (a full snapshot of its input or fork state) and first event. */
export function newRun(options: NewRunOptions): NewRun {
  const now = Date.now();
  const source: CheckpointSource = options.forkOf ? "fork" : "input";
  const { snapshot } = StateChain.start(DEFAULT_SNAPSHOT_POLICY, options.state);
  const control = options.control ?? { finished: [{ node: START }], barriers: {}, visits: {} };
  const checkpoint: CheckpointRecord = {
    id: checkpointId(options.id, 0),
    runId: options.id,
    n: 0,
    step: options.step ?? 0,
    parentId: options.forkOf?.checkpointId ?? null,
    source,
    actor: options.actor,
    nodes: [],
    next: options.next ?? [],
    control,
    delta: [],
    snapshot,
    snapshotN: 0,
    createdAt: now,
    bytes: jsonBytes(snapshot),
  };
  const run: RunRecord = {
    id: options.id,
    workflow: options.workflow.name,
    version: options.workflow.version,
    status: "queued",
    reason: null,
    error: null,
    parentRunId: options.parentRunId ?? null,
    parentTaskId: options.parentTaskId ?? null,
    forkOf: options.forkOf ?? null,
    createdAt: now,
    updatedAt: now,
    startedAt: null,
    endedAt: null,
    head: checkpoint.id,
    headN: 0,
    step: checkpoint.step,
    firstStep: checkpoint.step,
    owner: null,
    leaseUntil: null,
    fence: 0,
    wakeAt: null,
    waitingOn: null,
    breakpoints: [],
    ...(options.deadlineSeconds !== undefined ? { deadlineAt: now + Math.round(options.deadlineSeconds * 1000) } : {}),
    ...(options.tags && Object.keys(options.tags).length > 0 ? { tags: options.tags } : {}),
    ...(options.carriedSignals?.length ? { inbox: [...options.carriedSignals] } : {}),
    interruptBefore: options.interruptBefore ?? null,
    interruptAfter: options.interruptAfter ?? null,
    current: [],
    pendingInterrupts: 0,
    recoveries: 0,
    lostInARow: 0,
    eventCount: 0,
    barriers: {},
    lastCommit: null,
  };
  const events = new EventFactory(options.id, options.actor, options.secretKeys);
  return {
    run,
    checkpoint,
    events: [
      events.run("run.created", {
        workflow: run.workflow,
        version: run.version,
        ...(run.parentRunId ? { parentRunId: run.parentRunId } : {}),
        ...(run.forkOf ? { forkOf: run.forkOf } : {}),
        ...(options.reason ? { reason: options.reason } : {}),
        ...(typeof run.deadlineAt === "number" ? { deadlineAt: run.deadlineAt } : {}),
        ...(options.signal ? { signal: options.signal } : {}),
        ...(options.carriedSignals?.length ? { carriedSignals: options.carriedSignals.length } : {}),
        ...(options.request ? { request: options.request } : {}),
        ...(options.schedule ? { schedule: options.schedule.id, scheduledFor: options.schedule.at, ...(options.schedule.backfill ? { backfill: true } : {}) } : {}),
      }),
      ...(options.edited
        ? [events.run("state.edited", { checkpointId: checkpoint.id, diff: options.edited.diff, ...(options.edited.truncated ? { truncated: true } : {}) })]
        : []),
    ],
  };
}
