import type { z } from "zod";
import { closest, didYouMean } from "../suggest.js";
import { zod } from "../zod.js";

/**
 * Fields people write from other tools' habits, by where they are written (`node`, `retry`,
 * `workflow`): where the setting goes in a workflow file. Spelling slips are left to didYouMean.
 */
const ELSEWHERE: Record<string, Record<string, string>> = {
  node: {
    retries: 'retries go in `retry`: { "maxAttempts": 3 }',
    attempts: 'attempts go in `retry`: { "maxAttempts": 3 }',
    maxAttempt: 'attempts go in `retry`: { "maxAttempts": 3 }',
    maxAttempts: 'attempts go in `retry`: { "maxAttempts": 3 }',
    backoff: 'the backoff goes in `retry`: { "maxAttempts": 3, "backoffMs": 200 }',
    backoffMs: 'the backoff goes in `retry`: { "maxAttempts": 3, "backoffMs": 200 }',
    timeout: "the field is `timeoutMs`, in milliseconds",
    timeoutSeconds: "the field is `timeoutMs`, in milliseconds",
    condition: "a node routes by `routes` (route key → node), the key chosen by its action's { route } or by `routeOn`",
  },
  retry: {
    retries: "the field is `maxAttempts` (every attempt, the first one too)",
    attempts: "the field is `maxAttempts` (every attempt, the first one too)",
    maxRetries: "the field is `maxAttempts` (every attempt, the first one too)",
    backoff: "the field is `backoffMs`, the first wait in milliseconds",
    delay: "the field is `backoffMs`, the first wait in milliseconds",
    delayMs: "the field is `backoffMs`, the first wait in milliseconds",
  },
  workflow: {
    maxSteps: 'it goes in `limits`: { "maxSteps": 1000 }',
    concurrency: 'it goes in `limits`: { "concurrency": 8 }',
    runsAtOnce: 'it goes in `limits`: { "runsAtOnce": 5 }',
    entry: "the first node is `start`",
    entryPoint: "the first node is `start`",
    edges: "edges are written on each node, as `next` or `routes`",
  },
};

/** `unknown field "nxt" (did you mean "next"?)`, or where such a setting goes. */
export function unknownField(key: string, known: Iterable<string>, where: keyof typeof ELSEWHERE): string {
  const group = Object.hasOwn(ELSEWHERE, where) ? ELSEWHERE[where]! : {};
  const elsewhere = Object.hasOwn(group, key) ? group[key] : undefined;
  return elsewhere ? `unknown field "${key}": ${elsewhere}` : `unknown field "${key}"${didYouMean(key, known)}`;
}

/** The fields of the object a zod schema expects at `path` (through optional and default wrappers). */
export function fieldsAt(schema: z.ZodType, path: readonly PropertyKey[]): string[] {
  const { ZodOptional, ZodDefault, ZodObject } = zod();
  let at: z.ZodType | undefined = schema;
  for (const part of [...path, undefined]) {
    while (at instanceof ZodOptional || at instanceof ZodDefault) at = at._zod.def.innerType as z.ZodType;
    if (!(at instanceof ZodObject)) return [];
    if (part === undefined) return Object.keys(at.shape);
    at = at.shape[String(part)] as z.ZodType | undefined;
  }
  return [];
}

/**
 * After "is not a node": the node (or END) a mistyped name most likely meant, else — when there
 * are few — the nodes there are.
 */
export function nodeHint(name: string, nodes: readonly string[], end: string | undefined): string {
  const match = closest(name, end === undefined ? nodes : [end, ...nodes]);
  if (match !== undefined) return ` (did you mean ${match === end ? end : JSON.stringify(match)}?)`;
  return nodes.length > 0 && nodes.length <= 12 ? ` (nodes: ${nodes.join(", ")})` : "";
}
