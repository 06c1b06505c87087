import { Box, Text } from "ink";
import { truncate, displayWidth } from "../text.js";

/** A run of text drawn in one style. Text in a segment must already be clean (see `clean`). */
export interface Seg {
  text: string;
  color?: string;
  bg?: string;
  bold?: boolean;
  dim?: boolean;
  inverse?: boolean;
}

export type Line = Seg[];

export const seg = (text: string, style: Omit<Seg, "text"> = {}): Seg => ({ text, ...style });

/** Cuts a line's segments so that together they take at most `max` columns. */
export function fitLine(line: Line, max: number): Line {
  const out: Line = [];
  let used = 0;
  for (const s of line) {
    if (used >= max) break;
    const w = displayWidth(s.text);
    if (used + w <= max) {
      out.push(s);
      used += w;
    } else {
      out.push({ ...s, text: truncate(s.text, max - used) });
      break;
    }
  }
  return out;
}

/**
 * A line too wide for `width` columns as several rows, each segment keeping its style: a long
 * value in a diff or a payload is read whole instead of ending in "…". Rows after the first
 * start with `indent`.
 */
export function wrapLine(line: Line, width: number, indent = "  "): Line[] {
  if (lineWidth(line) <= width || width <= indent.length + 1) return [line];
  const rows: Line[] = [];
  let row: Line = [];
  let used = 0;
  for (const s of line) {
    let text = "";
    for (const char of s.text) {
      const w = displayWidth(char);
      if (used + w > width) {
        if (text) row.push({ ...s, text });
        rows.push(row);
        row = [{ text: indent }];
        used = indent.length;
        text = "";
      }
      text += char;
      used += w;
    }
    if (text) row.push({ ...s, text });
  }
  rows.push(row);
  return rows;
}

export function lineWidth(line: Line): number {
  return line.reduce((n, s) => n + displayWidth(s.text), 0);
}

/** Pads a line with spaces to exactly `size` columns (after cutting it to fit). */
export function padLine(line: Line, size: number, style: Omit<Seg, "text"> = {}): Line {
  const fitted = fitLine(line, size);
  const rest = size - lineWidth(fitted);
  return rest > 0 ? [...fitted, { text: " ".repeat(rest), ...style }] : fitted;
}

/** The selected row of a list: the whole width in reverse video. */
export function highlight(line: Line, size: number): Line {
  return padLine(line, size).map((s) => ({ ...s, inverse: true }));
}

/**
 * Draws pre-built lines, one terminal row each, never more than `height` rows and never wider
 * than `width` columns: the console controls its frame size exactly instead of letting Ink wrap.
 * Each row is one Ink text node carrying its own SGR styles: a screen of a few dozen nodes
 * instead of hundreds keeps rendering (and an idle console's once-a-second redraw) cheap.
 */
export function Lines({ lines, width, height }: { lines: readonly Line[]; width: number; height?: number }) {
  const shown = height === undefined ? lines : lines.slice(0, height);
  return (
    <Box flexDirection="column" width={width} flexShrink={0}>
      {shown.map((line, i) => (
        <Text key={i} wrap="truncate">
          {line.length === 0 ? " " : fitLine(line, width).map(styled).join("")}
        </Text>
      ))}
    </Box>
  );
}

const FG: Record<string, number> = { black: 30, red: 31, green: 32, yellow: 33, blue: 34, magenta: 35, cyan: 36, white: 37, gray: 90, grey: 90, blackBright: 90 };

/** Whether to style at all (a terminal, or FORCE_COLOR), and whether with colours (not NO_COLOR). */
const STYLE = (() => {
  const env = process.env;
  const forced = env.FORCE_COLOR !== undefined && env.FORCE_COLOR !== "0" && env.FORCE_COLOR !== "false";
  const on = forced || (process.stdout.isTTY === true && env.TERM !== "dumb");
  return { on, colour: on && (forced || env.NO_COLOR === undefined || env.NO_COLOR === "") };
})();

function styled(s: Seg): string {
  if (!STYLE.on) return s.text;
  const codes: number[] = [];
  if (s.bold) codes.push(1);
  if (s.dim) codes.push(2);
  if (s.inverse) codes.push(7);
  if (STYLE.colour && s.color && FG[s.color]) codes.push(FG[s.color]!);
  if (STYLE.colour && s.bg && FG[s.bg]) codes.push(FG[s.bg]! + 10);
  return codes.length === 0 ? s.text : `\u001b[${codes.join(";")}m${s.text}\u001b[0m`;
}
