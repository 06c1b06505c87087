import microdiff from "microdiff";
import { jsonPath } from "./schema.js";

/**
 * One difference between two states. Items appended at the end of an array are grouped into
 * one `append` entry (`+3 items`), because that is how a growing list reads best.
 */
export type DiffEntry =
  | { op: "add"; path: string; value: unknown }
  | { op: "remove"; path: string; old: unknown }
  | { op: "change"; path: string; old: unknown; value: unknown }
  | { op: "append"; path: string; count: number; items: unknown[] };

export function diffStates(before: unknown, after: unknown): DiffEntry[] {
  if (!isObject(before) || !isObject(after)) {
    return JSON.stringify(before) === JSON.stringify(after) ? [] : [{ op: "change", path: "$", old: before, value: after }];
  }
  const out: DiffEntry[] = [];
  const appends = new Map<string, { path: string; items: unknown[] }>();
  for (const d of microdiff(before, after)) {
    const last = d.path[d.path.length - 1];
    const parentPath = d.path.slice(0, -1);
    if (d.type === "CREATE" && typeof last === "number") {
      const parentBefore = at(before, parentPath);
      if (Array.isArray(parentBefore) && last >= parentBefore.length) {
        const key = jsonPath(parentPath);
        const group = appends.get(key) ?? { path: key, items: [] };
        if (!appends.has(key)) {
          appends.set(key, group);
          out.push({ op: "append", path: key, count: 0, items: group.items });
        }
        group.items.push(d.value);
        continue;
      }
    }
    const path = jsonPath(d.path);
    if (d.type === "CREATE") out.push({ op: "add", path, value: d.value });
    else if (d.type === "REMOVE") out.push({ op: "remove", path, old: d.oldValue });
    else out.push({ op: "change", path, old: d.oldValue, value: d.value });
  }
  for (const entry of out) if (entry.op === "append") entry.count = entry.items.length;
  return out;
}

/** Keeps a diff small enough for an event payload: long lists are cut, large values summarized. */
export function summarizeDiff(diff: DiffEntry[], maxEntries = 50, maxValueBytes = 2048): { diff: DiffEntry[]; truncated: boolean } {
  let truncated = diff.length > maxEntries;
  const shrink = (value: unknown): unknown => {
    const text = JSON.stringify(value);
    if (text === undefined || text.length <= maxValueBytes) return value;
    truncated = true;
    return `${text.slice(0, maxValueBytes)}… (${text.length} bytes)`;
  };
  const entries = diff.slice(0, maxEntries).map((e): DiffEntry => {
    switch (e.op) {
      case "add":
        return { ...e, value: shrink(e.value) };
      case "remove":
        return { ...e, old: shrink(e.old) };
      case "change":
        return { ...e, old: shrink(e.old), value: shrink(e.value) };
      case "append":
        return { ...e, items: shrink(e.items) as unknown[] };
    }
  });
  return { diff: entries, truncated };
}

function at(value: unknown, path: readonly (string | number)[]): unknown {
  let cur = value;
  for (const p of path) {
    if (cur === null || typeof cur !== "object") return undefined;
    cur = (cur as Record<string | number, unknown>)[p];
  }
  return cur;
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}
