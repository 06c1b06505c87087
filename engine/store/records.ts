import type { WorkflowDefinition } from "../graph/definition.js";
import type { ChannelOp } from "../state/ops.js";
import type { Snapshot } from "../state/snapshot.js";
import type { JsonSchema } from "../state/schema.js";
import type { EventPayloads, EventType } from "../runtime/events.js";

export type RunStatus = "queued" | "running" | "paused" | "succeeded" | "failed" | "canceled";
export const RUN_STATUSES: readonly RunStatus[] = ["queued", "running", "paused", "succeeded", "failed", "canceled"];
export const TERMINAL_RUN_STATUSES: readonly RunStatus[] = ["succeeded", "failed", "canceled"];

/** Why a paused run waits: always said, never guessed. */
export type PauseReason = "interrupt" | "breakpoint" | "killed" | "retries-exhausted" | "poison" | "signal";

export type TaskStatus = "pending" | "running" | "succeeded" | "failed" | "interrupted" | "canceled";

export type CheckpointSource = "input" | "loop" | "update" | "fork";

export type InterruptKind = "before" | "after" | "node" | "approval" | "breakpoint" | "recovery";

export interface RunError {
  message: string;
  node?: string;
  /** Stable kind of failure: ROUTE_NO_MATCH, MAX_STEPS, WRITE_CONFLICT, TASK_FAILED, BAD_OUTPUT, ... */
  code: string;
}

export interface RunRecord {
  id: string;
  workflow: string;
  version: string;
  status: RunStatus;
  reason: PauseReason | null;
  /** Why it failed; or, paused as `retries-exhausted`, the failure it waits on (cleared when it goes on). */
  error: RunError | null;
  parentRunId: string | null;
  parentTaskId: string | null;
  forkOf: { runId: string; checkpointId: string } | null;
  createdAt: number;
  updatedAt: number;
  startedAt: number | null;
  endedAt: number | null;
  /** Latest checkpoint: its id and number in this run. */
  head: string | null;
  headN: number;
  /** The super-step of the head checkpoint. */
  step: number;
  /**
   * The step it began at: a fork's or a continuation's source checkpoint's (its steps count on
   * from there). Its step limit counts from it. Absent: 0.
   */
  firstStep?: number;
  owner: string | null;
  leaseUntil: number | null;
  fence: number;
  /** A queued run is not claimed before this time (durable timers, retry backoff). */
  wakeAt: number | null;
  /** A queued run waiting for a child run to end is not claimed until then. */
  waitingOn: string | null;
  /** When it paused, while it is paused (absent: not paused, or paused before this was kept). */
  pausedAt?: number | null;
  /** How long its pauses that ended lasted in all, in ms: waiting for a person is not running. */
  pausedMs?: number;
  breakpoints: string[];
  /** Signals sent to it that no node has taken yet, oldest first. Absent or null: none. */
  inbox?: SignalRecord[] | null;
  /**
   * When a run not ended by then is canceled (by a worker, as actor `timeout`): set as it is made,
   * from its start's `deadlineSeconds` or its workflow's `limits.deadlineSeconds`. Absent or null: none.
   */
  deadlineAt?: number | null;
  /** What its starter tagged it with (`start --tag ticket=123`), kept by its forks; absent: none. */
  tags?: Record<string, string>;
  /** Per-run overrides of the workflow's interrupt lists (null: the workflow's). */
  interruptBefore: string[] | null;
  interruptAfter: string[] | null;
  /** Nodes of the step in progress, for listings. */
  current: string[];
  pendingInterrupts: number;
  /** How many times the run was taken over after its owner stopped renewing its lease. */
  recoveries: number;
  /**
   * Take-overs since the run last made progress (committed a step) or an operator acted on it:
   * past the worker's `maxRecoveries` the run pauses as poison. Absent in runs stored before it.
   */
  lostInARow?: number;
  /** Number of the run's last event (events of a run are numbered 1, 2, 3... without gaps). */
  eventCount: number;
  /** Fan-in arrivals after the planning of the step in progress (see PlanControl.barriers). */
  barriers: Record<string, string[]>;
  /**
   * Id of the last commit applied, so that a commit retried after a lost reply is not applied twice.
   * Null while none was: only commits write tasks and interrupts, so such a run has neither.
   */
  lastCommit: string | null;
}

