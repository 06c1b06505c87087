import type { DiffEntry } from "../../engine/index.js";
import { inline, plural } from "./plain.js";

/** One change of a state diff on one line: `+ path: value`, `- path: old`, `~ path: old → new`, `+ path: +N items`. */
export function diffLine(entry: DiffEntry): string {
  switch (entry.op) {
    case "add":
      return `+ ${entry.path}: ${inline(entry.value, 120)}`;
    case "remove":
      return `- ${entry.path}: ${inline(entry.old, 120)}`;
    case "change":
      return `~ ${entry.path}: ${inline(entry.old, 60)} → ${inline(entry.value, 60)}`;
    case "append":
      return `+ ${entry.path}: +${plural(entry.count!, "item")} ${inline(entry.items, 100)}`;
  }
}
