/**
 * The one interface every model provider implements, in pitwall's own terms (not a vendor's
 * wire format): a chat request with optional tools, and the assistant's answer.
 */

export type ChatMessage =
  | { role: "system"; content: string }
  | { role: "user"; content: string }
  | { role: "assistant"; content: string | null; toolCalls?: ToolCall[] }
  | { role: "tool"; toolCallId: string; content: string };

export interface ToolCall {
  /** The id the model gave the call; a tool message answers it by this id. */
  id: string;
  name: string;
  /** The arguments as the model wrote them (JSON text, not yet validated). */
  arguments: string;
}

/** A tool as the model is told about it. */
export interface ToolSpec {
  name: string;
  description: string;
  /** JSON Schema of the arguments object. */
  parameters: Record<string, unknown>;
}

export interface ModelRequest {
  /** Absent: the provider's default model. */
  model?: string;
  messages: ChatMessage[];
  tools?: ToolSpec[];
  /** `auto` (default when tools are given), `required`, or one tool by name. */
  toolChoice?: "auto" | "required" | { name: string };
  temperature?: number;
  maxTokens?: number;
}

export interface Usage {
  promptTokens: number;
  completionTokens: number;
  totalTokens: number;
}

export interface ModelResponse {
  content: string | null;
  toolCalls: ToolCall[];
  /** The model that answered, as the server names it. */
  model: string;
  usage?: Usage;
  finishReason?: string;
}

/** What a provider learns about the call it serves, and the hooks it reports through. */
export interface ModelCallInfo {
  signal: AbortSignal;
  runId: string;
  node: string;
  /** The durable call's key within its node (`model`, `arguments`, `model-3`...). */
  call: string;
  /** For a mapped node: the item's position. */
  index: number | null;
  /** 1 for the first attempt of this call, 2 for its first retry... */
  attempt: number;
  idempotencyKey: string;
  /** Text as it streams in. */
  onToken?(text: string): void;
  /** A request that will be sent again (rate limit, server error), and after how long. */
  onRetry?(retry: { attempt: number; delayMs: number; why: string }): void;
}

export interface ModelProvider {
  /** Shown in logs: `openai-compatible http://localhost:11434/v1`, `scripted support.json`. Never holds a secret. */
  readonly description: string;
  complete(request: ModelRequest, info: ModelCallInfo): Promise<ModelResponse>;
}
