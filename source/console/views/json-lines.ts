import wrapAnsi from "wrap-ansi";
import { seg, type Line } from "../components/lines.js";
import { clean, displayWidth, graphemes, isNarrow } from "../text.js";

/** Clean prose in lines of at most `max` columns, broken between words (a word too long for a line is split). */
export function wrapWords(text: string, max: number): string[] {
  return wrapAnsi(text, Math.max(1, max), { hard: true, trim: true }).split("\n");
}

/** Splits clean text into pieces of at most `max` columns. */
export function wrap(text: string, max: number): string[] {
  if (displayWidth(text) <= max) return [text];
  if (isNarrow(text)) return Array.from({ length: Math.ceil(text.length / max) }, (_, i) => text.slice(i * max, (i + 1) * max));
  const out: string[] = [];
  let current = "";
  let used = 0;
  for (const segment of graphemes(text)) {
    const w = displayWidth(segment);
    if (used + w > max && current) {
      out.push(current);
      current = "";
      used = 0;
    }
    current += segment;
    used += w;
  }
  if (current) out.push(current);
  return out;
}

/** Characters of one line shown at most (a 3 MB string would be some 40,000 rows). */
const MAX_LINE = 100_000;

/**
 * A value shown whole: strings line by line, anything else as indented JSON; wrapped, cleaned.
 * A line longer than can be shown ends in `…` and a note says how much of it there is.
 */
export function jsonLines(value: unknown, width: number): Line[] {
  const text = typeof value === "string" ? value : (JSON.stringify(value, null, 2) ?? "undefined");
  const max = Math.max(10, width - 2);
  return text.split(/\r?\n/).flatMap((line) => [
    ...wrap(clean(line, MAX_LINE), max).map((part): Line => [seg(` ${part}`)]),
    ...(line.length > MAX_LINE ? [[seg(` (the line above is cut at ${MAX_LINE.toLocaleString("en")} of its ${line.length.toLocaleString("en")} characters; pitwall state prints it whole)`, { color: "yellow" })]] : []),
  ]);
}
