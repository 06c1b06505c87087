import { ValidationError } from "../errors.js";
import { checkValue } from "../state/limits.js";
import { jsonBytes } from "../state/snapshot.js";
import type { SignalRecord, TaskRecord } from "../store/records.js";
import type { RunState } from "./run-state.js";

const SIGNAL_NAME = /^[A-Za-z0-9_.:-]{1,128}$/;

/** Refuses a signal name that is not letters, digits, '.', '_', ':' and '-' (at most 128): the same for sender and receiver. */
export function checkSignalName(name: unknown): asserts name is string {
  if (typeof name !== "string" || !SIGNAL_NAME.test(name)) {
    throw new ValidationError(`signal name ${JSON.stringify(name)} may only use letters, digits, '.', '_', ':' and '-' (at most 128)`);
  }
}

/**
 * A signal's data, at most, as JSON: it is kept in its run's record (rewritten with every signal
 * sent or taken) and in its event; a large value belongs in an artifact, the signal naming it.
 */
export const MAX_SIGNAL_BYTES = 64 * 1024;

/** Refuses signal data that JSON would not keep as it is (as state values), or larger than `MAX_SIGNAL_BYTES` (ValidationError saying why). */
export function checkSignalData(data: unknown): void {
  if (data === undefined) return;
  checkValue(data, "the signal's data");
  const bytes = jsonBytes(data);
  if (bytes > MAX_SIGNAL_BYTES) {
    throw new ValidationError(`signal data is ${bytes} bytes as JSON, more than ${MAX_SIGNAL_BYTES}: store a large value as an artifact and send what names it`);
  }
}

/**
 * The signals the running attempts of a run's tasks have taken from its inbox and not yet
 * committed, by task, by the call that took each: the run's inbox, less these, is what is left
 * for the others. A task's outcome moves them onto its record (`settleReceived`).
 */
export class SignalsTaken {
  private readonly byTask = new Map<string, Map<string, SignalRecord>>();

  /**
   * The signal `key` (`name#k`: the k-th receive of `name` in the node) of `task` is, or takes for
   * it the oldest of its name left in `inbox`: undefined when there is none yet.
   */
  take(task: TaskRecord, key: string, name: string, inbox: readonly SignalRecord[]): SignalRecord | undefined {
    const recorded = task.received?.[key] ?? this.byTask.get(task.id)?.get(key);
    if (recorded) return recorded;
    const held = new Set([...this.byTask.values()].flatMap((m) => [...m.values()].map((s) => s.id)));
    const signal = inbox.find((s) => s.name === name && !held.has(s.id));
    if (!signal) return undefined;
    const mine = this.byTask.get(task.id) ?? new Map<string, SignalRecord>();
    mine.set(key, signal);
    this.byTask.set(task.id, mine);
    return signal;
  }

  /** Records for `task` that its receive `key` gave up at `at`, none having come: a node that runs again is told the same. */
  timeOut(task: TaskRecord, key: string, name: string, at: number): void {
    const mine = this.byTask.get(task.id) ?? new Map<string, SignalRecord>();
    mine.set(key, { id: `timeout:${task.id}:${key}`, name, actor: "timeout", sentAt: at, timedOut: true });
    this.byTask.set(task.id, mine);
  }

  /** Whether the inbox holds a signal of `name` that no attempt has taken. */
  waiting(name: string, inbox: readonly SignalRecord[]): boolean {
    const held = new Set([...this.byTask.values()].flatMap((m) => [...m.values()].map((s) => s.id)));
    return inbox.some((s) => s.name === name && !held.has(s.id));
  }

  /** What `task`'s attempt took, forgotten here: it goes on the task's record. */
  release(taskId: string): Map<string, SignalRecord> | undefined {
    const mine = this.byTask.get(taskId);
    this.byTask.delete(taskId);
    return mine;
  }
}

/**
 * As an attempt ends (whatever its outcome), the signals it took go on its task's record, so that
 * the node gets the same when it runs again, and leave the run's inbox — in the same commit.
 */
export function settleReceived(rs: RunState, task: TaskRecord): TaskRecord {
  const taken = rs.signals.release(task.id);
  if (!taken || taken.size === 0) return task;
  const ids = new Set([...taken.values()].map((s) => s.id));
  // The run in memory leaves them at once: no other attempt may take them before the commit.
  const inbox = (rs.run.inbox ?? []).filter((s) => !ids.has(s.id));
  rs.batch.patchRun({ inbox });
  rs.run = { ...rs.run, inbox };
  return { ...task, received: { ...task.received, ...Object.fromEntries(taken) } };
}
