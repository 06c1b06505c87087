import { errorMessage } from "../errors.js";
import { asList, hasRoutes, type CatchSpec } from "../graph/definition.js";
import { derivedId } from "../ids.js";
import { describeValueProblem, valueProblem } from "../state/limits.js";
import type { State } from "../state/ops.js";
import type { TaskRecord } from "../store/records.js";
import type { AttemptOutcome } from "./attempt.js";
import type { CallsMade } from "./calls.js";
import { catchFailure } from "./catch.js";
import { deadlineFrom } from "./deadlines.js";
import { settleReceived } from "./signal-inbox.js";
import { TIMED_OUT, WORKER_LOST, failureOf, failuresCounted, retryDecision, retryPolicyOf } from "./retry.js";
import type { RunState } from "./run-state.js";
import { closeAttempt, transitionTask } from "./transitions.js";

/** Turns how an attempt ended into the task's transitions (and interrupts), into the batch. */
export function recordOutcome(rs: RunState, started: TaskRecord, outcome: AttemptOutcome): void {
  const task = settleReceived(rs, started);
  const now = Date.now();
  const attempt = task.attempts.length;
  switch (outcome.kind) {
    case "succeeded": {
      const problem = checkUpdate(rs, task, outcome.update);
      if (problem) return failTask(rs, task, new Error(problem), "BAD_OUTPUT", now);
      const writes = Object.entries(outcome.update);
      // Its attempts keep the errors of the ones before; the task's own error is its outcome's.
      const done = transitionTask(task, "succeeded", {
        writes,
        error: null,
        route: outcome.route ?? null,
        endedAt: now,
        attempts: closeAttempt(task, "succeeded", now),
      });
      rs.setTask(
        done,
        rs.events.task(done, "task.succeeded", {
          node: task.node,
          attempt,
          durationMs: now - (task.attempts[attempt - 1]?.startedAt ?? now),
          keys: writes.map(([k]) => k),
          ...(outcome.route !== undefined ? { route: outcome.route } : {}),
        }),
      );
      return;
    }
    case "failed":
      return failTask(rs, task, outcome.error, outcome.code, now);
    case "interrupted": {
      const { signal } = outcome;
      const interrupted = transitionTask(task, "interrupted", {
        attempts: closeAttempt(task, "interrupted", now),
        waitingFor: { kind: "interrupt", interruptId: signal.interruptId },
      });
      rs.setTask(interrupted, rs.events.task(interrupted, "task.interrupted", { node: task.node, waitingFor: interrupted.waitingFor! }));
      rs.addInterrupt({
        id: signal.interruptId,
        runId: rs.run.id,
        taskId: task.id,
        node: task.node,
        step: task.step,
        kind: signal.kind,
        request: signal.request,
        status: "pending",
        resolution: null,
        createdAt: now,
        attempt,
        ...(signal.deadline ? { deadline: deadlineFrom(signal.deadline, rs.clock.now()) } : {}),
      }, signal.asksAgain);
      return;
    }
    case "parked": {
      const parked = transitionTask(task, "interrupted", { attempts: closeAttempt(task, "interrupted", now), waitingFor: outcome.wait });
      rs.setTask(parked, rs.events.task(parked, "task.interrupted", { node: task.node, waitingFor: outcome.wait }));
      return;
    }
    case "canceled": {
      // An at-most-once task stopped part-way by its worker shutting down may have done some of
      // its work: an operator decides, as after a crash.
      if (outcome.cause === "shutdown" && rs.nodeDefinition(task.node)?.atMostOnce) {
        const attempts = closeAttempt(task, "interrupted", now, "worker shut down");
        askAboutAtMostOnce(rs, { ...task, attempts }, now, "its worker shut down while it ran");
        return;
      }
      const reason = outcome.cause === "killed" ? "killed by operator" : outcome.cause;
      const canceled = transitionTask(task, "canceled", { attempts: closeAttempt(task, "canceled", now, reason), endedAt: now });
      rs.setTask(canceled, rs.events.task(canceled, "task.canceled", { node: task.node, reason }));
      // A worker shutting down hands its tasks back for another worker to run.
      if (outcome.cause === "shutdown") {
        const again = transitionTask(canceled, "pending");
        rs.setTask(again, rs.events.task(again, "task.scheduled", { node: task.node, why: "queued" }));
      }
      return;
    }
  }
}

function checkUpdate(rs: RunState, task: TaskRecord, update: State): string | undefined {
  if ("route" in update && !("route" in rs.workflow.definition.state)) {
    const node = rs.nodeDefinition(task.node);
    if (node && !hasRoutes(node)) {
      return `node "${task.node}" returned a route, but it has no routes (it goes on to ${asList(node.next).join(", ") || "END"}); give it routes, or leave route out`;
    }
    // `{ route: "X", n: 7 }`, `{ route: true }`: a route meant, in a shape that is an update.
    return `node "${task.node}" returned a route in an update: to choose a route and write state, return { route: "KEY", update: { ... } } (route a string, nothing else beside them)`;
  }
  for (const [key, value] of Object.entries(update)) {
    const reducer = rs.workflow.reducerOf(key);
    const current = rs.chain.state[key];
    let problem: string | undefined;
    if (typeof reducer === "function") {
      // What a custom reducer makes of the write is what the state will hold: that is checked.
      try {
        const reduced = reducer(current, value);
        // A reducer that nests what it is given (`(all, x) => ({ all, x })`) deepens the key at every step.
        const tooDeep = valueProblem({ [key]: reduced });
        problem = tooDeep ? describeValueProblem(`the reducer of "${key}" made a value that`, tooDeep) : rs.workflow.validator.checkWrite(key, reduced, "replace", current);
      } catch (error) {
        problem = `the reducer of "${key}" threw: ${errorMessage(error)}`;
      }
    } else {
      problem = rs.workflow.validator.checkWrite(key, value, reducer, current);
    }
    if (problem) return `node "${task.node}" wrote an invalid update: ${problem}`;
  }
  return undefined;
}

