import { z } from "zod";
import { workflow, type CompiledWorkflow } from "./engine.js";

/** 200 bytes of text: what every benchmark step appends. */
export const ITEM = "x".repeat(198);

const state = z.object({ items: z.array(z.string()).default([]), count: z.number().default(0) });
type S = z.output<typeof state>;
const work = (s: Readonly<S>) => ({ items: [ITEM], count: s.count + 1 });

/**
 * `n1 → n2 → … → nN`: each node appends 200 bytes and bumps a counter, after waiting `waitMs`
 * (as an LLM call would) when given.
 */
export function chainWorkflow(nodes: number, waitMs = 0): CompiledWorkflow {
  const step = waitMs > 0 ? (s: Readonly<S>) => new Promise<S>((resolve) => setTimeout(() => resolve(work(s)), waitMs)) : work;
  let builder = workflow(`bench-chain-${nodes}${waitMs > 0 ? `-wait-${waitMs}` : ""}`, { state, reducers: { items: "append" } });
  for (let i = 1; i <= nodes; i++) builder = builder.node(`n${i}`, step, { action: "work", next: i < nodes ? `n${i + 1}` : "END" });
  return builder.compile();
}

/** One node that runs `steps` times in a loop, appending 200 bytes per step. */
export function loopWorkflow(steps: number): CompiledWorkflow {
  return workflow(`bench-loop-${steps}`, { state, reducers: { items: "append" }, limits: { maxSteps: steps + 1 } })
    .node("work", work, { route: (s) => (s.count >= steps ? "done" : "again"), routes: { again: "work", done: "END" } })
    .compile();
}

/** `split → b1..bW in parallel → join`. */
export function fanoutWorkflow(width: number): CompiledWorkflow {
  const branches = Array.from({ length: width }, (_, i) => `b${i + 1}`);
  let builder = workflow(`bench-fanout-${width}`, { state, reducers: { items: "append", count: (a: unknown, b: unknown) => (a as number) + (b as number) } })
    .node("split", () => ({ items: [ITEM] }), { next: branches });
  const branch = () => ({ items: [ITEM], count: 1 });
  for (const b of branches) builder = builder.node(b, branch, { action: "branch", next: "join" });
  return builder.node("join", () => ({ items: [ITEM] }), { waitFor: branches, next: "END" }).compile();
}
