import { truncate, displayWidth, graphemes } from "../text.js";
import type { Layering, Segment } from "./layers.js";

/** What a stretch of a drawn row shows: a node's label, a loop note of a node, an edge, an edge's label. */
export type Part = "node" | "loop" | "edge" | "label" | "space";

export interface Run {
  text: string;
  part: Part;
  node?: string;
}

export interface NodeLabel {
  text: string;
  /** Drawn after the label in the loop colour, e.g. ` ↺ NO→work`. */
  loop?: string;
}

export interface Drawing {
  rows: Run[][];
  /** Row of each real node, for scrolling to a selected one. */
  rowOf: Map<string, number>;
  /** Middle column of each real node, for scrolling sideways to a selected one. */
  columnOf: Map<string, number>;
  /** Columns drawn: more than the screen's when a layer's labels need them. */
  width: number;
  /** The rows seen through a window `size` columns wide from column `from`. */
  window(from: number, size: number): Run[][];
}

/** A graph is drawn at most this many screens wide; beyond, labels are cut instead. */
const MAX_SCREENS = 4;

interface Cell {
  ch: string;
  part: Part;
  node?: string;
  /** Line directions meeting here (up, down, left, right), for box-drawing junctions. */
  mask: number;
}

const UP = 1;
const DOWN = 2;
const LEFT = 4;
const RIGHT = 8;
const JUNCTION: Record<number, string> = {
  [UP]: "│",
  [DOWN]: "│",
  [UP | DOWN]: "│",
  [LEFT]: "─",
  [RIGHT]: "─",
  [LEFT | RIGHT]: "─",
  [DOWN | RIGHT]: "╭",
  [DOWN | LEFT]: "╮",
  [UP | RIGHT]: "╰",
  [UP | LEFT]: "╯",
  [UP | DOWN | RIGHT]: "├",
  [UP | DOWN | LEFT]: "┤",
  [LEFT | RIGHT | DOWN]: "┬",
  [LEFT | RIGHT | UP]: "┴",
  [UP | DOWN | LEFT | RIGHT]: "┼",
};

/**
 * Draws a layered graph top-down in `width` columns: one row of labels per layer, and between
 * two layers the edges as box-drawing lines, each group of connected edges on its own track so
 * that fan-out and fan-in read as one bus, with route labels just above their targets.
 */
export function drawLayers(layering: Layering, labels: Map<string, NodeLabel>, screen: number): Drawing {
  const textOf = (n: string) => {
    const l = labels.get(n);
    return l ? l.text + (l.loop ?? "") : n;
  };
  // The widest layer decides the gap between nodes; labels are cut only if even a small gap is not enough.
  const need = (layer: string[], g: number) => layer.reduce((a, n) => a + (layering.isDummy(n) ? 1 : displayWidth(textOf(n))), 0) + g * (layer.length - 1);
  // A layer too wide for the screen is drawn wider (the view scrolls sideways to the selected
  // node) rather than cut into labels that no longer tell nodes apart (`…0`, `…1`).
  const width = Math.min(screen * MAX_SCREENS, Math.max(screen, ...layering.layers.map((l) => need(l, 2))));
  const gap = [3, 2, 1].find((g) => layering.layers.every((l) => need(l, g) <= width)) ?? 1;
  const widths = new Map<string, number>();
  for (const layer of layering.layers) {
    const real = layer.filter((n) => !layering.isDummy(n));
    const room = width - gap * (layer.length - 1) - (layer.length - real.length);
    // A layer that fits keeps its labels whole; one that does not shares the room evenly.
    const cap = need(layer, gap) <= width ? Infinity : Math.max(4, Math.floor(room / Math.max(1, real.length)));
    for (const n of layer) widths.set(n, layering.isDummy(n) ? 1 : Math.min(displayWidth(textOf(n)), cap));
  }
  const x = placeColumns(layering, widths, width, gap);
  const center = (n: string) => x.get(n)! + Math.floor((widths.get(n)! - 1) / 2);

  const cells: Cell[][] = [];
  const rowOf = new Map<string, number>();
  const columnOf = new Map<string, number>();
  layering.layers.forEach((layer, i) => {
    const row = blank(width);
    for (const n of layer) {
      if (layering.isDummy(n)) {
        put(row, x.get(n)!, { ch: "│", part: "edge", mask: UP | DOWN });
        continue;
      }
      rowOf.set(n, cells.length);
      columnOf.set(n, center(n));
      const label = labels.get(n) ?? { text: n };
      const w = widths.get(n)!;
      const main = cutMiddle(label.text, w);
      const loop = label.loop ? truncate(label.loop, Math.max(0, w - displayWidth(main))) : "";
      write(row, x.get(n)!, main, "node", n);
      if (loop) write(row, x.get(n)! + displayWidth(main), loop, "loop", n);
    }
    cells.push(row);
    if (i < layering.layers.length - 1) {
      const between = layering.segments.filter((s) => layer.includes(s.from));
      for (const r of channel(between, center, width)) cells.push(r);
    }
  });
  return { rows: cells.map(toRuns), rowOf, columnOf, width, window: (from, size) => cells.map((row) => toRuns(windowOf(row, from, size))) };
}

