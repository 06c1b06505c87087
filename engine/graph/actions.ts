import { resolve } from "node:path";
import { pathToFileURL } from "node:url";
import { WorkflowError } from "../errors.js";
import type { ActionRegistry, NodeFunction } from "./model.js";

/**
 * Actions by name. A module's default export maps names to functions; nested objects are
 * flattened with dots, so `{ tasks: { init } }` provides `tasks.init`.
 */
export function actionRegistry(...maps: Record<string, unknown>[]): ActionRegistry {
  const actions = new Map<string, NodeFunction>();
  const add = (prefix: string, value: unknown) => {
    if (typeof value === "function") actions.set(prefix, value as NodeFunction);
    else if (value !== null && typeof value === "object") {
      for (const [k, v] of Object.entries(value)) add(prefix ? `${prefix}.${k}` : k, v);
    }
  };
  for (const map of maps) add("", map);
  return {
    get: (name) => actions.get(name),
    names: () => [...actions.keys()].sort(),
  };
}

/** Imports actions modules (`.js`, or `.ts` when running under tsx) and merges their default exports. */
export async function loadActionModules(paths: readonly string[]): Promise<ActionRegistry> {
  const maps: Record<string, unknown>[] = [];
  for (const path of paths) {
    let module: { default?: unknown };
    try {
      module = (await import(pathToFileURL(resolve(path)).href)) as { default?: unknown };
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      const why = code === "ERR_MODULE_NOT_FOUND" ? "file not found" : (error as Error).message.split("\n")[0];
      throw new WorkflowError(`cannot load actions module ${path}: ${why}`);
    }
    if (module.default === null || typeof module.default !== "object") {
      throw new WorkflowError(`actions module ${path} must default-export an object mapping action names to functions`);
    }
    maps.push(module.default as Record<string, unknown>);
  }
  return actionRegistry(...maps);
}
