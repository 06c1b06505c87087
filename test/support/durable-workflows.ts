import { setTimeout as sleep } from "node:timers/promises";
import { z } from "zod";
import { workflow, type CompiledWorkflow, type NodeContext } from "../../engine/index.js";

/**
 * Workflows that the crash, fencing and timer tests run in child processes. They are built the
 * same way in the test and in the child, so both see the same workflow version.
 */

const BRANCHES = ["a", "b", "c", "d"] as const;
const DEPTH = 7;

const crashState = z.object({
  trail: z.array(z.string()).default([]),
  a: z.number().default(0),
  b: z.number().default(0),
  c: z.number().default(0),
  d: z.number().default(0),
  total: z.number().default(0),
});

/** Every node may be killed mid-run any number of times: retried at once, without limit. */
const RETRY = { maxAttempts: 1_000_000, backoffMs: 0, jitter: 0 };

/** Holds the node for a few milliseconds (so that kills land inside nodes too), honouring aborts. */
async function busy(ctx: NodeContext, ms: number): Promise<void> {
  await sleep(ms, undefined, { signal: ctx.signal }).catch(() => undefined);
}

/**
 * 30 nodes: `start` fans out to four branches of seven nodes that run in parallel, then `join`
 * waits for all four. Each node appends its name to `trail`; branch nodes count in their key.
 */
export function crashWorkflow(): CompiledWorkflow {
  let builder = workflow("crash-30", { state: crashState, reducers: { trail: "append" }, limits: { maxSteps: 50, concurrency: 8 } }).node(
    "start",
    async (_s, ctx) => {
      await busy(ctx, 8);
      return { trail: ["start"] };
    },
    { next: BRANCHES.map((b) => `${b}1`), retry: RETRY },
  );
  for (const branch of BRANCHES) {
    for (let i = 1; i <= DEPTH; i++) {
      const name = `${branch}${i}`;
      builder = builder.node(
        name,
        async (s, ctx) => {
          await busy(ctx, 5 + ((i * 7 + branch.charCodeAt(0)) % 15));
          return { trail: [name], [branch]: (s[branch] as number) + i };
        },
        { next: i < DEPTH ? `${branch}${i + 1}` : "join", retry: RETRY },
      );
    }
  }
  return builder
    .node(
      "join",
      async (s, ctx) => {
        await busy(ctx, 8);
        return { trail: ["join"], total: s.a + s.b + s.c + s.d };
      },
      { waitFor: BRANCHES.map((b) => `${b}${DEPTH}`), next: "END", retry: RETRY },
    )
    .compile();
}

/** `before → slow → after`; `slow` prints when it starts and takes `SLOW_MS`. */
export const SLOW_MS = 1500;
export function slowWorkflow(): CompiledWorkflow {
  const state = z.object({ trail: z.array(z.string()).default([]) });
  return workflow("slow", { state, reducers: { trail: "append" } })
    .node("before", () => ({ trail: ["before"] }), { next: "slow" })
    .node(
      "slow",
      async (_s, ctx) => {
        console.log(JSON.stringify({ started: ctx.taskId, attempt: ctx.attempt }));
        await busy(ctx, SLOW_MS);
        return { trail: [`slow by ${process.pid}`] };
      },
      { next: "after", retry: { maxAttempts: 5, backoffMs: 0, jitter: 0 } },
    )
    .node("after", () => ({ trail: ["after"] }), { next: "END" })
    .compile();
}

/** `before → pause (a durable timer of TIMER_SECONDS) → after`. */
export const TIMER_SECONDS = 2;
export function timerWorkflow(): CompiledWorkflow {
  const state = z.object({ trail: z.array(z.string()).default([]) });
  return workflow("timer", { state, reducers: { trail: "append" } })
    .node("before", () => ({ trail: ["before"] }), { next: "pause" })
    .wait("pause", { seconds: TIMER_SECONDS, next: "after" })
    .node("after", () => ({ trail: [`after at ${Date.now()}`] }), { next: "END" })
    .compile();
}

/** `flaky` fails its first attempt and is retried after BACKOFF_MS: longer than a worker holds a run for a backoff (5 s). */
export const BACKOFF_MS = 6000;
export function backoffWorkflow(): CompiledWorkflow {
  const state = z.object({ trail: z.array(z.string()).default([]) });
  return workflow("backoff", { state, reducers: { trail: "append" } })
    .node(
      "flaky",
      (_s, ctx) => {
        if (ctx.attempt === 1) throw new Error("first attempt fails");
        return { trail: ["flaky"] };
      },
      { next: "END", retry: { maxAttempts: 2, backoffMs: BACKOFF_MS, jitter: 0 } },
    )
    .compile();
}

export const WORKFLOWS = { crash: crashWorkflow, slow: slowWorkflow, timer: timerWorkflow, backoff: backoffWorkflow } as const;
export type WorkflowName = keyof typeof WORKFLOWS;
