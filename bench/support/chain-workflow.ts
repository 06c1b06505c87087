import { z } from "zod";
import { workflow, type CompiledWorkflow, type NodeContext } from "../../engine/index.js";

/** How many nodes the chain has, and how long each waits (as a short LLM call would). */
export const CHAIN_NODES = 10;
export const NODE_MS = 20;

function wait(_state: unknown, ctx: NodeContext) {
  return new Promise<{ steps: number[] }>((resolve) => {
    const timer = setTimeout(() => resolve({ steps: [ctx.step] }), NODE_MS);
    ctx.signal.addEventListener("abort", () => clearTimeout(timer));
  });
}

/** `chain`: n1 → n2 → ... → n10, each node waiting 20 ms and appending its step number. */
function chain(): CompiledWorkflow {
  let builder = workflow("chain", { state: z.object({ steps: z.array(z.number()).default([]) }), reducers: { steps: "append" } });
  for (let i = 1; i <= CHAIN_NODES; i++) builder = builder.node(`n${i}`, wait, { action: "wait", ...(i < CHAIN_NODES ? { next: `n${i + 1}` } : {}) });
  return builder.compile();
}

export default chain();
