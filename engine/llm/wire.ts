import type { z } from "zod";
import { lazily, zod } from "../zod.js";
import { ModelError } from "./errors.js";
import type { ChatMessage, ModelRequest, ModelResponse, ToolCall, Usage } from "./types.js";

/** The chat completions wire format (OpenAI's, spoken by vLLM, Ollama, LM Studio and gateways). */

export function requestBody(request: ModelRequest, model: string, stream: boolean): Record<string, unknown> {
  return {
    model,
    messages: request.messages.map(wireMessage),
    ...(request.tools && request.tools.length > 0
      ? {
          tools: request.tools.map((t) => ({ type: "function", function: { name: t.name, description: t.description, parameters: t.parameters } })),
          tool_choice: typeof request.toolChoice === "object" ? { type: "function", function: { name: request.toolChoice.name } } : (request.toolChoice ?? "auto"),
        }
      : {}),
    ...(request.temperature !== undefined ? { temperature: request.temperature } : {}),
    ...(request.maxTokens !== undefined ? { max_tokens: request.maxTokens } : {}),
    ...(stream ? { stream: true, stream_options: { include_usage: true } } : {}),
  };
}

function wireMessage(message: ChatMessage): Record<string, unknown> {
  switch (message.role) {
    case "assistant":
      return {
        role: "assistant",
        content: message.content,
        ...(message.toolCalls && message.toolCalls.length > 0
          ? { tool_calls: message.toolCalls.map((c) => ({ id: c.id, type: "function", function: { name: c.name, arguments: c.arguments } })) }
          : {}),
      };
    case "tool":
      return { role: "tool", tool_call_id: message.toolCallId, content: message.content };
    default:
      return { role: message.role, content: message.content };
  }
}

/** The shapes of an OpenAI-compatible answer, built at their first use (zod.ts). */
const wireSchemas = lazily(() => {
  const z = zod();
  const usageSchema = z
    .object({ prompt_tokens: z.number().nullish(), completion_tokens: z.number().nullish(), total_tokens: z.number().nullish() })
    .nullish();

  const completionSchema = z.object({
    model: z.string().optional(),
    choices: z
      .array(
        z.object({
          message: z.object({
            content: z.string().nullish(),
            tool_calls: z
              .array(z.object({ id: z.string().optional(), function: z.object({ name: z.string(), arguments: z.string().nullish() }) }))
              .nullish(),
          }),
          finish_reason: z.string().nullish(),
        }),
      )
      .min(1),
    usage: usageSchema,
  });

  const chunkSchema = z.object({
    model: z.string().optional(),
    choices: z
      .array(
        z.object({
          delta: z
            .object({
              content: z.string().nullish(),
              tool_calls: z
                .array(
                  z.object({
                    index: z.number().int().min(0).default(0),
                    id: z.string().nullish(),
                    function: z.object({ name: z.string().nullish(), arguments: z.string().nullish() }).nullish(),
                  }),
                )
                .nullish(),
            })
            .nullish(),
          finish_reason: z.string().nullish(),
        }),
      )
      .default([]),
    usage: usageSchema,
  });
  return { usageSchema, completionSchema, chunkSchema };
});

/** Token counts as the server reports them (any may be missing). */
type WireUsage = z.output<ReturnType<typeof wireSchemas>["usageSchema"]>;

/** A complete (non-streamed) answer. */
export function parseCompletion(value: unknown, requested: string): ModelResponse {
  const parsed = wireSchemas().completionSchema.safeParse(value);
  if (!parsed.success) throw badShape(value, parsed.error);
  const choice = parsed.data.choices[0]!;
  const toolCalls = (choice.message.tool_calls ?? []).map((c, i) => ({ id: c.id ?? `call_${i}`, name: c.function.name, arguments: c.function.arguments ?? "" }));
  return finish(choice.message.content ?? null, toolCalls, parsed.data.model ?? requested, parsed.data.usage, choice.finish_reason);
}

/** Assembles a streamed answer chunk by chunk (tool call arguments arrive in pieces). */
export class StreamAssembler {
  private content = "";
  private sawContent = false;
  private readonly calls: { id: string; name: string; arguments: string }[] = [];
  private model: string | undefined;
  private usage: WireUsage;
  private finishReason: string | null | undefined;

  /** Takes one `data:` payload; returns the new text in it, if any. */
  push(data: unknown): string {
    const parsed = wireSchemas().chunkSchema.safeParse(data);
    if (!parsed.success) throw badShape(data, parsed.error);
    this.model ??= parsed.data.model;
    if (parsed.data.usage) this.usage = parsed.data.usage;
    let text = "";
    for (const choice of parsed.data.choices) {
      if (choice.finish_reason) this.finishReason = choice.finish_reason;
      const delta = choice.delta;
      if (!delta) continue;
      if (typeof delta.content === "string") {
        text += delta.content;
        this.sawContent = true;
      }
      for (const piece of delta.tool_calls ?? []) {
        const call = (this.calls[piece.index] ??= { id: "", name: "", arguments: "" });
        if (piece.id) call.id = piece.id;
        if (piece.function?.name) call.name += piece.function.name;
        if (piece.function?.arguments) call.arguments += piece.function.arguments;
      }
    }
    this.content += text;
    return text;
  }

  /** The server said the answer is over (a finish_reason). */
  get finished(): boolean {
    return Boolean(this.finishReason);
  }

  result(requested: string): ModelResponse {
    const calls = this.calls.filter(Boolean).map((c, i) => ({ ...c, id: c.id || `call_${i}` }));
    if (calls.some((c) => !c.name)) throw new ModelError("MODEL_BAD_RESPONSE", "malformed streamed answer: a tool call has no name");
    if (!this.sawContent && calls.length === 0 && !this.finishReason) {
      throw new ModelError("MODEL_BAD_RESPONSE", "the stream ended without an answer");
    }
    return finish(this.sawContent ? this.content : null, calls, this.model ?? requested, this.usage, this.finishReason);
  }
}

function finish(
  content: string | null,
  toolCalls: ToolCall[],
  model: string,
  usage: WireUsage,
  finishReason: string | null | undefined,
): ModelResponse {
  return {
    content,
    toolCalls,
    model,
    ...(usage ? { usage: toUsage(usage) } : {}),
    ...(finishReason ? { finishReason } : {}),
  };
}

function toUsage(u: NonNullable<WireUsage>): Usage {
  const promptTokens = u.prompt_tokens ?? 0;
  const completionTokens = u.completion_tokens ?? 0;
  return { promptTokens, completionTokens, totalTokens: u.total_tokens ?? promptTokens + completionTokens };
}

/** An error body (`{"error": {"message": ...}}`) in a 200 answer or a stream is still an error. */
export function wireError(value: unknown): string | undefined {
  const error = (value as { error?: unknown } | null)?.error;
  if (error === undefined || error === null) return undefined;
  if (typeof error === "string") return error;
  const message = (error as { message?: unknown }).message;
  return typeof message === "string" ? message : JSON.stringify(error).slice(0, 200);
}

function badShape(value: unknown, error: z.ZodError): ModelError {
  const issue = error.issues[0];
  const where = issue && issue.path.length > 0 ? ` at ${issue.path.join(".")}` : "";
  const text = JSON.stringify(value) ?? String(value);
  return new ModelError("MODEL_BAD_RESPONSE", `malformed answer from the model server${where}: ${issue?.message ?? "unexpected shape"} (got ${text.slice(0, 120)})`);
}