/** The fields of a run that a commit may change. */
export type RunPatch = Partial<
  Pick<
    RunRecord,
    | "status"
    | "reason"
    | "error"
    | "startedAt"
    | "endedAt"
    | "step"
    | "owner"
    | "leaseUntil"
    | "wakeAt"
    | "waitingOn"
    | "breakpoints"
    | "interruptBefore"
    | "interruptAfter"
    | "current"
    | "barriers"
    | "lostInARow"
    | "pausedAt"
    | "pausedMs"
    | "inbox"
    | "version"
  >
>;

/** What the next step's planning needs to remember from the steps before it. */
export interface PlanControl {
  /**
   * Nodes whose outgoing edges have not been followed yet, with the route key their result chose.
   * `asNode` marks an operator's write made as that node (`updateState` with `asNode`): the node
   * counts as having run, so the other finished nodes do not lead to it this time (LangGraph's
   * `as_node`), while its own edges are followed.
   */
  finished: { node: string; route?: string; asNode?: true; caught?: true }[];
  /** Fan-in nodes: the predecessors that have arrived since each last ran. */
  barriers: Record<string, string[]>;
  /** How many times each node has run, for loops. */
  visits: Record<string, number>;
}

export interface CheckpointRecord {
  id: string;
  runId: string;
  n: number;
  step: number;
  parentId: string | null;
  source: CheckpointSource;
  actor: string;
  /** Nodes whose writes this checkpoint holds. */
  nodes: string[];
  /** Nodes planned to run next, when known at commit time. */
  next: string[];
  control: PlanControl;
  delta: ChannelOp[];
  snapshot?: Snapshot;
  snapshotN: number;
  createdAt: number;
  /** Stored size of the delta and snapshot. */
  bytes: number;
}

/**
 * A checkpoint without its state, which may be large (the delta, and the whole state in a
 * snapshot): what lists of checkpoints show. `hasSnapshot` says whether it stores a snapshot.
 */
export type CheckpointSummary = Omit<CheckpointRecord, "delta" | "snapshot"> & { hasSnapshot: boolean };

/** What a run's record says of its head checkpoint, as every store and the executor set it. */
export function headFields(checkpoint: Pick<CheckpointRecord, "id" | "n" | "step">): Pick<RunRecord, "head" | "headN" | "step"> {
  return { head: checkpoint.id, headN: checkpoint.n, step: checkpoint.step };
}

export function summarizeCheckpoint({ delta: _delta, snapshot, ...rest }: CheckpointRecord): CheckpointSummary {
  return { ...rest, hasSnapshot: snapshot !== undefined };
}

export interface TaskError {
  message: string;
  name?: string;
  code?: string;
  stack?: string;
}

export interface AttemptRecord {
  n: number;
  worker: string;
  startedAt: number;
  endedAt: number | null;
  outcome: "succeeded" | "failed" | "interrupted" | "canceled" | null;
  error?: string;
  /** The failure's code (TIMEOUT, WORKER_LOST, CHILD_FAILED, BAD_OUTPUT...) when it has one. */
  code?: string;
}

export type TaskWait =
  | { kind: "interrupt"; interruptId: string }
  | { kind: "time"; until: number }
  | { kind: "run"; runId: string }
  /** `ctx.receive(name)`, a wait node's `signal`: a signal of that name sent to the run (`Operator.signal`), until `until` at most. */
  | { kind: "signal"; name: string; until?: number };

/**
 * A signal sent to a run (`Operator.signal`, `pitwall signal`): kept in the run's `inbox` until a
 * node takes it (`ctx.receive`), then on that node's task (`received`), the oldest of its name first.
 */
export interface SignalRecord {
  /** The id of the command that sent it. */
  id: string;
  name: string;
  data?: unknown;
  actor: string;
  sentAt: number;
  reason?: string;
  /**
   * A fork's: the run it was carried from, which it was sent to and whose nodes, up to the
   * checkpoint forked, had not taken it (`id`, sender and time are the original's).
   */
  carriedFrom?: string;
  /** On a task's `received` only: none came in the time its `receive` waited (`sentAt`: when it gave up). */
  timedOut?: true;
}

