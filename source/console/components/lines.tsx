import { Box, Text } from "ink";
import { displayWidth, graphemes, isNarrow, truncate } from "../text.js";

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
 * The console's one way of breaking text into rows: a line too wide for `width` columns as
 * several rows, broken between words (a word longer than a row is split), each segment keeping
 * its style. Rows after the first start with `indent` (a hanging indent, so that they read as
 * the same entry); the spaces where a row breaks are dropped.
 */
export function wrapLine(line: Line, width: number, indent = "  "): Line[] {
  if (lineWidth(line) <= width) return [line];
  const hang = displayWidth(indent) < width / 2 ? indent : "";
  const text = line.map((s) => s.text).join("");
  return rowSpans(text, width, width - displayWidth(hang)).map(([from, to], i) => [...(i > 0 && hang ? [{ text: hang }] : []), ...sliceLine(line, from, to)]);
}

/** Prose in rows of at most `max` columns, broken between words (see `wrapLine`). */
export function wrapWords(text: string, max: number): string[] {
  return wrapLine([seg(text)], max, "").map((row) => row.map((s) => s.text).join(""));
}

/**
 * Where each row of `text` starts and ends: the first row `first` columns wide, the others
 * `rest`. Greedy and linear (a 100 KB value is one pass): leading spaces of the text are kept
 * (a JSON line's indentation), spaces at a break dropped, and a word wider than a row is split
 * between graphemes over rows of its own.
 */
function rowSpans(text: string, first: number, rest: number): Array<[number, number]> {
  const spans: Array<[number, number]> = [];
  let row: [number, number] | undefined;
  let used = 0;
  let gap = 0;
  const limit = () => (spans.length === 0 ? first : rest);
  const close = () => {
    if (row) spans.push(row);
    row = undefined;
    used = 0;
    gap = 0;
  };
  for (const match of text.matchAll(/\s+|\S+/g)) {
    const token = match[0];
    const at = match.index;
    const w = displayWidth(token);
    if (/^\s/.test(token)) {
      if (row) gap += w;
      else if (at === 0 && w < first) [row, used] = [[0, token.length], w];
      continue;
    }
    if (row && used + gap + w <= limit()) {
      row[1] = at + token.length;
      used += gap + w;
      gap = 0;
      continue;
    }
    if (row && (w <= rest || used + gap >= limit())) close();
    if (w <= limit() - used - gap) {
      row = row ? [row[0], at + token.length] : [at, at + token.length];
      used += gap + w;
      gap = 0;
      continue;
    }
    // Too wide for a row: split between graphemes, filling the row it starts on first.
    let from = at;
    let offset = at;
    if (row) used += gap;
    gap = 0;
    for (const piece of isNarrow(token) ? token : graphemes(token)) {
      const pw = displayWidth(piece);
      if (used + pw > limit() && (row || offset > from)) {
        spans.push(row ? [row[0], offset] : [from, offset]);
        row = undefined;
        used = 0;
        from = offset;
      }
      offset += piece.length;
      used += pw;
    }
    row = [row ? row[0] : from, offset];
  }
  close();
  return spans.length > 0 ? spans : [[0, 0]];
}

/** The part of a line between two offsets of its text, each segment keeping its style. */
function sliceLine(line: Line, from: number, to: number): Line {
  const out: Line = [];
  let at = 0;
  for (const s of line) {
    const end = at + s.text.length;
    const text = s.text.slice(Math.max(0, from - at), Math.max(0, to - at));
    if (text && end > from && at < to) out.push({ ...s, text });
    at = end;
  }
  return out;
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
          {line.length === 0 ? " " : merged(fitLine(line, width)).map(styled).join("")}
        </Text>
      ))}
    </Box>
  );
}

/**
 * Neighbouring segments of one style as one: Ink reads every frame's text back character by
 * character, escape codes included, so fewer codes are a cheaper frame.
 */
function merged(line: Line): Line {
  const out: Seg[] = [];
  for (const s of line) {
    const last = out[out.length - 1];
    if (last && last.color === s.color && last.bg === s.bg && !last.bold === !s.bold && !last.dim === !s.dim && !last.inverse === !s.inverse) out[out.length - 1] = { ...last, text: last.text + s.text };
    else out.push(s);
  }
  return out;
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
