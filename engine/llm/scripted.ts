import { basename } from "node:path";
import type { z } from "zod";
import { ModelError } from "./errors.js";
import { fileProblem } from "../errors.js";
import { readTextFile } from "../text-file.js";
import { parseJsonText } from "../graph/parse-json.js";
import { sleep } from "../sleep.js";
import { lazily, zod } from "../zod.js";
import type { ModelCallInfo, ModelProvider, ModelRequest, ModelResponse } from "./types.js";

/** The shape of a script file, built at its first use (zod.ts). */
const scriptSchema = lazily(() => {
  const z = zod();
  const answerSchema = z
    .object({
      content: z.string().nullable().optional(),
      toolCalls: z
        .array(z.object({ name: z.string().min(1), arguments: z.union([z.string(), z.record(z.string(), z.unknown())]) }).strict())
        .optional(),
      model: z.string().optional(),
      usage: z.object({ promptTokens: z.number().int().min(0), completionTokens: z.number().int().min(0) }).strict().optional(),
    })
    .strict()
    .refine((a) => typeof a.content === "string" || (a.toolCalls?.length ?? 0) > 0, "an answer needs `content` or `toolCalls`");

  const script = z
    .object({
      description: z.string().optional(),
      /** Reported as the model of every answer that names none. */
      model: z.string().min(1).default("scripted"),
      /** Each answer is given after this long (streamed word by word over it), so runs can be watched. */
      delayMs: z.number().int().min(0).default(0),
      calls: z
        .array(
          z
            .object({
              node: z.string().min(1),
              call: z.string().min(1),
              /** Only for this attempt of the call (to script an invalid answer and its correction). */
              attempt: z.number().int().min(1).optional(),
              /** Only for this item of a mapped node. */
              index: z.number().int().min(0).optional(),
              delayMs: z.number().int().min(0).optional(),
              answer: answerSchema,
            })
            .strict(),
        )
        .min(1),
    })
    .strict();
  return script;
});

type Script = z.output<ReturnType<typeof scriptSchema>>;

export type ModelScript = z.input<ReturnType<typeof scriptSchema>>;

/**
 * Not a model: replays answers written in a file, chosen by the node and the durable call asking
 * (`draft_reply`/`model`, `resolve`/`model-2`...). Since the choice depends only on where the
 * question comes from, a run replays the same way in any process, after any crash. For tests,
 * and to run the fixtures offline.
 */
export class ScriptedProvider implements ModelProvider {
  readonly description: string;
  private readonly script: Script;

  constructor(
    private readonly file: string,
    script?: ModelScript,
  ) {
    this.script = script ? parseScript(script, file) : readScript(file);
    this.description = `scripted ${basename(file)}`;
  }

  async complete(request: ModelRequest, info: ModelCallInfo): Promise<ModelResponse> {
    const entry = this.script.calls.find(
      (c) =>
        c.node === info.node &&
        c.call === info.call &&
        (c.attempt === undefined || c.attempt === info.attempt) &&
        (c.index === undefined || c.index === info.index),
    );
    if (!entry) {
      throw new ModelError("MODEL_BAD_RESPONSE", `the model script ${basename(this.file)} has no answer for node "${info.node}", call "${info.call}" (attempt ${info.attempt})`);
    }
    const { answer } = entry;
    const offered = new Set((request.tools ?? []).map((t) => t.name));
    const toolCalls = (answer.toolCalls ?? []).map((c, i) => {
      if (!offered.has(c.name)) {
        throw new ModelError("MODEL_BAD_RESPONSE", `the model script answers node "${info.node}", call "${info.call}" with tool "${c.name}", which the node does not offer`);
      }
      return { id: `call_${info.call}_${i}`, name: c.name, arguments: typeof c.arguments === "string" ? c.arguments : JSON.stringify(c.arguments) };
    });
    await this.play(answer.content ?? null, entry.delayMs ?? this.script.delayMs, info);
    const content = answer.content ?? null;
    return {
      content,
      toolCalls,
      model: answer.model ?? request.model ?? this.script.model,
      usage: answer.usage
        ? { ...answer.usage, totalTokens: answer.usage.promptTokens + answer.usage.completionTokens }
        : estimateUsage(request, content, toolCalls.map((c) => c.arguments).join("")),
      finishReason: toolCalls.length > 0 ? "tool_calls" : "stop",
    };
  }

  /** Waits `delayMs` in all, handing the text out word by word as a server would stream it. */
  private async play(content: string | null, delayMs: number, info: ModelCallInfo): Promise<void> {
    const words = content ? content.match(/\S+\s*/g) ?? [content] : [];
    const pieces = Math.max(1, words.length);
    for (let i = 0; i < pieces; i++) {
      if (delayMs > 0) await sleep(delayMs / pieces, info.signal);
      info.signal.throwIfAborted();
      const word = words[i];
      if (word) info.onToken?.(word);
    }
  }
}

/** A rough count (about four characters a token), so that scripted runs still show usage. */
function estimateUsage(request: ModelRequest, content: string | null, args: string) {
  const prompt = request.messages.reduce((n, m) => n + (m.content?.length ?? 0), 0);
  const promptTokens = Math.ceil(prompt / 4);
  const completionTokens = Math.ceil(((content?.length ?? 0) + args.length) / 4);
  return { promptTokens, completionTokens, totalTokens: promptTokens + completionTokens };
}

function readScript(file: string): Script {
  let text: string;
  try {
    text = readTextFile(file);
  } catch (error) {
    throw new ModelError("NO_MODEL", `cannot read the model script ${file}: ${fileProblem(error)}`);
  }
  const parsed = parseJsonText(text.replace(/^\uFEFF/, ""));
  if (parsed.error !== undefined) throw new ModelError("NO_MODEL", `the model script ${file} is not valid JSON: ${parsed.error}`);
  return parseScript(parsed.value, file);
}

function parseScript(value: unknown, file: string): Script {
  const parsed = scriptSchema().safeParse(value);
  if (parsed.success) return parsed.data;
  const issue = parsed.error.issues[0]!;
  const where = issue.path.length > 0 ? `$.${issue.path.join(".")}` : "$";
  throw new ModelError("NO_MODEL", `the model script ${file} is invalid at ${where}: ${issue.message}`);
}
