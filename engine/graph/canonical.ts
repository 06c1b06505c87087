import { createHash } from "node:crypto";
import { stringify } from "safe-stable-stringify";
import type { WorkflowDefinition } from "./definition.js";

/** Key-sorted JSON: the same definition always gives the same text, whatever order it was built in. */
export function canonicalJson(value: unknown): string {
  const text = stringify(value);
  if (text === undefined) throw new TypeError("value has no JSON form");
  return text;
}

/** The first 16 hex digits of the SHA-256 of a value's canonical JSON: equal for equal values. */
export function contentHash(value: unknown): string {
  return createHash("sha256").update(canonicalJson(value)).digest("hex").slice(0, 16);
}

/** A workflow's version: the content hash of its canonical JSON form. */
export function workflowVersion(definition: WorkflowDefinition): string {
  return contentHash(definition);
}