export interface TaskRecord {
  id: string;
  runId: string;
  step: number;
  node: string;
  /** Position in a dynamic fan-out (map); null for ordinary tasks. */
  index: number | null;
  /**
   * The item a mapped task works on; for a durable call, what it was called with, as its node
   * described it for people (a model's prompt, a tool's arguments; bounded, secrets hidden).
   */
  input?: unknown;
  status: TaskStatus;
  attempts: AttemptRecord[];
  /** The same for every attempt of this task: hand it to external systems to deduplicate side effects. */
  idempotencyKey: string;
  /**
   * The state writes of a succeeded task whose siblings were still running, so that a crash
   * does not lose them; null once the step's checkpoint holds them.
   */
  writes: [key: string, value: unknown][] | null;
  route: string | null;
  error: TaskError | null;
  worker: string | null;
  createdAt: number;
  startedAt: number | null;
  endedAt: number | null;
  /** Not retried before this time (backoff). */
  notBefore: number | null;
  /** Attempts before this index do not count against the retry policy (an operator retried). */
  retriesFrom: number;
  /** For a durable call made inside a node (`ctx.call`): the task that made it... */
  parent: string | null;
  /** ...and the call's key within that task. */
  call: string | null;
  /** A succeeded call's recorded result: returned instead of calling again... */
  output?: unknown;
  /**
   * ...to the attempts of its parent that build on the one it ran in (this number): not to
   * those after a failed attempt, which ask again. Absent on calls recorded before it existed.
   */
  parentAttempt?: number;
  /** A durable call's `dependsOn`, hashed (contentHash): its output is handed back only while they match. */
  dependsOn?: string;
  waitingFor: TaskWait | null;
  /**
   * A failed task its node's `catch` took: the step goes on without it pausing the run, to the
   * catch's targets, with the failure in `writes` when the catch names an output key.
   */
  caught?: true;
  /** The signals its node took (`ctx.receive`), by the call that took each (`name#k`): a node that runs again gets the same. */
  received?: Record<string, SignalRecord>;
}

export interface InterruptRequest {
  question?: string;
  /** Values shown to the operator, by state path or name. */
  show?: Record<string, unknown>;
  decisions: string[];
  /** JSON Schema the response must satisfy. */
  responseSchema?: JsonSchema;
  /** Anything else the node wants to show (proposed arguments, a diff...). */
  data?: unknown;
}

export interface InterruptResolution {
  decision: string;
  response?: unknown;
  actor: string;
  reason?: string;
  at: number;
  /** The checkpoint the resolution's state edit was written to, if it had one. */
  checkpointId?: string;
  /** Nobody answered by the interrupt's deadline: this is the decision its deadline gives (`InterruptRecord.deadline`). */
  timedOut?: true;
  /**
   * The run's head checkpoint (its number) once the answer was given, after its own state edit:
   * a node that runs again on another state (an operator's later edit, a retry with a patch)
   * and asks something else is asked again rather than handed this answer. Absent on answers
   * recorded before it existed, which stand as they are.
   */
  headN?: number;
}

export interface InterruptRecord {
  id: string;
  runId: string;
  taskId: string | null;
  node: string;
  step: number;
  kind: InterruptKind;
  request: InterruptRequest;
  status: "pending" | "resolved";
  resolution: InterruptResolution | null;
  createdAt: number;
  /**
   * The run's head checkpoint (its number) when the interrupt was raised: the state its request
   * was made from. Absent on interrupts raised before it was recorded.
   */
  headN?: number;
  /** The attempt of its task that asked (`ctx.interrupt`). Absent on others, and on interrupts raised before it was recorded. */
  attempt?: number;
  /** When nobody has answered by `at` (on the store's clock), a worker answers with this decision (`resolution.timedOut`). */
  deadline?: InterruptDeadline;
}

/** An interrupt's deadline: what it answers itself with, and when. */
export interface InterruptDeadline {
  at: number;
  decision: string;
  response?: unknown;
}

export type CommandType = "resolve" | "update" | "kill" | "retry" | "cancel" | "break" | "unbreak" | "fork" | "signal" | "upgrade";

