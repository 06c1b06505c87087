import type { EventPayloads } from "../runtime/events.js";
import { redact } from "../runtime/redact.js";
import type { EventRecord, TaskRecord, TaskStatus } from "../store/records.js";
import type { ChatMessage, ModelRequest, ModelResponse } from "./types.js";

/**
 * What the records of model and tool calls hold for people, written by the nodes that make the
 * calls and read back by `show` and the console: a model call's record keeps the messages it
 * sent and the answer; a tool call's, its arguments and result.
 */

/** A message of a model call as its record keeps it. */
export interface RecordedMessage {
  role: ChatMessage["role"];
  content: string | null;
  /** An assistant message's tool calls: names and arguments (JSON text). */
  toolCalls?: { name: string; arguments: string }[];
  /** A tool message: the call it answers. */
  toolCallId?: string;
}

/** What a model call's record keeps of its request. */
export interface ModelCallInput {
  kind: "model";
  /** The model asked for (absent: the provider's default). */
  model?: string;
  /**
   * The messages new in this request: those after the model's last answer — the system message
   * and prompt of a first request, the tool results of an agent's later turn.
   */
  messages: RecordedMessage[];
  /** How many messages before them were sent as well (the conversation so far). */
  earlier: number;
  /** The tools offered, by name. */
  tools?: string[];
}

export interface ToolCallInput {
  kind: "tool";
  tool: string;
  arguments: unknown;
}

/** The record's input for a model call made with `request`. */
export function modelCallInput(request: ModelRequest): ModelCallInput {
  const lastAnswer = request.messages.findLastIndex((m) => m.role === "assistant");
  return {
    kind: "model",
    ...(request.model !== undefined ? { model: request.model } : {}),
    messages: request.messages.slice(lastAnswer + 1).map(recorded),
    earlier: lastAnswer + 1,
    ...(request.tools?.length ? { tools: request.tools.map((t) => t.name) } : {}),
  };
}

export function toolCallInput(tool: string, args: unknown): ToolCallInput {
  return { kind: "tool", tool, arguments: args };
}

function recorded(message: ChatMessage): RecordedMessage {
  switch (message.role) {
    case "assistant":
      return { role: "assistant", content: message.content, ...(message.toolCalls?.length ? { toolCalls: message.toolCalls.map(({ name, arguments: a }) => ({ name, arguments: a })) } : {}) };
    case "tool":
      return { role: "tool", content: message.content, toolCallId: message.toolCallId };
    default:
      return { role: message.role, content: message.content };
  }
}

export interface TokenCount {
  prompt: number;
  completion: number;
}

interface CallBase {
  /** The call's own record (`<task>/<call>`). */
  id: string;
  /** The task of the node that made it. */
  taskId: string;
  node: string;
  index: number | null;
  step: number;
  /** Its key within the node run: `model`, `arguments`, `model-2`, `tool-1-getWeather`. */
  call: string;
  status: TaskStatus;
  attempts: number;
  startedAt: number | null;
  endedAt: number | null;
  error: string | null;
  /** Tokens its answers used (every answer asked for, those asked for again included); null: not a model call, or not known. */
  tokens: TokenCount | null;
}

/** A durable call as people read it: a model's prompt and answer, a tool's arguments and result. */
export type CallView = CallBase &
  (
    | {
        kind: "model";
        /** The model that answered, else the one asked for. */
        model: string | null;
        /** Null on a record made before prompts were kept. */
        prompt: ModelCallInput | null;
        /** Null until it is answered. */
        answer: { content: string | null; toolCalls: { name: string; arguments: string }[] } | null;
      }
    | { kind: "tool"; tool: string; arguments: unknown; result?: unknown }
    | { kind: "call"; input?: unknown; output?: unknown }
  );

/**
 * A task as people see it: a durable call's output (a model's answer and the tool calls in it, a
 * tool's result) without the values of secret-looking keys, JSON text included. The store keeps
 * the output whole: a node that runs again is handed it back (the model is sent the tool's result
 * as it came). Its input was recorded for people, and so redacted, already. `secretKeys`: names
 * added to the defaults.
 */
export function shownTask(task: TaskRecord, secretKeys: readonly string[] = []): TaskRecord {
  return task.parent !== null && task.output !== undefined && task.output !== null ? { ...task, output: redact(task.output, secretKeys) } : task;
}

