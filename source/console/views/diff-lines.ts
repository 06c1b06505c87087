import type { DiffEntry } from "../../../engine/index.js";
import { seg, wrapWords, type Line } from "../components/lines.js";
import { clean, fit, inline } from "../text.js";
import { DIFF_COLOR } from "../theme.js";

/** Characters kept before the first difference of two long texts. */
const CONTEXT = 24;

/**
 * Two values as shown side by side; long texts that begin alike are shown from a little before
 * where they differ (`…LLLL🚀END` → `…LLLL🛸END2`), so that the change is on screen.
 */
function aroundChange(old: unknown, value: unknown): [string, string] {
  if (typeof old !== "string" || typeof value !== "string") return [inline(old), inline(value)];
  let same = 0;
  while (same < old.length && same < value.length && old[same] === value[same]) same++;
  // Never from the middle of a surrogate pair (an emoji).
  let from = Math.max(0, same - CONTEXT);
  if (from > 0 && /[\uDC00-\uDFFF]/.test(old[from] ?? "")) from--;
  if (from < CONTEXT) return [inline(old), inline(value)];
  return [`"…${inline(old.slice(from)).slice(1)}`, `"…${inline(value.slice(from)).slice(1)}`];
}

/**
 * A structural diff as coloured lines: added green, removed red, changed yellow, and items
 * appended to a list as one `+N items` line.
 */
export function diffLines(diff: readonly DiffEntry[]): Line[] {
  if (diff.length === 0) return [[seg(" no difference", { color: "gray" })]];
  return diff.map((d): Line => {
    const path = seg(` ${clean(d.path)}`, { bold: true });
    switch (d.op) {
      case "add":
        return [seg(" +", { color: DIFF_COLOR.add, bold: true }), path, seg(` ${inline(d.value)}`, { color: DIFF_COLOR.add })];
      case "remove":
        return [seg(" -", { color: DIFF_COLOR.remove, bold: true }), path, seg(` ${inline(d.old)}`, { color: DIFF_COLOR.remove })];
      case "change": {
        const [old, value] = aroundChange(d.old, d.value);
        return [
          seg(" ~", { color: DIFF_COLOR.change, bold: true }),
          path,
          seg(` ${old}`, { color: DIFF_COLOR.remove }),
          seg(" → "),
          seg(value, { color: DIFF_COLOR.change }),
        ];
      }
      case "append":
        return [
          seg(" +", { color: DIFF_COLOR.append, bold: true }),
          path,
          seg(` +${d.count} item${d.count === 1 ? "" : "s"}`, { color: DIFF_COLOR.append, bold: true }),
          seg(` ${inline(d.items)}`, { color: DIFF_COLOR.append }),
        ];
    }
  });
}

/** Below this width a diff is a list of changes; from it on, each change is shown side by side. */
export const SIDE_BY_SIDE_WIDTH = 100;

/**
 * A structural diff as two columns, the earlier checkpoint on the left and the later one on the
 * right: for each changed path its value before and after, whole (pretty-printed JSON, wrapped
 * between words), so that a change inside a large value is read in place rather than on one line.
 */
export function sideBySideLines(diff: readonly DiffEntry[], width: number, left: string, right: string): Line[] {
  const column = Math.max(10, Math.floor((width - 4) / 2));
  const rule = seg(" │ ", { color: "gray" });
  const lines: Line[] = [[seg(` ${fit(clean(left), column)}`, { bold: true }), rule, seg(fit(clean(right), column), { bold: true })]];
  if (diff.length === 0) return [...lines, [seg(" no difference", { color: "gray" })]];
  for (const d of diff) {
    const [mark, color] = MARKS[d.op];
    lines.push([seg(` ${mark}`, { color, bold: true }), seg(` ${clean(d.path)}`, { bold: true })]);
    const [before, after] = sides(d);
    const l = before === undefined ? [ABSENT] : valueRows(before, column);
    const r = after === undefined ? [ABSENT] : [...(d.op === "append" ? [`+${d.count} item${d.count === 1 ? "" : "s"}:`] : []), ...valueRows(after, column)];
    for (let i = 0; i < Math.max(l.length, r.length); i++) {
      lines.push([
        seg(` ${fit(l[i] ?? "", column)}`, { color: before === undefined ? "gray" : DIFF_COLOR.remove }),
        rule,
        seg(fit(r[i] ?? "", column), { color: after === undefined ? "gray" : d.op === "append" ? DIFF_COLOR.append : DIFF_COLOR.change }),
      ]);
    }
  }
  return lines;
}

const ABSENT = "(not there)";
const LIST_BEFORE = "(the list as it was)";

const MARKS: Record<DiffEntry["op"], [string, string]> = {
  add: ["+", DIFF_COLOR.add],
  remove: ["-", DIFF_COLOR.remove],
  change: ["~", DIFF_COLOR.change],
  append: ["+", DIFF_COLOR.append],
};

/** What each side holds at the path; an append shows the items added (the list before may be long). */
function sides(d: DiffEntry): [unknown, unknown] {
  switch (d.op) {
    case "add":
      return [undefined, d.value];
    case "remove":
      return [d.old, undefined];
    case "change":
      return [d.old, d.value];
    case "append":
      return [LIST_BEFORE, d.items];
  }
}

function valueRows(value: unknown, column: number): string[] {
  const text = value === LIST_BEFORE ? value : (JSON.stringify(value, null, 2) ?? "undefined");
  return text.split("\n").flatMap((line) => wrapWords(clean(line), column));
}
