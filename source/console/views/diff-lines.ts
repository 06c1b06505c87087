import type { DiffEntry } from "../../../engine/index.js";
import { seg, type Line } from "../components/lines.js";
import { clean, inline } from "../text.js";
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
