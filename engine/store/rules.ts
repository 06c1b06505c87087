import { createHash } from "node:crypto";
import { ConflictError, NotFoundError, StaleFenceError } from "../errors.js";
import { spanIdOf, traceIdOf } from "../ids.js";
import { TERMINAL_RUN_STATUSES, type ArtifactRef, type CommandRecord, type InterruptRecord, type NewEvent, type RunRecord, type RunStatus, type StoreRoom, type WorkerRecord } from "./records.js";
import type { ClaimOptions, Commit } from "./store.js";

/**
 * The preconditions of a commit, in one place for every store that checks them in its own
 * process (memory, SQLite). Redis checks the same rules inside its Lua script.
 */
export function checkCommit(
  run: RunRecord,
  commit: Commit,
  stored: {
    interrupt(id: string): Pick<InterruptRecord, "status" | "resolution"> | undefined;
    command(id: string): Pick<CommandRecord, "status"> | undefined;
  },
): "apply" | "duplicate" {
  if (run.lastCommit === commit.id) return "duplicate";
  checkOwnRecords(commit);
  if (run.fence !== commit.fence) throw new StaleFenceError(run.id, commit.fence, run.fence);
  if (commit.expectHead !== undefined && run.head !== commit.expectHead) throw headMoved(run.id, run.head, commit.expectHead);
  if (commit.expectStatus && !commit.expectStatus.includes(run.status)) throw unexpectedStatus(run.id, run.status, commit.expectStatus);
  for (const id of commit.expectPending ?? []) {
    const interrupt = stored.interrupt(id);
    if (!interrupt) throw missingInterrupt(id);
    if (interrupt.status !== "pending") throw alreadyResolved(id, interrupt.resolution);
  }
  if (commit.checkpoint && commit.checkpoint.n !== run.headN + 1) throw checkpointGap(run.id, commit.checkpoint.n, run.headN);
  for (const { id } of commit.commands ?? []) {
    if (commit.submit?.some((c) => c.id === id)) continue;
    const command = stored.command(id);
    if (!command) throw new NotFoundError("command", id);
    if (command.status !== "pending") throw alreadyAnswered(id, command.status);
  }
  return "apply";
}

/**
 * Every record a commit writes belongs to its run: a store keeps a run's records together (SQLite
 * packs them into the rows of the run's events) and deletes them with it.
 */
export function checkOwnRecords(commit: Commit): void {
  const records = [commit.checkpoint, ...(commit.tasks ?? []), ...(commit.interrupts ?? []), ...(commit.events ?? [])];
  const stray = records.find((r) => r !== undefined && r.runId !== commit.runId);
  if (stray) throw new Error(`a record of run ${stray.runId} was committed with run ${commit.runId}`);
}

/**
 * Whether a run may be deleted, with the runs below it (`tree`: the run itself, its child runs,
 * theirs...), the rule every store applies: only a top-level run, and only once every run of its
 * tree has ended, so that nothing is executing, waiting or about to read what goes.
 */
export function checkDeletion(run: Pick<RunRecord, "id" | "parentRunId">, tree: readonly Pick<RunRecord, "id" | "status">[]): void {
  if (run.parentRunId !== null) {
    throw new ConflictError(`run ${run.id} is a child run of ${run.parentRunId}: delete run ${run.parentRunId}, which deletes its child runs with it`);
  }
  const live = tree.find((r) => !TERMINAL_RUN_STATUSES.includes(r.status));
  if (live) {
    const whose = live.id === run.id ? `run ${run.id} is ${live.status}` : `run ${run.id} has a child run ${live.id} that is ${live.status}`;
    throw new ConflictError(`${whose}: only runs that have ended can be deleted`);
  }
}

// The refusals of checkCommit, shared with stores that check the rules elsewhere (Redis, in Lua).

export function headMoved(runId: string, head: string | null, expected: string | null): ConflictError {
  return new ConflictError(`run ${runId} has moved on (its head is ${head}, not ${expected}); read it again`);
}

export function unexpectedStatus(runId: string, status: RunStatus, expected: readonly RunStatus[]): ConflictError {
  return new ConflictError(`run ${runId} is ${status}, not ${expected.join(" or ")}`);
}

export function missingInterrupt(id: string): ConflictError {
  return new ConflictError(`interrupt ${id} does not exist`);
}

export function checkpointGap(runId: string, n: number, headN: number): ConflictError {
  // Behind the writer, whose lease and fence still hold: the store forgot commits it acknowledged.
  const lost = n > headN + 1 ? `: the store has lost this run's checkpoints ${headN + 1} to ${n - 1}, which it had acknowledged (restarted from an older snapshot, or restored from a backup)` : "";
  return new ConflictError(`checkpoint ${n} of run ${runId} does not follow its head ${headN}${lost}`);
}