/** Columns `from` to `from + size` of a row; a wide character cut by either edge becomes a space. */
function windowOf(row: Cell[], from: number, size: number): Cell[] {
  const part = row.slice(from, from + size).map((cell) => ({ ...cell }));
  const first = part[0];
  if (first && first.ch === "") Object.assign(first, { ch: " ", part: "space" });
  const last = part[part.length - 1];
  if (last && displayWidth(last.ch) > 1) Object.assign(last, { ch: " ", part: "space" });
  return part;
}

/** The rows between two layers. */
function channel(segments: Segment[], center: (n: string) => number, width: number): Cell[][] {
  const spans = segments.map((s) => ({ s, x1: center(s.from), x2: center(s.to) }));
  // Edges sharing a source or a target form one group drawn on one horizontal track.
  const group = spans.map((_, i) => i);
  const find = (i: number): number => (group[i] === i ? i : (group[i] = find(group[i]!)));
  spans.forEach((a, i) =>
    spans.forEach((b, j) => {
      if (j > i && (a.s.from === b.s.from || a.s.to === b.s.to)) group[find(i)] = find(j);
    }),
  );
  const groups = new Map<number, { left: number; right: number; members: number[] }>();
  spans.forEach((sp, i) => {
    if (sp.x1 === sp.x2) return;
    const g = groups.get(find(i)) ?? { left: Infinity, right: -Infinity, members: [] };
    g.left = Math.min(g.left, sp.x1, sp.x2);
    g.right = Math.max(g.right, sp.x1, sp.x2);
    g.members.push(i);
    groups.set(find(i), g);
  });
  const trackEnds: number[] = [];
  const track = new Map<number, number>();
  for (const g of [...groups.values()].sort((a, b) => a.left - b.left)) {
    let t = trackEnds.findIndex((end) => end + 1 < g.left);
    if (t < 0) t = trackEnds.push(g.right) - 1;
    trackEnds[t] = g.right;
    for (const m of g.members) track.set(m, t);
  }
  const labelled = spans.some((sp) => sp.s.label);
  const height = Math.max(1, trackEnds.length) + (labelled ? 1 : 0);
  const rows = Array.from({ length: height }, () => blank(width));
  const line = (r: number, c: number, mask: number) => {
    const cell = rows[r]?.[c];
    if (cell) {
      cell.mask |= mask;
      cell.part = "edge";
    }
  };
  spans.forEach((sp, i) => {
    const t = track.get(i);
    if (t === undefined) {
      for (let r = 0; r < height; r++) line(r, sp.x1, UP | DOWN);
      return;
    }
    const toward = sp.x2 > sp.x1 ? RIGHT : LEFT;
    const back = sp.x2 > sp.x1 ? LEFT : RIGHT;
    for (let r = 0; r < t; r++) line(r, sp.x1, UP | DOWN);
    line(t, sp.x1, UP | toward);
    for (let c = Math.min(sp.x1, sp.x2) + 1; c < Math.max(sp.x1, sp.x2); c++) line(t, c, LEFT | RIGHT);
    line(t, sp.x2, back | DOWN);
    for (let r = t + 1; r < height; r++) line(r, sp.x2, UP | DOWN);
  });
  for (const row of rows) for (const cell of row) if (cell.mask) cell.ch = JUNCTION[cell.mask] ?? "┼";
  if (labelled) placeLabels(rows[height - 1]!, spans);
  return rows;
}

