import { valueAtPath } from "../state/paths.js";

/** `{{ ticket.body }}`: a state value by path. */
const PLACEHOLDER = /\{\{\s*([\w-]+(?:\.[\w-]+)*)\s*\}\}/g;

/** What a mapped node's templates read besides the state: its task's item and the item's position. */
export const ITEM_NAMES = ["item", "index"] as const;

/**
 * Fills a prompt template from the state: strings go in as they are, other values as JSON (null
 * as `null`), a missing value (an optional key absent, a path into nothing) as an empty string.
 */
export function renderTemplate(template: string, state: unknown): string {
  return template.replace(PLACEHOLDER, (_match, path: string) => {
    const value = valueAtPath(state, path);
    if (value === undefined) return "";
    return typeof value === "string" ? value : JSON.stringify(value);
  });
}

/**
 * What a node's templates are filled from: the state, and in a mapped node (`map: { over }`) its
 * task's `item` and `index` too, which then stand before state keys of those names.
 */
export function templateScope(mapped: boolean, state: Record<string, unknown>, task: { item: unknown; index: number | null }): Record<string, unknown> {
  return mapped ? { ...state, item: task.item, index: task.index } : state;
}

/** The state keys a template reads (the first part of each path). */
export function templateKeys(template: string): string[] {
  return [...new Set([...template.matchAll(PLACEHOLDER)].map((m) => m[1]!.split(".")[0]!))];
}

/**
 * Each `{{` that does not open a placeholder (never closed, or not a dotted path inside), with
 * why: it would reach the model, or the person, as written.
 */
export function malformedPlaceholders(template: string): string[] {
  const found: string[] = [];
  const valid = new Set([...template.matchAll(PLACEHOLDER)].map((m) => m.index));
  for (let at = template.indexOf("{{"); at !== -1; at = template.indexOf("{{", at + 2)) {
    if (valid.has(at)) continue;
    const close = template.indexOf("}}", at + 2);
    // `{{{a}}}`: the placeholder starts one brace later.
    if (valid.has(at + 1)) continue;
    found.push(
      close === -1
        ? `"{{" at character ${at + 1} is never closed with "}}", so it would be sent as written`
        : `"${template.slice(at, close + 2)}" is not a placeholder ({{ key }} or {{ key.path }}: letters, digits, _ and - parted by dots), so it would be sent as written`,
    );
    if (close === -1) break;
    at = close;
  }
  return found;
}
