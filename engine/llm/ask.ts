import type { NodeContext } from "../graph/model.js";
import { modelCallInput } from "./call-record.js";
import { ModelError } from "./errors.js";
import type { ChatMessage, ModelProvider, ModelRequest, ModelResponse } from "./types.js";

/** Thrown by an `accept` function: the answer cannot be used, said in words the model can act on. */
export class UnusableAnswer extends Error {}

export interface Question<T> {
  /** The durable call's key, unique within the node run (`model`, `arguments`, `model-3`). */
  key: string;
  request: ModelRequest;
  /** Turns the answer into what the node needs, or throws UnusableAnswer. */
  accept(response: ModelResponse): T;
  /** How many answers in all may be asked for before the node fails. */
  attempts: number;
}

export interface Answer<T> {
  response: ModelResponse;
  value: T;
}

/**
 * Asks the model as a durable call: the answer is recorded, so a node that runs again (after a
 * crash or an interrupt) gets it back without asking again, as long as the request is the same. An unusable answer is asked
 * for again, with the model told what was wrong; streamed text becomes progress; the model,
 * tokens and latency of each answer become a `node.log` event.
 */
export async function ask<T>(ctx: NodeContext, provider: ModelProvider, question: Question<T>): Promise<Answer<T>> {
  let correction: ChatMessage[] = [];
  return ctx.call(
    question.key,
    async (call) => {
      const started = Date.now();
      let streamed = "";
      const response = await provider.complete(
        { ...question.request, messages: [...question.request.messages, ...correction] },
        {
          signal: call.signal,
          runId: ctx.runId,
          node: ctx.node,
          call: question.key,
          index: ctx.index,
          attempt: call.attempt,
          idempotencyKey: call.idempotencyKey,
          onToken: (text) => {
            streamed += text;
            ctx.progress(null, tail(streamed));
          },
          onRetry: ({ attempt, delayMs, why }) =>
            ctx.log.warn(`model call ${question.key}: ${why}; sending it again in ${delayMs} ms`, { call: question.key, attempt, delayMs }),
        },
      );
      const latencyMs = Date.now() - started;
      const usage = response.usage;
      ctx.log.info(
        `model ${response.model} answered ${question.key} in ${latencyMs} ms${usage ? ` (${usage.promptTokens} prompt + ${usage.completionTokens} completion tokens)` : ""}`,
        {
          call: question.key,
          model: response.model,
          latencyMs,
          ...(usage ? { promptTokens: usage.promptTokens, completionTokens: usage.completionTokens, totalTokens: usage.totalTokens } : {}),
          ...(response.finishReason ? { finishReason: response.finishReason } : {}),
        },
      );
      try {
        return { response, value: question.accept(response) };
      } catch (error) {
        if (!(error instanceof UnusableAnswer)) throw error;
        correction = [
          { role: "assistant", content: response.content, ...(response.toolCalls.length > 0 ? { toolCalls: response.toolCalls } : {}) },
          ...response.toolCalls.map((c): ChatMessage => ({ role: "tool", toolCallId: c.id, content: "Not run: the call was invalid." })),
          { role: "user", content: `That answer cannot be used: ${error.message}. Answer again.` },
        ];
        throw new ModelError("INVALID_MODEL_OUTPUT", `${error.message} (answer ${call.attempt} of ${question.attempts})`);
      }
    },
    {
      retry: { maxAttempts: question.attempts, backoffMs: 0, jitter: 0, retryOn: ["INVALID_MODEL_OUTPUT"] },
      input: modelCallInput(question.request),
      // The whole conversation: an answer recorded for another prompt (the state was edited since) is not this one's.
      dependsOn: question.request,
      // A retry after a failure asks anew: the answer may be what failed the node.
      afterFailure: "again",
    },
  ) as Promise<Answer<T>>;
}

/** The end of the streamed text, on one line: what a progress event shows. */
function tail(text: string): string {
  const line = text.replace(/\s+/g, " ").trim();
  return line.length > 160 ? `…${line.slice(-159)}` : line;
}

/** Reads a JSON answer, tolerating a Markdown code fence around it. */
export function parseJsonAnswer(content: string | null): unknown {
  const text = (content ?? "").trim().replace(/^```(?:json)?\s*\n?([\s\S]*?)\n?```$/i, "$1").trim();
  try {
    return JSON.parse(text);
  } catch {
    throw new UnusableAnswer(`the answer is not valid JSON: ${JSON.stringify(text.slice(0, 200))}`);
  }
}
