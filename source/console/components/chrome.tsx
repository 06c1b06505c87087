import { RUN_STATUSES, type RunStatus } from "../../../engine/index.js";
import { useServices, useSnapshot, type Message } from "../context.js";
import { useAvailableKeys } from "../hooks/use-keys.js";
import { keyLabel, type Binding } from "../keymap.js";
import { bytes, clean, displayWidth, elideStart } from "../text.js";
import { ACCENT, MUTED, ORPHANED_LOOK, RUN_LOOK } from "../theme.js";
import { Lines, fitLine, lineWidth, padLine, seg, wrapLine, type Line, type Seg } from "./lines.js";

/** One line: where the console is attached, as whom, the interrupt badge and counts by status. */
export function Header({ width }: { width: number }) {
  const { storeLabel, actor, readOnly } = useServices();
  const snap = useSnapshot();
  const label = seg(clean(storeLabel), { color: ACCENT });
  const who = seg(`  ${actor}`, { color: MUTED });
  const line: Line = [seg(" pitwall ", { bold: true, inverse: true }), seg(" "), label, who];
  if (readOnly) line.push(seg("  RO", { bold: true, color: "yellow" }));
  const room = snap.room;
  if (room?.evicting) line.push(seg("  "), seg(" store evicts keys ", { bold: true, color: "black", bg: "red" }));
  if (room && room.state !== "ok") {
    const text = room.state === "full" ? " store full " : ` store ${bytes(room.freeBytes)} left `;
    line.push(seg("  "), seg(text, { bold: true, color: "black", bg: room.state === "full" ? "red" : "yellow" }));
  }
  const pending = snap.interrupts.length;
  if (pending > 0) line.push(seg("  "), seg(` ⚑ ${pending} pending `, { bold: true, color: "black", bg: "magenta" }));
  // Runs nothing runs any more are counted apart from the running ones, as a badge: it stays
  // when counts give way on a narrow terminal.
  const orphaned = snap.orphans.size;
  if (orphaned > 0) line.push(seg("  "), seg(` ${ORPHANED_LOOK.glyph} ${orphaned} orphaned `, { bold: true, color: "black", bg: ORPHANED_LOOK.color }));
  line.push(seg("  "));
  const words = width >= 120;
  const counts: { status: RunStatus; count: Seg }[] = [];
  for (const status of RUN_STATUSES) {
    const n = status === "running" ? Math.max(0, snap.counts.running - orphaned) : snap.counts[status];
    if (n === 0 && status !== "running" && status !== "paused") continue;
    const look = RUN_LOOK[status];
    const count = seg(words ? `${look.glyph} ${n} ${status}  ` : `${look.glyph}${n} `, { color: look.color, dim: n === 0 });
    counts.push({ status, count });
    line.push(count);
  }
  // A long store path gives way before the badges and counts do: its start is cut, its file name
  // kept; on a narrow terminal the actor goes too, and the path is cut further.
  let over = lineWidth(line) - width;
  if (over > 0) label.text = elideStart(label.text, Math.max(12, displayWidth(label.text) - over));
  over = lineWidth(line) - width;
  if (over > 0) {
    who.text = "";
    over = lineWidth(line) - width;
    if (over > 0) label.text = elideStart(label.text, Math.max(6, displayWidth(label.text) - over));
  }
  // Counts that still do not fit are left out whole (a cut one would read as another number):
  // zeros first, then those an incident needs least, so that failed runs stay longest.
  counts.sort((a, b) => Number(b.count.dim) - Number(a.count.dim) || GIVE_WAY.indexOf(a.status) - GIVE_WAY.indexOf(b.status));
  for (const { count } of counts) {
    if (lineWidth(line) <= width) break;
    line.splice(line.indexOf(count), 1);
  }
  return <Lines lines={[line]} width={width} />;
}

