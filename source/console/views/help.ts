import { seg, type Line } from "../components/lines.js";
import type { ViewEntry } from "../context.js";
import { keyLabel, type Binding, type Group } from "../keymap.js";
import { ACCENT, MUTED } from "../theme.js";

/** Columns before a key's help text: a help too long for its row goes on under itself. */
const KEY_COLUMN = 18;

/** The help page, generated from the key table the console dispatches with. */
export function helpPage(bindings: readonly Binding[]): Extract<ViewEntry, { kind: "text" }> {
  return { kind: "text", title: "Keys", lines: helpLines(bindings), indent: KEY_COLUMN };
}

function helpLines(bindings: readonly Binding[]): Line[] {
  const groups = new Map<Group, Binding[]>();
  for (const b of bindings) groups.set(b.group, [...(groups.get(b.group) ?? []), b]);
  const lines: Line[] = [];
  for (const [group, entries] of groups) {
    if (lines.length > 0) lines.push([]);
    lines.push([seg(group, { bold: true })]);
    for (const b of entries) {
      const keys = b.keys.map(keyLabel).join(" ");
      lines.push([seg(`  ${keys.padEnd(KEY_COLUMN - 2)}`, { color: ACCENT, bold: true }), seg(b.help), ...(b.writes ? [seg("  (writes)", { color: MUTED })] : [])]);
    }
  }
  return lines;
}
