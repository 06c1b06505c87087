import { spanIdOf, traceIdOf } from "../ids.js";
import type { NewEvent, TaskRecord } from "../store/records.js";
import type { EventPayloads, EventType } from "./events.js";
import { redact } from "./redact.js";

/**
 * Builds a run's events: trace id per run, span id per task attempt, the actor, the time, and
 * payloads redacted of secret-looking keys before anything is stored.
 */
export class EventFactory {
  private readonly traceId: string;

  constructor(
    private readonly runId: string,
    private readonly actor: string,
    /** Names of secrets added to the default ones (see redact.ts). */
    private readonly secretKeys: readonly string[] = [],
  ) {
    this.traceId = traceIdOf(runId);
  }

  run<T extends EventType>(type: T, payload: EventPayloads[T], actor = this.actor): NewEvent {
    return this.make(type, payload, null, null, actor);
  }

  task<T extends EventType>(task: Pick<TaskRecord, "id" | "attempts">, type: T, payload: EventPayloads[T], actor = this.actor): NewEvent {
    return this.make(type, payload, task.id, this.spanId(task.id, task.attempts.length), actor);
  }

  /** Data a node supplied, for a record people read (a durable call's input): hidden as in events. */
  redact(value: unknown): unknown {
    return redact(value, this.secretKeys);
  }

  /** A task attempt emits several events; its span id is hashed once (kept by task id: no key to build). */
  private spanId(taskId: string, attempt: number): string {
    const known = this.spans.get(taskId);
    if (known?.attempt === attempt) return known.span;
    if (this.spans.size > 1024) this.spans.clear();
    const span = spanIdOf(taskId, attempt);
    this.spans.set(taskId, { attempt, span });
    return span;
  }

  private readonly spans = new Map<string, { attempt: number; span: string }>();

  private make(type: EventType, payload: unknown, taskId: string | null, spanId: string | null, actor: string): NewEvent {
    return {
      runId: this.runId,
      taskId,
      traceId: this.traceId,
      spanId,
      type,
      actor,
      payload: redactPayload(type, payload, this.secretKeys),
      time: Date.now(),
    } as NewEvent;
  }
}

/**
 * Only some events carry data a node or an operator supplied (log data, command arguments,
 * state diffs); the engine's own payloads hold no secrets and are stored as they are.
 */
function redactPayload(type: EventType, payload: unknown, secretKeys: readonly string[]): unknown {
  switch (type) {
    case "node.log":
    case "operator.requested":
    case "state.edited":
      return redact(payload, secretKeys);
    default:
      return payload;
  }
}