/** Route labels centred on their edge just above the target, cut so that neighbours stay readable. */
function placeLabels(row: Cell[], spans: { s: Segment; x1: number; x2: number }[]): void {
  const byTarget = new Map<number, string[]>();
  for (const sp of spans) {
    if (!byTarget.has(sp.x2)) byTarget.set(sp.x2, []);
    if (sp.s.label) byTarget.get(sp.x2)!.push(sp.s.label);
  }
  const columns = [...byTarget.keys()].sort((a, b) => a - b);
  columns.forEach((x, i) => {
    const text = byTarget.get(x)!.join(",");
    if (!text) return;
    const left = i > 0 ? Math.floor((columns[i - 1]! + x) / 2) + 1 : 0;
    const right = i < columns.length - 1 ? Math.ceil((x + columns[i + 1]!) / 2) - 1 : row.length - 1;
    const room = right - left + 1;
    const shown = truncate(text, room);
    const w = displayWidth(shown);
    const start = Math.max(left, Math.min(x - Math.floor((w - 1) / 2), right - w + 1));
    write(row, start, shown, "label");
  });
}

/**
 * Columns of every node: each layer is placed so that nodes sit as close as possible to the
 * middle of their neighbours in the layer above (then below, then above again), keeping their
 * order and a gap between them: an isotonic fit, which centres a fan-out under its source.
 */
function placeColumns(layering: Layering, widths: Map<string, number>, width: number, gap: number): Map<string, number> {
  const x = new Map<string, number>();
  const preds = new Map<string, string[]>();
  const succs = new Map<string, string[]>();
  for (const s of layering.segments) {
    preds.set(s.to, [...(preds.get(s.to) ?? []), s.from]);
    succs.set(s.from, [...(succs.get(s.from) ?? []), s.to]);
  }
  const half = (n: string) => Math.floor((widths.get(n)! - 1) / 2);
  const mid = (n: string) => x.get(n)! + half(n);
  const place = (layer: string[], want: (n: string) => number | undefined) => {
    let offset = 0;
    const offsets = layer.map((n) => {
      const o = offset;
      offset += widths.get(n)! + gap;
      return o;
    });
    const targets = layer.map((n, i) => Math.round(want(n) ?? width / 2) - half(n) - offsets[i]!);
    const fitted = isotonic(targets);
    const lastEnd = offsets[layer.length - 1]! + widths.get(layer[layer.length - 1]!)!;
    layer.forEach((n, i) => x.set(n, Math.round(Math.max(0, Math.min(fitted[i]!, width - lastEnd)) + offsets[i]!)));
  };
  const average = (ns: string[] | undefined) => (ns && ns.length > 0 ? ns.reduce((a, n) => a + mid(n), 0) / ns.length : undefined);
  const layers = layering.layers.filter((l) => l.length > 0);
  for (const layer of layers) place(layer, () => undefined);
  for (let i = 1; i < layers.length; i++) place(layers[i]!, (n) => average(preds.get(n)) ?? mid(n));
  for (let i = layers.length - 2; i >= 0; i--) place(layers[i]!, (n) => average(succs.get(n)) ?? mid(n));
  for (let i = 1; i < layers.length; i++) place(layers[i]!, (n) => average(preds.get(n)) ?? mid(n));
  straighten(layers, x, widths, preds, succs, mid, width);
  return x;
}

/**
 * Rounding leaves some edges one or two columns askew (a jog of `┴┬`). Where a node can move
 * that far without touching its neighbours, it moves so that its edge runs straight down.
 */