/** A failed attempt: back to pending with a backoff when the policy retries it, else left failed. */
export function failTask(rs: RunState, task: TaskRecord, error: Error, code: string | undefined, now: number): void {
  const attempt = task.attempts.length;
  // Out of time, an at-most-once node may have done part of its work (its result, if one comes,
  // is discarded): as after a crash, an operator decides, whatever its retry policy says.
  if (code === TIMED_OUT && rs.nodeDefinition(task.node)?.atMostOnce) {
    const attempts = closeAttempt(task, "interrupted", now, error.message, code);
    askAboutAtMostOnce(rs, { ...task, attempts }, now, `its attempt ${attempt} ran out of time (${error.message})`);
    return;
  }
  const failed = transitionTask(task, "failed", {
    attempts: closeAttempt(task, "failed", now, error.message, code),
    error: { message: error.message, name: error.name, ...(code ? { code } : {}), ...(error.stack ? { stack: error.stack } : {}) },
    endedAt: now,
  });
  // A node whose worker was lost runs again at once (its side effects run at least once), whatever
  // its retry policy: the node did not fail.
  const failure = failureOf(error, code);
  const decision =
    code === WORKER_LOST
      ? { retry: true as const, delayMs: 0 }
      : retryDecision(retryPolicyOf(rs.nodeDefinition(task.node)?.retry), failuresCounted(failed), failure);
  // Given up on: the node's catch may take it, and the step goes on without it.
  const caught = decision.retry ? { caught: false as const } : catchFailure(rs, failed, { ...failure, message: error.message });
  const settled = caught.caught ? { ...failed, caught: true as const, writes: caught.writes } : failed;
  rs.setTask(
    settled,
    rs.events.task(settled, "task.failed", {
      node: task.node,
      ...(task.index !== null ? { index: task.index } : {}),
      attempt,
      error: error.message,
      ...(code ? { code } : {}),
      willRetry: decision.retry,
      ...(decision.retry ? { retryInMs: decision.delayMs } : {}),
      ...(caught.caught ? caughtPayload(rs.nodeDefinition(task.node)!.catch!) : caught.why ? { uncaught: caught.why } : {}),
    }),
  );
  if (decision.retry) {
    const retry = transitionTask(failed, "pending", { notBefore: rs.clock.now() + decision.delayMs, endedAt: null });
    rs.setTask(retry, rs.events.task(retry, "task.scheduled", { node: task.node, why: "retry", notBefore: retry.notBefore! }));
  }
}

/** An at-most-once task that may have done part of its work: interrupted for an operator to retry or skip. */
export function askAboutAtMostOnce(rs: RunState, task: TaskRecord, at: number, what: string, calls?: CallsMade): void {
  const interruptId = derivedId("int", task.id, "recovery", task.attempts.length);
  const interrupted = transitionTask(task, "interrupted", { waitingFor: { kind: "interrupt", interruptId } });
  rs.setTask(interrupted, rs.events.task(interrupted, "task.interrupted", { node: task.node, waitingFor: interrupted.waitingFor! }));
  rs.addInterrupt({
    id: interruptId,
    runId: rs.run.id,
    taskId: task.id,
    node: task.node,
    step: task.step,
    kind: "recovery",
    request: {
      question: `Node "${task.node}" runs at most once, and ${what}. It may have done part of its work.${unfinishedText(calls)} Run it again, or skip it?`,
      decisions: ["retry", "skip"],
      ...(calls && (calls.finished.length || calls.unfinished.length) ? { data: calls } : {}),
    },
    status: "pending",
    resolution: null,
    createdAt: at,
  });
}

/** The durable calls an at-most-once node's cut attempt left unfinished, and what a retry gets back. */
function unfinishedText(calls: CallsMade | undefined): string {
  if (!calls?.unfinished.length) return "";
  const many = calls.unfinished.length > 1;
  const kept = calls.finished.length ? `; it gets back what ${calls.finished.join(", ")} returned` : "";
  return ` Its call${many ? "s" : ""} ${calls.unfinished.map((c) => c.call).join(", ")} had not finished and may have taken effect: a retry makes ${many ? "them" : "it"} again${kept}.`;
}

/** Where a caught failure leads: the catch's targets, once the node's failed items are past what it tolerates, when it tolerates some. */
function caughtPayload(spec: CatchSpec): { caught: string[]; tolerate?: number | string } {
  return { caught: asList(spec.next), ...(spec.tolerate !== undefined ? { tolerate: spec.tolerate } : {}) };
}
