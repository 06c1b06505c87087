import type { DiffEntry } from "../../../engine/index.js";
import { seg, type Line } from "../components/lines.js";
import { clean, inline } from "../text.js";
import { DIFF_COLOR } from "../theme.js";

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
      case "change":
        return [
          seg(" ~", { color: DIFF_COLOR.change, bold: true }),
          path,
          seg(` ${inline(d.old)}`, { color: DIFF_COLOR.remove }),
          seg(" → "),
          seg(inline(d.value), { color: DIFF_COLOR.change }),
        ];
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