/** The order run counts give way in on a narrow header: what an on-call operator acts on goes last. */
const GIVE_WAY: readonly RunStatus[] = ["succeeded", "canceled", "queued", "running", "paused", "failed"];

const TONE: Record<Message["tone"], { glyph: string; color: string }> = {
  ok: { glyph: "✓", color: "green" },
  error: { glyph: "✗", color: "red" },
  info: { glyph: "·", color: MUTED },
  busy: { glyph: "⋯", color: "yellow" },
};

const MOVES = new Set(["down", "up", "pageDown", "pageUp", "top", "bottom"]);
const ALWAYS = new Set(["help", "quit"]);

/** How a binding's keys read in the footer: `1-5` for the tabs, else the first key. */
function footerKey(binding: Binding): string {
  if (binding.keys.length > 2 && binding.keys.every((k) => /^\d$/.test(k))) return `${binding.keys[0]}-${binding.keys[binding.keys.length - 1]}`;
  return keyLabel(binding.keys[0]!);
}

/** Rows the outcome of the last action may take, and the store's problem: wrapped, not cut at the screen's edge. */
const MESSAGE_ROWS = 3;
const PROBLEM_ROWS = 3;

/**
 * The footer's lines under the keys: the outcome of the last action, then what is wrong with the
 * store (not answering, gone) — both at once, each wrapped to a few rows; one empty row when there
 * is neither.
 */
export function statusLines(message: Message | undefined, problem: string | undefined, width: number): Line[] {
  const rows = (tone: Message["tone"], text: string, max: number, glyph = TONE[tone].glyph): Line[] => {
    const wrapped = wrapLine([seg(`${glyph} `, { color: TONE[tone].color, bold: true }), seg(text, { color: TONE[tone].color })], width);
    if (wrapped.length <= max) return wrapped;
    const kept = wrapped.slice(0, max);
    // A row cut to make room ends in fitLine's own `…`: one is enough.
    const last = kept[max - 1]!;
    kept[max - 1] = lineWidth(last) > width - 1 ? fitLine(last, width - 1) : [...last, seg("…", { color: TONE[tone].color })];
    return kept;
  };
  const lines = [...(message ? rows(message.tone, message.text, MESSAGE_ROWS) : []), ...(problem ? rows("error", problem, PROBLEM_ROWS, "⚠") : [])];
  return lines.length > 0 ? lines : [[]];
}

/** The keys that apply here (help and quit always at the right end), then `status` (see `statusLines`). */
export function Footer({ width, status }: { width: number; status: readonly Line[] }) {
  const { readOnly } = useServices();
  const keys = useAvailableKeys();
  const entry = (key: string, label: string): Line => [seg(key, { bold: true, color: ACCENT }), seg(` ${label}  `, { color: MUTED })];
  const entries: Line[] = readOnly ? [[seg(" RO ", { bold: true, inverse: true, color: "yellow" }), seg(" ")]] : [];
  if (keys.some((b) => MOVES.has(b.id))) entries.push(entry("j/k", "move"));
  for (const binding of keys) if (!MOVES.has(binding.id) && !ALWAYS.has(binding.id) && !binding.quiet) entries.push(entry(footerKey(binding), binding.label));
  const right: Line = keys.filter((b) => ALWAYS.has(b.id)).flatMap((b) => entry(footerKey(b), b.label));
  const keyLine = [...whole(entries, Math.max(0, width - lineWidth(right))), ...right];
  return <Lines lines={[padLine(keyLine, width), ...status]} width={width} />;
}

/** As many whole entries as fit in `room` columns, then `…` for the rest (`?` lists them all). */
function whole(entries: readonly Line[], room: number): Line {
  if (lineWidth(entries.flat()) <= room) return entries.flat();
  const more = seg("… ", { color: MUTED });
  const out: Line = [];
  for (const e of entries) {
    if (lineWidth(out) + lineWidth(e) + lineWidth([more]) > room) break;
    out.push(...e);
  }
  return fitLine([...out, more], room);
}