/** A durable call's record as people read it (secrets hidden, see `shownTask`); undefined for a task that is not a call. */
export function describeCall(record: TaskRecord, secretKeys: readonly string[] = []): CallView | undefined {
  if (record.parent === null || record.call === null) return undefined;
  const task = shownTask(record, secretKeys);
  const base: CallBase = {
    id: task.id,
    taskId: record.parent,
    node: task.node,
    index: task.index,
    step: task.step,
    call: record.call,
    status: task.status,
    attempts: task.attempts.length,
    startedAt: task.startedAt,
    endedAt: task.endedAt,
    error: task.error?.message ?? null,
    tokens: null,
  };
  const input = task.input as Partial<ModelCallInput | ToolCallInput> | undefined;
  const done = task.status === "succeeded";
  const response = done ? answerOf(task.output) : undefined;
  if (input?.kind === "model" || response) {
    const usage = response?.usage;
    return {
      ...base,
      kind: "model",
      model: response?.model ?? (input as ModelCallInput | undefined)?.model ?? null,
      prompt: input?.kind === "model" ? (input as ModelCallInput) : null,
      answer: response ? { content: response.content, toolCalls: response.toolCalls.map(({ name, arguments: a }) => ({ name, arguments: a })) } : null,
      tokens: usage ? { prompt: usage.promptTokens, completion: usage.completionTokens } : null,
    };
  }
  if (input?.kind === "tool") {
    const tool = input as ToolCallInput;
    return { ...base, kind: "tool", tool: tool.tool, arguments: tool.arguments, ...(done ? { result: task.output } : {}) };
  }
  return { ...base, kind: "call", ...(task.input !== undefined ? { input: task.input } : {}), ...(done ? { output: task.output } : {}) };
}

/** The model's answer in a model call's recorded output (`ask` records `{ response, value }`). */
function answerOf(output: unknown): ModelResponse | undefined {
  const response = (output as { response?: Partial<ModelResponse> } | null | undefined)?.response;
  return response && typeof response === "object" && typeof response.model === "string" && Array.isArray(response.toolCalls) ? (response as ModelResponse) : undefined;
}

/** Tokens a run's model calls used: in all, by node, and by call (its record's id). */
export interface RunTokens extends TokenCount {
  byNode: Record<string, TokenCount>;
  byCall: Record<string, TokenCount>;
  /**
   * What the models of its sub-workflows' runs used (theirs in turn included), in all and by the
   * node of this run that started them; absent when they used none (readRunCalls).
   */
  subWorkflows?: TokenCount & { byNode: Record<string, TokenCount> };
}

export function emptyTokens(): RunTokens {
  return { prompt: 0, completion: 0, byNode: {}, byCall: {} };
}

/**
 * Adds the tokens of the answers in `events` to `tokens`: each answer a model gave writes a
 * `node.log` event with its usage (every answer, those that were asked for again included).
 * Other events are passed over, so a console can add a run's events as they come.
 */
export function countTokens(events: Iterable<EventRecord>, tokens: RunTokens = emptyTokens()): RunTokens {
  for (const event of events) {
    if (event.type !== "node.log" || event.taskId === null) continue;
    const { node, data } = event.payload as EventPayloads["node.log"];
    const usage = data as { call?: unknown; model?: unknown; promptTokens?: unknown; completionTokens?: unknown } | undefined;
    if (typeof usage?.call !== "string" || typeof usage.model !== "string" || typeof usage.promptTokens !== "number" || typeof usage.completionTokens !== "number") continue;
    const add = (count: TokenCount) => {
      count.prompt += usage.promptTokens as number;
      count.completion += usage.completionTokens as number;
    };
    add(tokens);
    add((tokens.byNode[node] ??= { prompt: 0, completion: 0 }));
    add((tokens.byCall[`${event.taskId}/${usage.call}`] ??= { prompt: 0, completion: 0 }));
  }
  return tokens;
}

/** The calls among a run's tasks (in the order stores list them: as they were made), with the tokens the events counted. */
export function runCalls(tasks: readonly TaskRecord[], tokens?: RunTokens, secretKeys: readonly string[] = []): CallView[] {
  const calls: CallView[] = [];
  for (const task of tasks) {
    const view = describeCall(task, secretKeys);
    if (!view) continue;
    const counted = tokens?.byCall[view.id];
    calls.push(counted ? { ...view, tokens: { ...counted } } : view);
  }
  return calls;
}
