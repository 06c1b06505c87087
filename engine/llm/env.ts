import { ModelError } from "./errors.js";
import { OpenAICompatibleProvider } from "./openai.js";
import { ScriptedProvider } from "./scripted.js";
import type { ModelProvider } from "./types.js";

/** The variables a process reads to find its model. */
export const MODEL_ENV = {
  baseUrl: "PITWALL_LLM_BASE_URL",
  apiKey: "PITWALL_LLM_API_KEY",
  model: "PITWALL_LLM_MODEL",
  script: "PITWALL_LLM_SCRIPT",
} as const;

/**
 * The model provider the environment configures, if any: an OpenAI-compatible server when
 * `PITWALL_LLM_BASE_URL` or `PITWALL_LLM_API_KEY` is set (a key alone means api.openai.com),
 * the scripted provider when `PITWALL_LLM_SCRIPT` names a script file. Both at once is refused:
 * whichever won, someone expecting the other would be surprised — by a bill, or by canned answers.
 */
export function modelFromEnv(env: NodeJS.ProcessEnv = process.env): ModelProvider | undefined {
  const baseUrl = env[MODEL_ENV.baseUrl]?.trim();
  const apiKey = env[MODEL_ENV.apiKey]?.trim();
  const model = env[MODEL_ENV.model]?.trim();
  const script = env[MODEL_ENV.script]?.trim();
  if (script && (baseUrl || apiKey)) {
    const server = [baseUrl ? MODEL_ENV.baseUrl : undefined, apiKey ? MODEL_ENV.apiKey : undefined].filter(Boolean).join(" and ");
    throw new ModelError("NO_MODEL", `${MODEL_ENV.script} (a script of recorded answers) is set together with ${server} (a model server): unset one or the other`);
  }
  if (baseUrl || apiKey) {
    return new OpenAICompatibleProvider({ ...(baseUrl ? { baseUrl } : {}), ...(apiKey ? { apiKey } : {}), ...(model ? { model } : {}) });
  }
  return script ? new ScriptedProvider(script) : undefined;
}

/** Why a node cannot run without a model, in one line a person can act on. */
export function noModelMessage(node: string): string {
  return `node "${node}" needs a model: set ${MODEL_ENV.baseUrl} (and ${MODEL_ENV.apiKey}) for an OpenAI-compatible server, or ${MODEL_ENV.script} to replay a script, or give a \`model\` (\`workflow(name, { model })\`, \`createEngine({ model })\` or \`extendRegistry\`)`;
}
