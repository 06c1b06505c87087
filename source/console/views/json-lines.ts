import { seg, type Line } from "../components/lines.js";
import { clean, displayWidth, graphemes, isNarrow } from "../text.js";

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

/** A value shown whole: strings line by line, anything else as indented JSON; wrapped, cleaned. */
export function jsonLines(value: unknown, width: number): Line[] {
  const text = typeof value === "string" ? value : (JSON.stringify(value, null, 2) ?? "undefined");
  const max = Math.max(10, width - 2);
  return text
    .split(/\r?\n/)
    .flatMap((line) => wrap(clean(line, 100_000), max))
    .map((line) => [seg(` ${line}`)]);
}
