import type { InterruptKind, InterruptRequest, TaskWait } from "../store/records.js";
import type { DeadlineAsked } from "./deadlines.js";

/**
 * Thrown by `ctx.interrupt` to pause a node for a person. The executor catches it; a node that
 * catches it by mistake is still paused, because the context remembers that it was raised.
 */
export class InterruptSignal extends Error {
  constructor(
    readonly interruptId: string,
    readonly kind: InterruptKind,
    readonly request: InterruptRequest,
    /** The interrupt this one asks again: its answer was given on another state and no longer applies. */
    readonly asksAgain?: string,
    readonly deadline?: DeadlineAsked,
  ) {
    super(`node paused for interrupt ${interruptId}`);
    this.name = "InterruptSignal";
  }
}

/** Thrown by built-in nodes that wait for a time or for a child run, without holding a worker. */
export class ParkSignal extends Error {
  constructor(readonly wait: TaskWait) {
    super(wait.kind === "time" ? `waiting until ${new Date(wait.until).toISOString()}` : `waiting for ${wait.kind === "run" ? `run ${wait.runId}` : "an operator"}`);
    this.name = "ParkSignal";
  }
}

/** The reason a task's signal was aborted, so that the executor knows what the outcome is. */
export type AbortCause = "killed" | "canceled" | "timeout" | "lease-lost" | "shutdown";

export class TaskAbortedError extends Error {
  constructor(readonly abortCause: AbortCause, message = `task ${abortCause}`) {
    super(message);
    this.name = abortCause === "timeout" ? "TimeoutError" : "AbortError";
  }
}
