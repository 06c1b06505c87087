import type { LlmNodeDefinition } from "../graph/definition.js";
import type { NodeFunction } from "../graph/model.js";
import { ask } from "../llm/ask.js";
import { acceptAnswer, answerValidator, baseRequest, openingMessages } from "../llm/prompt.js";
import type { ModelServices } from "../llm/services.js";
import { templateScope } from "../llm/template.js";

/** One chat completion over a prompt template; the answer (text, or JSON matching `schema`) goes to `output`. */
export function llmNode(def: LlmNodeDefinition, services: ModelServices): NodeFunction {
  const validator = answerValidator(def.schema);
  return async (state, ctx) => {
    const { value } = await ask(ctx, services.model(ctx.node), {
      key: "model",
      request: { ...baseRequest(def), messages: openingMessages(def, templateScope(def.map !== undefined, state, ctx), def.prompt, def.schema) },
      accept: (response) => acceptAnswer(response, validator),
      attempts: def.modelAttempts,
    });
    return { [def.output]: value };
  };
}
