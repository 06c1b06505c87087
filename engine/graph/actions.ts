import { realpathSync } from "node:fs";
import { resolve } from "node:path";
import { pathToFileURL } from "node:url";
import { WorkflowError, errorMessage } from "../errors.js";
import { didYouMean } from "../suggest.js";
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
 * flattened with dots, so `{ tasks: { init } }` provides `tasks.init`. A name given twice (by two
 * maps, or twice in one) is an error, as a tool exported twice is: which one would run is a guess.
 */
export function actionRegistry(...maps: Record<string, unknown>[]): ActionRegistry {
  return registryOf(maps.map((map) => ({ map })));
}

/** What a module exports beside its actions: a value under an action's name that is not a function. */
type Exports = { map: Record<string, unknown>; from?: string };

function registryOf(exports: readonly Exports[]): ActionRegistry {
  const actions = new Map<string, { run: NodeFunction; from: string | undefined }>();
  const others = new Map<string, string>();
  const add = (prefix: string, value: unknown, from: string | undefined) => {
    if (typeof value === "function") {
      const first = actions.get(prefix);
      if (first) throw new WorkflowError(`action "${prefix}" is exported twice${twice(first.from, from)}: rename one (the actions of every loaded module share one set of names)`);
      actions.set(prefix, { run: value as NodeFunction, from });
    } else if (isGroup(value)) {
      for (const [k, v] of Object.entries(value)) add(prefix ? `${prefix}.${k}` : k, v, from);
    } else if (prefix !== "") {
      others.set(prefix, `${from ? `${from} exports it` : "it is exported"}, but it is ${notAFunction(value, prefix.slice(prefix.lastIndexOf(".") + 1))}`);
    }
  };
  for (const { map, from } of exports) add("", map, from);
  return {
    get: (name) => actions.get(name)?.run,
    names: () => [...actions.keys()].sort(),
    whyNotAction: (name) => others.get(name),
    tool: () => undefined,
    toolNames: () => [],
  };
}

function twice(first: string | undefined, second: string | undefined): string {
  if (first === undefined && second === undefined) return "";
  return first === second ? ` by ${first}` : ` (by ${first ?? "a map given in code"} and by ${second ?? "a map given in code"})`;
}

/** A group of actions: a plain object (or a module namespace), not a class's instance, a promise or an array. */
function isGroup(value: unknown): value is Record<string, unknown> {
  if (value === null || typeof value !== "object" || isThenable(value)) return false;
  const proto = Object.getPrototypeOf(value) as unknown;
  return proto === Object.prototype || proto === null;
}

function isThenable(value: unknown): boolean {
  return value !== null && typeof value === "object" && typeof (value as { then?: unknown }).then === "function";
}

/** `the number 42, not a function`: what an export that is not an action is, in words. */
function notAFunction(value: unknown, name: string): string {
  if (isThenable(value)) return `a Promise, not a function: was the function called? export \`${name}\`, not \`${name}()\``;
  if (value === null || value === undefined) return `${String(value)}, not a function`;
  if (Array.isArray(value)) return "an array, not a function";
  if (typeof value === "object") return `an object of class ${(value as object).constructor?.name ?? "unknown"}, not a function (only plain objects group actions)`;
  const text = JSON.stringify(value) ?? String(value);
  return `the ${typeof value} ${text.length > 40 ? `${text.slice(0, 40)}…` : text}, not a function`;
}

/**
 * Why no action of that name runs: a loaded module exports something else under it, or none
 * exports it (with the nearest name one does). Undefined when it is there.
 */
export function missingAction(registry: ActionRegistry, name: string, where = "the actions module"): string | undefined {
  if (registry.get(name)) return undefined;
  const other = registry.whyNotAction?.(name);
  if (other !== undefined) return `action "${name}": ${other}`;
  return `action "${name}" is not exported by ${where}${didYouMean(name, registry.names())}`;
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
    ...(base.whyNotAction ? { whyNotAction: (name: string) => base.whyNotAction!(name) } : {}),
    tool: (name) => tools.get(name),
    toolNames: () => [...tools.keys()].sort(),
    ...(model ? { model } : {}),
  };
}

/**
 * Imports actions modules (`.js`, `.mjs`, `.cjs`, or `.ts` when running under tsx): their
 * default exports map action names to functions, and their `tools` exports map tool names to
 * tools. A module named twice (`./actions.js` and its absolute path) is loaded once.
 */
export async function loadActionModules(paths: readonly string[]): Promise<ActionRegistry> {
  const maps: Exports[] = [];
  const toolExports: [string, unknown][] = [];
  const seen = new Set<string>();
  for (const path of paths) {
    const file = realFile(path);
    if (seen.has(file)) continue;
    seen.add(file);
    let module: { default?: unknown; tools?: unknown };
    try {
      module = (await import(pathToFileURL(file).href)) as { default?: unknown; tools?: unknown };
    } catch (error) {
      throw new WorkflowError(`cannot load actions module ${path}: ${whyNotLoaded(error, path)}`);
    }
    const hasDefault = module.default !== null && typeof module.default === "object";
    if (!hasDefault && (module.default !== undefined || module.tools === undefined)) {
      throw new WorkflowError(`actions module ${path} must default-export an object mapping action names to functions (or export only \`tools\`)`);
    }
    if (hasDefault) maps.push({ map: module.default as Record<string, unknown>, from: path });
    if (module.tools !== undefined) toolExports.push([path, module.tools]);
  }
  let registry = registryOf(maps);
  for (const [path, tools] of toolExports) registry = extendRegistry(registry, { tools: tools as Record<string, unknown> }, `actions module ${path}`);
  return registry;
}

/** The file a path names, links followed, so that two spellings of one module are one. */
function realFile(path: string): string {
  try {
    return realpathSync(resolve(path));
  } catch {
    // A file that is not there: importing it says so, naming the path as given.
    return resolve(path);
  }
}

/** Why importing a module failed, in one line that says where when the error knows. */
function whyNotLoaded(error: unknown, path: string): string {
  if ((error as NodeJS.ErrnoException).code === "ERR_MODULE_NOT_FOUND") return whatIsMissing(errorMessage(error), path);
  const lines = errorMessage(error).split("\n").filter((line) => line.trim() !== "");
  // TypeScript compiled on the fly: "Transform failed with 1 error:" then "<file>:3:7: ERROR: Unexpected ...".
  if (/^Transform failed with \d+ errors?:$/.test(lines[0] ?? "") && lines[1]) return `syntax error at ${lines[1].replace(": ERROR:", ":")}`;
  // ES syntax in a file Node was told is CommonJS (by its package.json, or by its .cjs name).
  if (error instanceof SyntaxError && /^(Unexpected token 'export'|Cannot use import statement outside a module|Cannot use 'import\.meta' outside a module)/.test(lines[0] ?? "")) {
    return `it is written as an ES module (import/export), but ${/\.c[jt]s$/.test(path) ? "its .cjs name makes it" : "its package.json (\"type\": \"commonjs\") makes it"} CommonJS: name it .mjs (or .mts), or write it with require() and module.exports`;
  }
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
