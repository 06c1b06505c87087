import type { ToolNodeDefinition } from "../graph/definition.js";
import type { NodeFunction } from "../graph/model.js";
import { UnusableAnswer, ask, parseJsonAnswer } from "../llm/ask.js";
import { baseRequest, openingMessages, systemMessage } from "../llm/prompt.js";
import type { ModelServices } from "../llm/services.js";
import { renderTemplate, templateScope } from "../llm/template.js";
import { callTool, checkArguments, parseArguments, type BoundTool } from "../llm/tools.js";
import type { ModelResponse } from "../llm/types.js";

/**
 * A fixed tool: the model fills its arguments from the instruction, the tool runs, and — with
 * `outputOptions` — the model classifies the result into one of them, which is the route key
 * (the model as router). Arguments, the tool's result and the classification are each a
 * durable call.
 */
export function toolNode(def: ToolNodeDefinition, services: ModelServices): NodeFunction {
  return async (state, ctx) => {
    const scope = templateScope(def.map !== undefined, state, ctx);
    const provider = services.model(ctx.node);
    const tool = services.tool(def.tool, ctx.node);
    const { value: args } = await ask(ctx, provider, {
      key: "arguments",
      request: {
        ...baseRequest(def),
        messages: openingMessages(def, scope, `${def.instruction}\n\nCall the tool ${tool.name} with the arguments this needs.`),
        tools: [tool.spec],
        toolChoice: { name: tool.name },
      },
      accept: (response) => acceptArguments(response, tool),
      attempts: def.modelAttempts,
    });
    const result = await callTool(ctx, tool, args, "tool");
    const update = def.output !== undefined ? { [def.output]: result } : {};
    const options = def.outputOptions;
    if (!options) return update;

    const question = [
      `Task: ${renderTemplate(def.instruction, scope)}`,
      `The tool ${tool.name} was called with ${JSON.stringify(args)} and returned:`,
      JSON.stringify(result, null, 2),
      "",
      def.classify ?? "Which of the options describes this result?",
      `Answer with exactly one of: ${options.join(", ")} — the option alone, nothing else.`,
    ].join("\n");
    const { value: route } = await ask(ctx, provider, {
      key: "classify",
      request: { ...baseRequest(def), messages: [...systemMessage(def, scope), { role: "user", content: question }] },
      accept: (response) => acceptOption(response, options),
      attempts: def.modelAttempts,
    });
    return { route, update };
  };
}

/** The tool call's arguments; a model that cannot call tools may write them as a JSON object instead. */
function acceptArguments(response: ModelResponse, tool: BoundTool): unknown {
  const call = response.toolCalls.find((c) => c.name === tool.name);
  const checked = call ? parseArguments(tool, call.arguments) : response.toolCalls.length === 0 ? writtenArguments(response.content, tool) : undefined;
  if (!checked) throw new UnusableAnswer(`call the tool ${tool.name}`);
  if (!checked.ok) throw new UnusableAnswer(checked.problem);
  return checked.value;
}

function writtenArguments(content: string | null, tool: BoundTool): ReturnType<typeof checkArguments> | undefined {
  let value: unknown;
  try {
    value = parseJsonAnswer(content);
  } catch {
    return undefined;
  }
  return value !== null && typeof value === "object" && !Array.isArray(value) ? checkArguments(tool, value) : undefined;
}

/** The option the answer names, exactly (quotes, backticks and a final period aside). */
function acceptOption(response: ModelResponse, options: readonly string[]): string {
  const answer = (response.content ?? "").trim().replace(/^[\s"'`*]+|[\s"'`*.]+$/g, "");
  const match = options.find((o) => o.toLowerCase() === answer.toLowerCase());
  if (match) return match;
  throw new UnusableAnswer(`the classification ${JSON.stringify(answer.slice(0, 80))} is not one of ${options.join(", ")}`);
}
