import { modelFromEnv, noModelMessage } from "./env.js";
import { ModelError } from "./errors.js";
import type { BoundTool } from "./tools.js";
import type { ModelProvider } from "./types.js";

/** What model-backed nodes get from the process that runs them. */
export interface ModelServices {
  /** The provider; throws NO_MODEL when this process has none. */
  model(node: string): ModelProvider;
  /** A tool by name; throws when this process did not load it. */
  tool(name: string, node: string): BoundTool;
}

/**
 * Services from what the operator loaded: a given provider, else the environment's (looked up
 * when a model node first runs, so that starting runs needs no model), and the loaded tools.
 */
export function modelServices(given: { model?: ModelProvider; tool?(name: string): BoundTool | undefined }): ModelServices {
  let provider = given.model;
  return {
    model(node) {
      provider ??= modelFromEnv();
      if (!provider) throw new ModelError("NO_MODEL", noModelMessage(node));
      return provider;
    },
    tool(name, node) {
      const tool = given.tool?.(name);
      if (!tool) throw Object.assign(new Error(`node "${node}" needs tool "${name}", which no actions module loaded in this process exports`), { code: "UNKNOWN_TOOL" });
      return tool;
    },
  };
}