export function alreadyResolved(id: string, resolution: InterruptRecord["resolution"]): ConflictError {
  const by = resolution ? ` by ${resolution.actor} at ${new Date(resolution.at).toISOString()} (${resolution.decision})` : "";
  return new ConflictError(`interrupt ${id} was already resolved${by}`);
}

export function alreadyAnswered(id: string, status: CommandRecord["status"]): ConflictError {
  return new ConflictError(`command ${id} was already ${status}`);
}

/**
 * What a run that one of its child runs woke (`Commit.wake`: the child ended) becomes: claimable
 * now, whatever it was parked on — that child, another one, or a timer of a parallel branch — so
 * that its worker looks again at once (a failed or canceled child pauses it without waiting for
 * the sibling's timer) and parks it again on what still holds it. Undefined: not parked.
 */
export function wokenRun(waiting: Pick<RunRecord, "status">, now: number): Pick<RunRecord, "waitingOn" | "wakeAt" | "updatedAt"> | undefined {
  return waiting.status === "queued" ? { waitingOn: null, wakeAt: null, updatedAt: now } : undefined;
}

/**
 * Whether a worker may claim this run now. `runningOf` counts the running runs of a workflow name
 * (every version), asked only of one with a limit in `options.runsAtOnce`.
 */
export function claimable(
  run: Pick<RunRecord, "id" | "workflow" | "version" | "status" | "leaseUntil" | "wakeAt" | "waitingOn">,
  now: number,
  options: Pick<ClaimOptions, "versions" | "runId" | "exclude" | "takeOver" | "runsAtOnce">,
  statusOf: (runId: string) => RunStatus | undefined,
  runningOf: (workflow: string) => number,
): boolean {
  // The status first: it rules out most runs of a store (those ended), and costs least to look at.
  if (run.status !== "queued" && run.status !== "running") return false;
  if (options.runId !== undefined && run.id !== options.runId) return false;
  if (options.exclude?.includes(run.id)) return false;
  if (options.versions && !options.versions.includes(run.version)) return false;
  if (run.status === "running") return options.takeOver !== false && leaseRanOut(run, now);
  if (run.status !== "queued") return false;
  if (run.wakeAt !== null && run.wakeAt > now) return false;
  if (run.waitingOn !== null) {
    const child = statusOf(run.waitingOn);
    if (child !== undefined && !TERMINAL_RUN_STATUSES.includes(child)) return false;
  }
  const limit = runsAtOnceLimit(run.workflow, options.runsAtOnce);
  return limit === undefined || runningOf(run.workflow) < limit;
}

/** How many runs of a workflow a claim's `runsAtOnce` lets run at once; undefined: no limit. */
export function runsAtOnceLimit(workflow: string, runsAtOnce: ClaimOptions["runsAtOnce"]): number | undefined {
  return runsAtOnce !== undefined && Object.hasOwn(runsAtOnce, workflow) ? runsAtOnce[workflow] : undefined;
}

/** Whether a run is on a version that starts with any of `prefixes` (undefined: any version will do). */
export function onVersion(run: Pick<RunRecord, "version">, prefixes: readonly string[] | undefined): boolean {
  return prefixes === undefined || prefixes.some((prefix) => run.version.startsWith(prefix));
}

/**
 * A running run whose lease ran out: its worker is gone or stalled, and any worker may take it
 * over (`claimable`). The console and the CLI say so.
 */
export function leaseRanOut(run: Pick<RunRecord, "status" | "leaseUntil">, now: number): boolean {
  return run.status === "running" && run.leaseUntil !== null && run.leaseUntil < now;
}

/** Fairness: the run that has waited longest goes first (a sort order). */
export function claimOrder(a: Pick<RunRecord, "updatedAt" | "id">, b: Pick<RunRecord, "updatedAt" | "id">): number {
  return a.updatedAt - b.updatedAt || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0);
}

/**
 * The candidate to claim first: a take-over before any queued run (its worker is gone while the
 * run was under way); among queued runs the workflows take turns, so that a backlog of one does
 * not hold up the others — the first workflow by name after `lastWorkflow` (the one the store's
 * last claim took) that has a claimable run, wrapping around — and within a workflow the run
 * that has waited longest goes first (`claimOrder`).
 */
export function pickClaim<T extends Pick<RunRecord, "updatedAt" | "id" | "workflow" | "status">>(candidates: readonly T[], lastWorkflow?: string): T | undefined {
  let takeover: T | undefined;
  const oldestOf = new Map<string, T>();
  for (const run of candidates) {
    if (run.status === "running") {
      if (!takeover || claimOrder(run, takeover) < 0) takeover = run;
      continue;
    }
    const best = oldestOf.get(run.workflow);
    if (!best || claimOrder(run, best) < 0) oldestOf.set(run.workflow, run);
  }
  if (takeover) return takeover;
  const turn = nextWorkflow([...oldestOf.keys()], lastWorkflow);
  return turn === undefined ? undefined : oldestOf.get(turn);
}

