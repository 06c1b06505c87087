import { seg, wrapLine, type Line } from "../components/lines.js";
import { clean } from "../text.js";

/** Characters of one line shown at most (a 3 MB string would be some 40,000 rows). */
const MAX_LINE = 100_000;

/**
 * A value shown whole: strings line by line, anything else as indented JSON; wrapped, cleaned.
 * A line longer than can be shown ends in `…` and a note says how much of it there is.
 */
export function jsonLines(value: unknown, width: number): Line[] {
  const text = typeof value === "string" ? value : (JSON.stringify(value, null, 2) ?? "undefined");
  const max = Math.max(10, width - 2);
  // A JSON line goes on indented under its key; a line of text, under its own start.
  const hang = typeof value === "string" ? "" : "  ";
  return text.split(/\r?\n/).flatMap((line) => [
    ...wrapLine([seg(clean(line, MAX_LINE))], max, `${/^ */.exec(line)![0]}${hang}`).map((row): Line => [seg(" "), ...row]),
    ...(line.length > MAX_LINE ? [[seg(` (the line above is cut at ${MAX_LINE.toLocaleString("en")} of its ${line.length.toLocaleString("en")} characters; pitwall state prints it whole)`, { color: "yellow" })]] : []),
  ]);
}
