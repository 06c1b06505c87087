import { END, edgesOf, type WorkflowDefinition } from "../../../engine/index.js";

/** An edge of the drawn graph; `back` edges close a loop and are drawn as annotations. */
export interface GraphEdge {
  from: string;
  to: string;
  label: string | null;
  back: boolean;
}

/** A piece of a forward edge between two adjacent layers; long edges pass through dummies. */
export interface Segment {
  from: string;
  to: string;
  label: string | null;
}

export interface Layering {
  /** Real node names, END included when some edge reaches it. */
  nodes: string[];
  edges: GraphEdge[];
  /** Node (or dummy) names per layer, in drawing order. */
  layers: string[][];
  segments: Segment[];
  isDummy(name: string): boolean;
}

const DUMMY = "\u0000";

/** The edges of a workflow, one per source and target (labels of parallel routes joined). */
export function graphEdges(definition: WorkflowDefinition): GraphEdge[] {
  const merged = new Map<string, GraphEdge>();
  for (const [name, node] of Object.entries(definition.nodes)) {
    for (const edge of edgesOf(node)) {
      const label = edge.label === "default" ? "else" : edge.label;
      const key = `${name}\u0001${edge.target}`;
      const existing = merged.get(key);
      if (existing) existing.label = [existing.label, label].filter(Boolean).join("/") || null;
      else merged.set(key, { from: name, to: edge.target, label, back: false });
    }
  }
  return [...merged.values()];
}

/**
 * Layers by longest path from the start node. A depth-first walk from the start marks the
 * edges that go back to a node still on the walk's path: those close loops and are left out
 * of the layering, so loops read top to bottom with an annotation instead of a tangle.
 */
export function layerGraph(definition: WorkflowDefinition): Layering {
  const edges = graphEdges(definition);
  const nodes = Object.keys(definition.nodes);
  if (edges.some((e) => e.to === END) && !nodes.includes(END)) nodes.push(END);
  const out = new Map<string, GraphEdge[]>(nodes.map((n) => [n, []]));
  for (const e of edges) out.get(e.from)?.push(e);

  const state = new Map<string, "open" | "done">();
  const finished: string[] = [];
  const walk = (root: string) => {
    const stack: { node: string; next: number }[] = [{ node: root, next: 0 }];
    state.set(root, "open");
    while (stack.length > 0) {
      const top = stack[stack.length - 1]!;
      const list = out.get(top.node) ?? [];
      if (top.next < list.length) {
        const edge = list[top.next++]!;
        const s = state.get(edge.to);
        if (s === "open") edge.back = true;
        else if (s === undefined && out.has(edge.to)) {
          state.set(edge.to, "open");
          stack.push({ node: edge.to, next: 0 });
        }
      } else {
        state.set(top.node, "done");
        finished.push(top.node);
        stack.pop();
      }
    }
  };
  if (out.has(definition.start)) walk(definition.start);
  for (const n of nodes) if (!state.has(n)) walk(n);

  // Reverse finishing order of a depth-first walk is a topological order of the forward edges.
  const layer = new Map<string, number>(nodes.map((n) => [n, 0]));
  for (const n of [...finished].reverse()) {
    for (const e of out.get(n) ?? []) if (!e.back) layer.set(e.to, Math.max(layer.get(e.to)!, layer.get(n)! + 1));
  }

  const depth = Math.max(0, ...layer.values());
  const layers: string[][] = Array.from({ length: depth + 1 }, () => []);
  const rank = new Map(bfsOrder(definition.start, out).map((n, i) => [n, i]));
  for (const n of [...nodes].sort((a, b) => (rank.get(a) ?? 1e9) - (rank.get(b) ?? 1e9))) layers[layer.get(n)!]!.push(n);

  const segments: Segment[] = [];
  let dummies = 0;
  for (const e of edges) {
    if (e.back) continue;
    let from = e.from;
    let label = e.label;
    for (let l = layer.get(e.from)! + 1; l < layer.get(e.to)!; l++) {
      const dummy = `${DUMMY}${dummies++}`;
      layers[l]!.push(dummy);
      segments.push({ from, to: dummy, label });
      from = dummy;
      label = null;
    }
    segments.push({ from, to: e.to, label });
  }
  orderLayers(layers, segments);
  return { nodes, edges, layers, segments, isDummy: (name) => name.startsWith(DUMMY) };
}

function bfsOrder(start: string, out: Map<string, GraphEdge[]>): string[] {
  const order: string[] = [];
  const seen = new Set<string>();
  const queue = [start];
  while (queue.length > 0) {
    const n = queue.shift()!;
    if (seen.has(n)) continue;
    seen.add(n);
    order.push(n);
    for (const e of out.get(n) ?? []) queue.push(e.to);
  }
  return order;
}

/** Barycentre sweeps down and up, keeping the ordering with the fewest crossings. */
function orderLayers(layers: string[][], segments: Segment[]): void {
  const preds = new Map<string, string[]>();
  const succs = new Map<string, string[]>();
  for (const s of segments) {
    preds.set(s.to, [...(preds.get(s.to) ?? []), s.from]);
    succs.set(s.from, [...(succs.get(s.from) ?? []), s.to]);
  }
  const position = () => {
    const pos = new Map<string, number>();
    for (const layer of layers) layer.forEach((n, i) => pos.set(n, i));
    return pos;
  };
  const sortBy = (layer: string[], neighbours: Map<string, string[]>, pos: Map<string, number>) => {
    const keyed = layer.map((n, i) => {
      const ns = neighbours.get(n) ?? [];
      return { n, key: ns.length > 0 ? ns.reduce((a, m) => a + pos.get(m)!, 0) / ns.length : i, i };
    });
    keyed.sort((a, b) => a.key - b.key || a.i - b.i);
    layer.splice(0, layer.length, ...keyed.map((k) => k.n));
  };
  let best = layers.map((l) => [...l]);
  let bestCrossings = crossings(layers, segments);
  for (let round = 0; round < 4 && bestCrossings > 0; round++) {
    for (let i = 1; i < layers.length; i++) sortBy(layers[i]!, preds, position());
    for (let i = layers.length - 2; i >= 0; i--) sortBy(layers[i]!, succs, position());
    const c = crossings(layers, segments);
    if (c < bestCrossings) {
      bestCrossings = c;
      best = layers.map((l) => [...l]);
    }
  }
  layers.splice(0, layers.length, ...best);
}

function crossings(layers: string[][], segments: Segment[]): number {
  const pos = new Map<string, number>();
  for (const layer of layers) layer.forEach((n, i) => pos.set(n, i));
  let count = 0;
  for (let i = 0; i < segments.length; i++) {
    for (let j = i + 1; j < segments.length; j++) {
      const a = segments[i]!;
      const b = segments[j]!;
      const da = pos.get(a.from)! - pos.get(b.from)!;
      const db = pos.get(a.to)! - pos.get(b.to)!;
      if (layerOf(layers, a.from) === layerOf(layers, b.from) && da * db < 0) count++;
    }
  }
  return count;
}

function layerOf(layers: string[][], name: string): number {
  return layers.findIndex((l) => l.includes(name));
}
