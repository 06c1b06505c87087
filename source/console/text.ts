import stringWidth from "string-width";
import stripAnsi from "strip-ansi";

export { span } from "../text/plain.js";

// C0 and C1 control characters (tab and newline are handled before this runs), DEL, and the
// bidirectional overrides that can make text display in an order other than the one it has.
const CONTROL = /[\u0000-\u001f\u007f-\u009f\u200e\u200f\u202a-\u202e\u2066-\u2069]/g;
const segmenter = new Intl.Segmenter();
/** Intl.Segmenter slows down more than linearly with the length of what it segments: long text goes through in pieces. */
const PIECE = 512;

/**
 * Text from a run (state values, event payloads, questions) made safe to draw: escape
 * sequences removed, remaining control characters shown as symbols, on one line. An LLM's
 * output must never move the operator's cursor, clear the screen or retitle the terminal.
 */
export function clean(text: string, maxChars = 4096): string {
  // A cut is marked: a value cut short must not read as the whole of it.
  const cut = text.length > maxChars ? `${text.slice(0, maxChars)}…` : text;
  return stripAnsi(cut)
    .replace(/\t/g, "  ")
    .replace(/\r?\n/g, "↵")
    .replace(CONTROL, (c) => (c === "\u001b" ? "␛" : c.charCodeAt(0) < 0x20 ? String.fromCharCode(0x2400 + c.charCodeAt(0)) : "·"));
}

/**
 * Typed or pasted text as a text field takes it: escape sequences and control characters are
 * left out rather than shown as symbols — a field holds only what can be typed.
 */
export function printable(text: string): string {
  return stripAnsi(text).replace(/\r?\n|\t/g, " ").replace(CONTROL, "");
}

/** Display width in terminal columns (CJK and emoji count as two). */
export function displayWidth(text: string): number {
  if (isNarrow(text)) return text.length;
  let width = 0;
  for (const piece of pieces(text)) width += stringWidth(piece);
  return width;
}

/**
 * The grapheme clusters of `text` (what a terminal draws in one or two cells), read piece by
 * piece so that a 100 KB state value takes milliseconds, not seconds.
 */
export function* graphemes(text: string): Generator<string> {
  for (const piece of pieces(text)) for (const { segment } of segmenter.segment(piece)) yield segment;
}

/** Cuts before a character that cannot continue the previous cluster (not a mark, joiner or low surrogate). */
function* pieces(text: string): Generator<string> {
  let start = 0;
  while (text.length - start > PIECE) {
    let cut = start + PIECE;
    while (cut < text.length && continuesCluster(text, cut)) cut++;
    yield text.slice(start, cut);
    start = cut;
  }
  yield text.slice(start);
}

function continuesCluster(text: string, at: number): boolean {
  const c = text.charCodeAt(at);
  return (
    (c >= 0xdc00 && c <= 0xdfff) ||
    (c >= 0x0300 && c <= 0x036f) ||
    (c >= 0x1ab0 && c <= 0x1aff) ||
    (c >= 0x20d0 && c <= 0x20ff) ||
    (c >= 0xfe00 && c <= 0xfe0f) ||
    (c >= 0xfe20 && c <= 0xfe2f) ||
    c === 0x200d ||
    text.charCodeAt(at - 1) === 0x200d
  );
}

/** Cuts text to at most `max` columns, ending with `…` when something was cut. */
export function truncate(text: string, max: number): string {
  if (max <= 0) return "";
  if (isNarrow(text)) return text.length <= max ? text : `${text.slice(0, max - 1)}…`;
  if (displayWidth(text) <= max) return text;
  let out = "";
  let used = 0;
  for (const segment of graphemes(text)) {
    const w = displayWidth(segment);
    if (used + w > max - 1) break;
    out += segment;
    used += w;
  }
  return `${out}…`;
}

/** Exactly `size` columns: cut with `…` or padded with spaces (on the right, or left if `align` is "right"). */
export function fit(text: string, size: number, align: "left" | "right" = "left"): string {
  const cut = truncate(text, size);
  const pad = " ".repeat(Math.max(0, size - displayWidth(cut)));
  return align === "left" ? cut + pad : pad + cut;
}

/** A JSON value as one clean line (strings unquoted when `bare`). */
export function inline(value: unknown, bare = false, maxChars = 512): string {
  if (bare && typeof value === "string") return clean(value, maxChars);
  let text: string | undefined;
  try {
    text = JSON.stringify(value);
  } catch {
    text = String(value);
  }
  return clean(text ?? "undefined", maxChars);
}

/** Printable ASCII only: one column per character. */
export function isNarrow(text: string): boolean {
  return /^[\x20-\x7e]*$/.test(text);
}

// ---------------------------------------------------------------- numbers and times

/** Time since `from` in one unit (12s, 3m, 5h, 2d): fits a four-column age. */
export function ago(from: number, now: number): string {
  const s = Math.max(0, Math.floor((now - from) / 1000));
  if (s < 60) return `${s}s`;
  const m = Math.floor(s / 60);
  if (m < 60) return `${m}m`;
  const h = Math.floor(m / 60);
  return h < 24 ? `${h}h` : `${Math.floor(h / 24)}d`;
}


export function bytes(n: number): string {
  if (n < 1024) return `${n}B`;
  if (n < 1024 * 1024) return `${(n / 1024).toFixed(1)}K`;
  return `${(n / 1024 / 1024).toFixed(1)}M`;
}

export function clock(at: number): string {
  const d = new Date(at);
  const two = (n: number) => String(n).padStart(2, "0");
  return `${two(d.getHours())}:${two(d.getMinutes())}:${two(d.getSeconds())}`;
}

/** `text` in at most `max` columns, cut at its start: "…/runs/s2.db" keeps what tells stores apart. */
export function elideStart(text: string, max: number): string {
  if (displayWidth(text) <= max) return text;
  const chars = [...text];
  let kept = "";
  for (let i = chars.length - 1; i >= 0 && displayWidth(chars[i] + kept) <= max - 1; i--) kept = chars[i] + kept;
  return `…${kept}`;
}