/** The workflow whose turn it is among `names`: the first after `last` in name order, wrapping around. */
export function nextWorkflow(names: readonly string[], last: string | undefined): string | undefined {
  const sorted = [...names].sort();
  return sorted.find((name) => last === undefined || name > last) ?? sorted[0];
}

/**
 * Whether a commit is activity that moves the run's `updatedAt` (the console's and `runs`'s
 * order): anything on a run that has not ended, or a change to one that has (a retried failure);
 * not a command refused on an ended run, which would bring it back to the top of every list.
 */
export function movesUpdatedAt(statusBefore: RunStatus, commit: Pick<Commit, "run">): boolean {
  return !TERMINAL_RUN_STATUSES.includes(statusBefore) || (commit.run !== undefined && Object.keys(commit.run).length > 0);
}

/** What a claim changes in a run: the new owner, lease and fence; a take-over counts as a recovery. */
export function claimPatch(run: RunRecord, owner: string, leaseMs: number, fence: number, now: number): Partial<RunRecord> {
  const recovered = run.status === "running";
  return {
    status: "running",
    owner,
    leaseUntil: now + leaseMs,
    fence,
    wakeAt: null,
    startedAt: run.startedAt ?? now,
    recoveries: run.recoveries + (recovered ? 1 : 0),
    lostInARow: (run.lostInARow ?? 0) + (recovered ? 1 : 0),
    updatedAt: now,
  };
}

export function runClaimedEvent(run: RunRecord, owner: string, fence: number, recovered: boolean, now: number): NewEvent {
  return {
    runId: run.id,
    taskId: null,
    traceId: traceIdOf(run.id),
    spanId: spanIdOf(run.id, fence),
    type: "run.claimed",
    actor: `worker:${owner}`,
    payload: { worker: owner, fence, recovered },
    time: now,
  };
}

export function encodeCursor(run: Pick<RunRecord, "updatedAt" | "id">): string {
  return `${run.updatedAt}:${run.id}`;
}

export function decodeCursor(cursor: string): { updatedAt: number; id: string } {
  const i = cursor.indexOf(":");
  const updatedAt = Number(cursor.slice(0, i));
  if (i < 0 || !Number.isFinite(updatedAt)) throw new ConflictError(`bad cursor ${JSON.stringify(cursor)}`);
  return { updatedAt, id: cursor.slice(i + 1) };
}

export const MiB = 1024 * 1024;

/**
 * How a store's room reads, the same words for every store. The default thresholds are a file
 * system's: under 1 MiB a SQLite commit (a few pages to the WAL) is about to be refused; under
 * 256 MiB is a warning. A store whose limit is smaller or exact (Redis's maxmemory) gives its own.
 */
export function storeRoom(freeBytes: number, totalBytes: number, where: string, below: { full: number; low: number } = { full: MiB, low: 256 * MiB }): StoreRoom {
  const free = Math.max(0, freeBytes);
  return { freeBytes: free, totalBytes, where, state: free < below.full ? "full" : free < below.low ? "low" : "ok" };
}

/** A size for people: `512 B`, `488.3 kB`, `3.9 MB`, `19.6 GB` (powers of 1024). */
export function formatBytes(n: number): string {
  if (n < 1024) return `${n} B`;
  if (n < MiB) return `${(n / 1024).toFixed(1)} kB`;
  if (n < 1024 * MiB) return `${(n / MiB).toFixed(1)} MB`;
  return `${(n / 1024 / MiB).toFixed(1)} GB`;
}

/** An artifact's reference: it is addressed by the sha256 of its bytes, so that equal artifacts are kept once. */
export function artifactRef(data: Uint8Array, mediaType: string): ArtifactRef {
  return { sha256: createHash("sha256").update(data).digest("hex"), size: data.byteLength, mediaType };
}

/** How long a worker's record is kept after it was last seen, for `pitwall workers` to show it gone. */
export const WORKER_RECORDS_KEPT_MS = 24 * 60 * 60 * 1000;

/**
 * Whether a worker is running, from its record: it did not say it stopped, and it wrote its
 * heartbeat within its lease (and three heartbeats).
 */
export function workerLive(worker: Pick<WorkerRecord, "stoppedAt" | "lastSeen" | "leaseMs" | "heartbeatMs">, now: number): boolean {
  return worker.stoppedAt === null && now - worker.lastSeen <= Math.max(worker.leaseMs, 3 * worker.heartbeatMs);
}

/**
 * An error made by what was written, not by the store: a value JSON cannot write (a BigInt, a
 * cycle, one nested past the stack). It is the writer's to report; asking again cannot help.
 */
export function writersOwn(error: unknown): boolean {
  return error instanceof RangeError || (error instanceof TypeError && /serialize|circular structure/i.test(error.message));
}
