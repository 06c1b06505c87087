import type { DiffEntry } from "../../engine/index.js";
import { inline, plural } from "./plain.js";

/**
 * One change of a state diff on one line: `+ path: value`, `- path: old`, `~ path: old → new`,
 * `+ path: +N items`. Values are JSON, so that a string reads as one (`""` is seen, `"1"` is not 1).
 */
export function diffLine(entry: DiffEntry): string {
  switch (entry.op) {
    case "add":
      return `+ ${entry.path}: ${asJson(entry.value, 120)}`;
    case "remove":
      return `- ${entry.path}: ${asJson(entry.old, 120)}`;
    case "change":
      return `~ ${entry.path}: ${asJson(entry.old, 60)} → ${asJson(entry.value, 60)}`;
    case "append":
      return `+ ${entry.path}: +${plural(entry.count!, "item")} ${asJson(entry.items, 100)}`;
  }
}

function asJson(value: unknown, max: number): string {
  return inline(JSON.stringify(value) ?? "undefined", max);
}
