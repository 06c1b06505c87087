import { resolve } from "node:path";
import { pathToFileURL } from "node:url";
import { WorkflowError, errorMessage } from "../errors.js";
import { bindTools, type BoundTool } from "../llm/tools.js";
import type { ModelProvider } from "../llm/types.js";
import type { ActionRegistry, NodeFunction } from "./model.js";
import type { State } from "../state/ops.js";

/** An actions module's default export: actions by name, in groups at any depth ("triage.close"). */
export interface Actions {
  [name: string]: NodeFunction<State> | Actions;
}

/**
 * Types an actions module's default export without changing it: each action gets the run's state
 * (JSON values, read-only) and its context, so that strict TypeScript takes `(state) => ...`.
 */
export function defineActions<const A extends Actions>(actions: A): A {
  return actions;
}

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
    tool: () => undefined,
    toolNames: () => [],
  };
}

/**
 * Adds tools (an object mapping names to tools, as an actions module's `tools` export) and a
 * model provider to a registry. A tool name given twice is an error.
 */
export function extendRegistry(base: ActionRegistry, extra: { tools?: Record<string, unknown>; model?: ModelProvider }, where = "tools"): ActionRegistry {
  const tools = new Map<string, BoundTool>();
  for (const name of base.toolNames?.() ?? []) tools.set(name, base.tool!(name)!);
  for (const [name, tool] of bindTools(extra.tools ?? {}, where)) {
    if (tools.has(name)) throw new WorkflowError(`${where}: tool "${name}" is exported twice`);
    tools.set(name, tool);
  }
  const model = extra.model ?? base.model;
  return {
    get: (name) => base.get(name),
    names: () => base.names(),
    tool: (name) => tools.get(name),
    toolNames: () => [...tools.keys()].sort(),
    ...(model ? { model } : {}),
  };
}

/**
 * Imports actions modules (`.js`, or `.ts` when running under tsx): their default exports map
 * action names to functions, and their `tools` exports map tool names to tools.
 */
export async function loadActionModules(paths: readonly string[]): Promise<ActionRegistry> {
  const maps: Record<string, unknown>[] = [];
  const toolExports: [string, unknown][] = [];
  for (const path of paths) {
    let module: { default?: unknown; tools?: unknown };
    try {
      module = (await import(pathToFileURL(resolve(path)).href)) as { default?: unknown; tools?: unknown };
    } catch (error) {
      throw new WorkflowError(`cannot load actions module ${path}: ${whyNotLoaded(error, path)}`);
    }
    const hasDefault = module.default !== null && typeof module.default === "object";
    if (!hasDefault && (module.default !== undefined || module.tools === undefined)) {
      throw new WorkflowError(`actions module ${path} must default-export an object mapping action names to functions (or export only \`tools\`)`);
    }
    if (hasDefault) maps.push(module.default as Record<string, unknown>);
    if (module.tools !== undefined) toolExports.push([path, module.tools]);
  }
  let registry = actionRegistry(...maps);
  for (const [path, tools] of toolExports) registry = extendRegistry(registry, { tools: tools as Record<string, unknown> }, `actions module ${path}`);
  return registry;
}

/** Why importing a module failed, in one line that says where when the error knows. */
function whyNotLoaded(error: unknown, path: string): string {
  if ((error as NodeJS.ErrnoException).code === "ERR_MODULE_NOT_FOUND") return whatIsMissing(errorMessage(error), path);
  const lines = errorMessage(error).split("\n").filter((line) => line.trim() !== "");
  // TypeScript compiled on the fly: "Transform failed with 1 error:" then "<file>:3:7: ERROR: Unexpected ...".
  if (/^Transform failed with \d+ errors?:$/.test(lines[0] ?? "") && lines[1]) return `syntax error at ${lines[1].replace(": ERROR:", ":")}`;
  // Node's message for JavaScript does not say where; its checker does.
  if (error instanceof SyntaxError) return `syntax error: ${lines[0]} (node --check ${path} shows where)`;
  return lines[0] ?? String(error);
}

/** The module itself, or something it imports (a package not installed, a file of its own). */
function whatIsMissing(message: string, path: string): string {
  const found = /Cannot find (package|module) '([^']+)'(?: imported from (\S+))?/.exec(message);
  if (!found || resolve(found[2]!) === resolve(path)) return "file not found";
  const [, kind, missing, importer] = found;
  const from = importer !== undefined && resolve(importer) !== resolve(path) ? ` (from ${importer})` : "";
  return kind === "package"
    ? `it imports package "${missing}"${from}, which is not installed where the module can find it (npm install it beside the module)`
    : `it imports ${missing}${from}, which does not exist`;
}
