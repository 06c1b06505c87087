import { retryPolicySchema, type RetryPolicy, type RetryPolicyInput } from "../graph/definition.js";
import type { TaskRecord } from "../store/records.js";

const NO_RETRY = retryPolicySchema.parse({});

export function retryPolicyOf(policy: RetryPolicyInput | undefined): RetryPolicy {
  return policy ? retryPolicySchema.parse(policy) : NO_RETRY;
}

/** Errors that retrying cannot fix: the node's output was invalid in a way it will repeat. */
const NEVER_RETRIED = new Set(["WRITE_CONFLICT"]);

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

/** Whether the `failures`-th failure (1-based) of a task is retried, and after how long. */
export function retryDecision(
  policy: RetryPolicy,
  failures: number,
  error: { name?: string; code?: string },
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
  return { retry: true, delayMs: Math.max(0, Math.round(base + jitter)) };
}