export interface CommandRecord {
  id: string;
  runId: string;
  type: CommandType;
  args: Record<string, unknown>;
  actor: string;
  reason: string | null;
  createdAt: number;
  status: "pending" | "accepted" | "refused";
  /** What the command did (accepted) or why not (refused). */
  result: Record<string, unknown> | null;
  answeredAt: number | null;
  /**
   * The process that recorded it: another process answers the command in its place once that one
   * is gone and nobody else will (`answerAbandonedForks`, `answerLeftCommands`). Absent on commands
   * recorded by versions of pitwall that did not name it.
   */
  recorder?: { host: string; pid: number };
}

/** A command's answer, as a store writes it. */
export type CommandAnswer = Pick<CommandRecord, "id" | "status" | "result" | "answeredAt">;

/**
 * An event; `EventRecord` alone is the union of every type's, so that testing `type` narrows
 * `payload` (`if (e.type === "step.completed") e.payload.keys`).
 */
export type EventRecord<T extends EventType = EventType> = { [K in T]: EventOf<K> }[T];

interface EventOf<T extends EventType> {
  /** Store-wide, strictly increasing. */
  seq: number;
  runId: string;
  /** 1, 2, 3... within the run, without gaps. */
  runSeq: number;
  taskId: string | null;
  traceId: string;
  spanId: string | null;
  type: T;
  actor: string;
  payload: EventPayloads[T];
  time: number;
}

/** An event as the runtime hands it to a commit; the store numbers it. */
export type NewEvent<T extends EventType = EventType> = { [K in T]: Omit<EventOf<K>, "seq" | "runSeq"> }[T];

/**
 * An event as its store numbered it, its fields in one order whichever store holds it: scripts
 * compare `events --json` lines as text.
 */
export function numberedEvent(event: NewEvent, seq: number, runSeq: number): EventRecord {
  const { runId, taskId, traceId, spanId, type, actor, payload, time } = event;
  return { seq, runId, runSeq, taskId, traceId, spanId, type, actor, payload, time } as EventRecord;
}

export interface WorkflowRecord {
  version: string;
  name: string;
  definition: WorkflowDefinition;
  createdAt: number;
}

export interface ArtifactRef {
  sha256: string;
  size: number;
  mediaType: string;
}

export interface RunStorage {
  checkpoints: number;
  events: number;
  artifacts: number;
  total: number;
}

/** Room left for a store to grow (`Store.room`). */
export interface StoreRoom {
  /** Bytes the store may still take. */
  freeBytes: number;
  /** Bytes it may take at most, used and free. */
  totalBytes: number;
  /** What holds it, as words ("the file system of /srv/pitwall", "the memory limit (maxmemory) of Redis at ..."). */
  where: string;
  /**
   * `full`: writes fail, or are about to (a file system: under 1 MiB free; Redis: at maxmemory);
   * `low`: a file system under 256 MiB free; Redis under 5% of maxmemory, or 1 MiB, free.
   */
  state: "ok" | "low" | "full";
  /**
   * Redis only: the server's `maxmemory-policy` when it deletes keys to make room (allkeys-lru,
   * allkeys-lfu, allkeys-random), which would take runs' records with them. pitwall writes
   * nothing to such a server.
   */
  evicting?: string;
}

/**
 * A worker as it last said it was (its heartbeat): what `pitwall workers` lists, and what tells
 * an operator why a queued run waits (no live worker can run its version).
 */
export interface WorkerRecord {
  /** Its id (`worker:<id>` in events); unique among live workers. */
  id: string;
  /** Random per process: two processes started with the same id tell each other apart by it. */
  instance: string;
  host: string;
  pid: number;
  startedAt: number;
  /** When it last wrote this record (its clock; the Redis store's clock on Redis). */
  lastSeen: number;
  /** When it stopped cleanly; null while it runs (or if it died). */
  stoppedAt: number | null;
  /** How often it writes this record, and its lease: past both, without a word, it is gone. */
  heartbeatMs: number;
  leaseMs: number;
  concurrency: number;
  /** Runs it executes now. */
  running: number;
  /** The workflow versions it can run (its actions export every action they name), by name. */
  workflows: { name: string; version: string }[];
  /** The workflow names it is limited to (`pitwall worker --workflow`); null: every one. */
  only: string[] | null;
  actions: string[];
}

// Schedules' records have a file of their own; they are record types like the others here.
export type { ScheduleAdvance, ScheduleCatchUp, ScheduleChange, ScheduleOverlap, ScheduleRecord } from "./schedule-records.js";
