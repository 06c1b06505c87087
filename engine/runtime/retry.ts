import { errorCodeOf } from "../errors.js";
import { definitionSchemas, type RetryPolicy, type RetryPolicyInput, type WorkflowDefinition } from "../graph/definition.js";
import type { TaskRecord } from "../store/records.js";
import { lazily } from "../zod.js";

const noRetry = lazily(() => definitionSchemas().retryPolicySchema.parse({}));

export function retryPolicyOf(policy: RetryPolicyInput | undefined): RetryPolicy {
  return policy ? definitionSchemas().retryPolicySchema.parse(policy) : noRetry();
}

/**
 * The code of an attempt whose step this process could not save (an error of its own, not the
 * store's): running it again would repeat its side effects to meet the same error.
 */
export const NOT_SAVED = "NOT_SAVED";

/** Errors that retrying cannot fix: the node's output was invalid in a way it will repeat, or its step could not be saved. */
const NEVER_RETRIED = new Set(["WRITE_CONFLICT", NOT_SAVED]);

/** The code of an attempt that its worker was lost during (it died, or stalled past its lease). */
export const WORKER_LOST = "WORKER_LOST";

/** The code of an attempt (or a durable call in it) that ran out of its time. */
export const TIMED_OUT = "TIMEOUT";

/**
 * How many of a task's attempts count against its retry policy: the failed ones since an
 * operator last retried it. Attempts that paused for a person, parked on a timer or were
 * stopped by a shutdown are not failures, nor are those lost with their worker: that was not
 * the node failing (a run that keeps losing workers is paused as poison instead).
 */
export function failuresCounted(task: Pick<TaskRecord, "attempts" | "retriesFrom">): number {
  return task.attempts.slice(task.retriesFrom).filter((a) => a.outcome === "failed" && a.code !== WORKER_LOST).length;
}

/**
 * The number of a task's last attempt that failed by itself (0 when none). What the node's
 * attempts recorded up to it — durable calls, the states its questions were asked on — is not
 * built on by the attempts after it: they ask again. Attempts that paused, were stopped, or lost
 * their worker are not failures, so what they recorded carries on.
 */
export function lastFailedAttempt(task: Pick<TaskRecord, "attempts">): number {
  const failed = task.attempts.findLast((a) => a.outcome === "failed" && a.code !== WORKER_LOST);
  return failed?.n ?? 0;
}

/** What a retry decision reads of an error. */
export interface Failure {
  name?: string;
  code?: string;
  /** How long the failing side asked to be left alone (a model server's Retry-After). */
  retryAfterMs?: number;
}

/**
 * An error as a retry decision sees it: its name, its code (`code` when the caller knows it
 * better, as a timeout), and a `retryAfterMs` it carries — a model error does when the server
 * said Retry-After, and any error a node throws may.
 */
export function failureOf(error: Error, code: string | undefined = errorCodeOf(error)): Failure {
  const after = (error as { retryAfterMs?: unknown }).retryAfterMs;
  return {
    name: error.name,
    ...(code ? { code } : {}),
    ...(typeof after === "number" && Number.isFinite(after) && after > 0 ? { retryAfterMs: Math.ceil(after) } : {}),
  };
}

/**
 * Whether the `failures`-th failure (1-based) of a task is retried, and after how long: the
 * policy's backoff, or longer when the error asks for it (Temporal's next retry delay).
 */
export function retryDecision(
  policy: RetryPolicy,
  failures: number,
  error: Failure,
  random: () => number = Math.random,
): { retry: false } | { retry: true; delayMs: number } {
  if (failures >= policy.maxAttempts) return { retry: false };
  if (error.code && NEVER_RETRIED.has(error.code)) return { retry: false };
  if (policy.retryOn && policy.retryOn.length > 0) {
    const matches = policy.retryOn.some((r) => r === error.name || r === error.code);
    if (!matches) return { retry: false };
  }
  const base = Math.min(policy.maxBackoffMs, policy.backoffMs * policy.factor ** (failures - 1));
  const jitter = base * policy.jitter * (random() * 2 - 1);
  return { retry: true, delayMs: Math.max(0, Math.round(base + jitter), error.retryAfterMs ?? 0) };
}

/** A task waiting out the backoff before its next attempt, as listings show it. */
export interface RetryWait {
  node: string;
  /** When it may run again. */
  at: number;
  /** The attempt it will be, counted as its retry policy counts them (an operator's retry starts again at 1)... */
  attempt: number;
  /** ...of how many the policy allows (unknown without the workflow's definition). */
  maxAttempts?: number;
  /** Why the last attempt failed. */
  error?: string;
}

/**
 * The retry a run waits for: of its tasks, the one due soonest that failed and waits out its
 * backoff (`notBefore`, set only for a retry; a wait node's timer parks its task instead).
 * Undefined when no task does. Durable calls retry inside their node's attempt and are left out.
 */
export function nextRetry(tasks: readonly TaskRecord[], definition?: Pick<WorkflowDefinition, "nodes">, now = Date.now()): RetryWait | undefined {
  const waiting = tasks.filter((t) => t.parent === null && t.status === "pending" && t.notBefore !== null && t.notBefore > now);
  const task = waiting.sort((a, b) => a.notBefore! - b.notBefore!)[0];
  if (!task) return undefined;
  const node = definition?.nodes[task.node];
  const error = task.attempts.at(-1)?.error;
  return {
    node: task.node,
    at: task.notBefore!,
    attempt: failuresCounted(task) + 1,
    ...(node ? { maxAttempts: retryPolicyOf(node.retry).maxAttempts } : {}),
    ...(error !== undefined ? { error } : {}),
  };
}
