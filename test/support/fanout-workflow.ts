import { z } from "zod";
import { workflow, type NodeContext } from "../../engine/index.js";

/** The branches the fixture fans out to; `join` waits for all of them. */
export const BRANCHES = ["a", "b", "c"] as const;

/** Every node of the fixture, as it appears once in a finished run's `visits`. */
export const FANOUT_NODES = ["plan", ...BRANCHES, "join"].sort();

/** Each node waits this long, as a short LLM call would (and aborts when told to). */
const NODE_MS = 20;

function work(node: string) {
  return async (_state: unknown, ctx: NodeContext) => {
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(resolve, NODE_MS);
      ctx.signal.addEventListener("abort", () => {
        clearTimeout(timer);
        reject(ctx.signal.reason instanceof Error ? ctx.signal.reason : new Error("aborted"));
      });
    });
    return { visits: [node] };
  };
}

// Lost workers fail their running tasks ("worker lost"); retries let the runs finish elsewhere.
const retry = { maxAttempts: 6, backoffMs: 10, jitter: 0 };

/** plan → (a | b | c in parallel) → join: a small code workflow with parallel branches. */
export const fanout = workflow("fleet-fanout", {
  state: z.object({ visits: z.array(z.string()).default([]) }),
  reducers: { visits: "append" },
})
  .node("plan", work("plan"), { next: [...BRANCHES], retry })
  .node("a", work("a"), { next: "join", retry })
  .node("b", work("b"), { next: "join", retry })
  .node("c", work("c"), { next: "join", retry })
  .node("join", work("join"), { waitFor: [...BRANCHES], retry })
  .compile();

export default fanout;
