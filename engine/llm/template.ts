import { valueAtPath } from "../state/paths.js";

/** `{{ ticket.body }}`: a state value by path. */
const PLACEHOLDER = /\{\{\s*([\w-]+(?:\.[\w-]+)*)\s*\}\}/g;

/**
 * Fills a prompt template from the state: strings go in as they are, other values as JSON,
 * a missing value as an empty string.
 */
export function renderTemplate(template: string, state: unknown): string {
  return template.replace(PLACEHOLDER, (_match, path: string) => {
    const value = valueAtPath(state, path);
    if (value === undefined || value === null) return "";
    return typeof value === "string" ? value : JSON.stringify(value);
  });
}

/** The state keys a template reads (the first part of each path). */
export function templateKeys(template: string): string[] {
  return [...new Set([...template.matchAll(PLACEHOLDER)].map((m) => m[1]!.split(".")[0]!))];
}
