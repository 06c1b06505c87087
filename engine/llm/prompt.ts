import type { z } from "zod";
import { keyValidator } from "../state/schema.js";
import type { ModelNodeDefinition } from "../graph/definition.js";
import { UnusableAnswer, parseJsonAnswer } from "./ask.js";
import { renderTemplate } from "./template.js";
import type { ChatMessage, ModelRequest, ModelResponse } from "./types.js";

/** The request fields a model node sets for every call it makes. */
export function baseRequest(def: ModelNodeDefinition): Omit<ModelRequest, "messages"> {
  return {
    ...(def.model !== undefined ? { model: def.model } : {}),
    ...(def.temperature !== undefined ? { temperature: def.temperature } : {}),
    ...(def.maxTokens !== undefined ? { maxTokens: def.maxTokens } : {}),
  };
}

/** The node's system message (if any) and a user message, both templates filled from the state. */
export function openingMessages(def: ModelNodeDefinition, state: unknown, user: string, schema?: Record<string, unknown>): ChatMessage[] {
  const text = renderTemplate(user, state) + (schema ? `\n\nAnswer with only a JSON value matching this JSON Schema:\n${JSON.stringify(schema)}` : "");
  return [...systemMessage(def, state), { role: "user", content: text }];
}

export function systemMessage(def: ModelNodeDefinition, state: unknown): ChatMessage[] {
  return def.system !== undefined ? [{ role: "system", content: renderTemplate(def.system, state) }] : [];
}

/**
 * The validator of a node's `schema`, built once when the node is compiled, as validation built
 * it: every keyword enforced as JSON Schema means it (`required` without `properties` too).
 */
export function answerValidator(schema: Record<string, unknown> | undefined): z.ZodType | undefined {
  return schema ? keyValidator(schema) : undefined;
}

/** A final answer: text, or JSON matching the node's schema. */
export function acceptAnswer(response: ModelResponse, validator: z.ZodType | undefined): unknown {
  if (!validator) {
    if (!response.content?.trim()) throw new UnusableAnswer("the answer is empty");
    return response.content;
  }
  let answer: unknown;
  try {
    answer = parseJsonAnswer(response.content);
  } catch (error) {
    const bare = bareText(response.content, validator);
    if (bare === undefined) throw error;
    return bare;
  }
  const result = validator.safeParse(answer);
  if (result.success) return result.data;
  const issue = result.error.issues[0]!;
  const path = issue.path.length > 0 ? ` at ${issue.path.map(String).join(".")}` : "";
  throw new UnusableAnswer(`the answer does not match the schema${path}: ${issue.message}`);
}

/**
 * An answer that is not JSON but that a string schema takes as it is, or as a word without the
 * quotes, backticks, emphasis or final period around it (or that word in lower case): models
 * often answer `yes` or `High.` where the JSON would be `"yes"`, `"high"`. Undefined when the
 * schema takes none of them.
 */
function bareText(content: string | null, validator: z.ZodType): unknown {
  const text = (content ?? "").trim();
  const word = text.replace(/^[\s"'`*]+|[\s"'`*.]+$/g, "");
  for (const candidate of [text, word, word.toLowerCase()]) {
    if (candidate === "") continue;
    const result = validator.safeParse(candidate);
    if (result.success) return result.data;
  }
  return undefined;
}
