import { ValidationError } from "../errors.js";
import type { InterruptDeadlineOptions } from "../graph/model.js";
import { checkJson } from "../state/schema.js";
import type { InterruptDeadline, InterruptRequest } from "../store/records.js";

/** Who acts on a deadline (an interrupt's answer, a run's cancel), as its command and its record say. */
export const DEADLINE_ACTOR = "timeout";

/** Beyond this a deadline is no longer a date (as a wait's `seconds`), and is surely a mistake. */
export const MAX_DEADLINE_SECONDS = 100 * 365 * 24 * 3600;

/** Refuses a run's `deadlineSeconds` that is not a time from now (ValidationError naming it). */
export function checkDeadlineSeconds(seconds: unknown): void {
  if (typeof seconds !== "number" || !Number.isFinite(seconds) || seconds <= 0 || seconds > MAX_DEADLINE_SECONDS) {
    throw new ValidationError(`deadlineSeconds must be a number above 0 and at most ${MAX_DEADLINE_SECONDS} (100 years), not ${JSON.stringify(seconds)}`);
  }
}

/** A deadline as a node asked for it: relative to when its interrupt is recorded. */
export interface DeadlineAsked {
  afterMs: number;
  decision: string;
  response?: unknown;
}

/**
 * Checks a `ctx.interrupt` deadline against its request as the node asks, so that a mistake fails
 * the node at once rather than a day later, when a worker would give a decision the request does
 * not allow. Throws an Error naming what is wrong.
 */
export function deadlineAsked(deadline: InterruptDeadlineOptions | undefined, request: InterruptRequest): DeadlineAsked | undefined {
  if (deadline === undefined) return undefined;
  const { seconds, decision, response } = deadline;
  if (typeof seconds !== "number" || !Number.isFinite(seconds) || seconds <= 0 || seconds > MAX_DEADLINE_SECONDS) {
    throw new Error(`interrupt deadline: seconds must be a number above 0 and at most ${MAX_DEADLINE_SECONDS} (100 years), not ${JSON.stringify(seconds)}`);
  }
  if (!request.decisions.includes(decision)) {
    throw new Error(`interrupt deadline: decision ${JSON.stringify(decision)} is not one of the request's decisions (${request.decisions.join(", ")})`);
  }
  if (decision === "edit") throw new Error('interrupt deadline: decision "edit" needs someone to edit; give another decision (e.g. "reject")');
  if (response === undefined && decision === "respond" && request.responseSchema) throw new Error('interrupt deadline: decision "respond" needs a response');
  if (response !== undefined && request.responseSchema) checkJson(request.responseSchema, response, "interrupt deadline's response");
  return { afterMs: Math.round(seconds * 1000), decision, ...(response !== undefined ? { response } : {}) };
}

/** The deadline an interrupt recorded at `now` (on the store's clock) keeps. */
export function deadlineFrom(asked: DeadlineAsked, now: number): InterruptDeadline {
  return { at: now + asked.afterMs, decision: asked.decision, ...(asked.response !== undefined ? { response: asked.response } : {}) };
}