function straighten(
  layers: string[][],
  x: Map<string, number>,
  widths: Map<string, number>,
  preds: Map<string, string[]>,
  succs: Map<string, string[]>,
  mid: (n: string) => number,
  width: number,
): void {
  const fits = (layer: string[], i: number, to: number) => {
    const n = layer[i]!;
    const left = i > 0 ? x.get(layer[i - 1]!)! + widths.get(layer[i - 1]!)! + 1 : 0;
    const right = i < layer.length - 1 ? x.get(layer[i + 1]!)! - 1 : width;
    return to >= left && to + widths.get(n)! <= right;
  };
  const align = (layer: string[], i: number, towards: string) => {
    const delta = mid(towards) - mid(layer[i]!);
    if (delta !== 0 && Math.abs(delta) <= 2 && fits(layer, i, x.get(layer[i]!)! + delta)) x.set(layer[i]!, x.get(layer[i]!)! + delta);
  };
  // Top-down, each node lines up with its nearest neighbour above (or below, for a first node).
  for (const layer of layers) {
    layer.forEach((n, i) => {
      const candidates = (preds.get(n) ?? []).length > 0 ? preds.get(n)! : (succs.get(n) ?? []);
      const nearest = [...candidates].sort((a, b) => Math.abs(mid(a) - mid(n)) - Math.abs(mid(b) - mid(n)))[0];
      if (nearest) align(layer, i, nearest);
    });
  }
}

/** Pool-adjacent-violators: the non-decreasing sequence closest (least squares) to `values`. */
function isotonic(values: number[]): number[] {
  const blocks: { sum: number; count: number }[] = [];
  for (const v of values) {
    blocks.push({ sum: v, count: 1 });
    while (blocks.length > 1) {
      const b = blocks[blocks.length - 1]!;
      const a = blocks[blocks.length - 2]!;
      if (a.sum / a.count <= b.sum / b.count) break;
      blocks.splice(blocks.length - 2, 2, { sum: a.sum + b.sum, count: a.count + b.count });
    }
  }
  return blocks.flatMap((b) => Array<number>(b.count).fill(b.sum / b.count));
}

/** Node names often differ at the end (`researcher-1`, `researcher-2`): cut them in the middle. */
function cutMiddle(text: string, max: number): string {
  if (displayWidth(text) <= max) return text;
  const chars = [...text];
  const tail = Math.floor((max - 1) / 2);
  let head = chars.slice(0, max - 1 - tail).join("");
  while (displayWidth(head) + 1 + tail > max && head.length > 0) head = [...head].slice(0, -1).join("");
  return `${head}…${truncateStart(chars.slice(-tail).join(""), tail)}`;
}

function truncateStart(text: string, max: number): string {
  let chars = [...text];
  while (displayWidth(chars.join("")) > max) chars = chars.slice(1);
  return chars.join("");
}

function blank(width: number): Cell[] {
  return Array.from({ length: width }, () => ({ ch: " ", part: "space" as Part, mask: 0 }));
}

function put(row: Cell[], at: number, cell: Cell): void {
  if (at >= 0 && at < row.length) row[at] = cell;
}

/** Writes text from column `at`; a wide character takes its cell and blanks the next one. */
function write(row: Cell[], at: number, text: string, part: Part, node?: string): void {
  let c = at;
  for (const segment of graphemes(text)) {
    const w = displayWidth(segment);
    if (c + w > row.length) break;
    row[c] = { ch: segment, part, mask: 0, ...(node ? { node } : {}) };
    for (let k = 1; k < w; k++) row[c + k] = { ch: "", part, mask: 0, ...(node ? { node } : {}) };
    c += Math.max(1, w);
  }
}

function toRuns(row: Cell[]): Run[] {
  const runs: Run[] = [];
  for (const cell of row) {
    const last = runs[runs.length - 1];
    if (last && last.part === cell.part && last.node === cell.node) last.text += cell.ch;
    else runs.push({ text: cell.ch, part: cell.part, ...(cell.node ? { node: cell.node } : {}) });
  }
  const tail = runs[runs.length - 1];
  if (tail?.part === "space") runs.pop();
  return runs;
}
