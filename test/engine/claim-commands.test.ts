import { describe, expect, it } from "vitest";
import { z } from "zod";
import { Operator, Worker, WorkflowRegistry, actionRegistry, createEngine, workflow, type EventRecord, type Store } from "../../engine/index.js";
import { sleep, until } from "../support/engine.js";
import { storeFactories } from "../support/stores.js";

/** A node that runs until it is aborted (or 20 s). */
const held = workflow("held", { state: z.object({ n: z.number().default(0) }) })
  .node(
    "hold",
    (_s, ctx) =>
      new Promise<{ n: number }>((resolve) => {
        const timer = setTimeout(() => resolve({ n: 1 }), 20_000);
        ctx.signal.addEventListener("abort", () => {
          clearTimeout(timer);
          resolve({ n: 2 });
        });
      }),
    { next: "END" },
  )
  .compile();

/**
 * `store` as a worker sees it, where an operator queues `command` for each run the moment the
 * worker has claimed it (the run is then owned: the command waits for the worker), and the
 * worker's claim returns only once its event subscription has taken in that command's event.
 */
function commandAtClaim(store: Store, command: (runId: string) => Promise<unknown>): { store: Store; outcomes: Promise<unknown>[] } {
  const outcomes: Promise<unknown>[] = [];
  const seen: number[] = [];
  const wrapped = new Proxy(store, {
    get(target, prop, receiver) {
      if (prop === "claimRun") {
        return async (...args: Parameters<Store["claimRun"]>) => {
          const claim = await target.claimRun(...args);
          if (!claim) return claim;
          outcomes.push(command(claim.run.id));
          const [requested] = await until(() => target.readEvents({ runId: claim.run.id, types: ["operator.requested"] }).then((e) => (e.length > 0 ? e : undefined)), 5_000, "the command");
          await until(() => seen.includes(requested!.seq), 5_000, "the worker's subscription to take in the command");
          return claim;
        };
      }
      if (prop === "subscribe") {
        // Yielded, and asked for the next: the subscriber has done with the event.
        return async function* (...args: Parameters<Store["subscribe"]>): AsyncIterable<EventRecord> {
          for await (const event of target.subscribe(...args)) {
            yield event;
            seen.push(event.seq);
          }
        };
      }
      const value: unknown = Reflect.get(target, prop, receiver);
      return typeof value === "function" ? value.bind(target) : value;
    },
  });
  return { store: wrapped, outcomes };
}

describe.each(storeFactories)("a command queued as a worker claims the run ($name store)", (factory) => {
  it("reaches the run's executor, made after the command came", async () => {
    await factory.setup?.();
    const store = await factory.open();
    try {
      const run = await createEngine({ store, workflows: [held], worker: false }).start(held);
      const operator = new Operator(store, { actor: "operator:ann", answerTimeoutMs: 200, totalTimeoutMs: 10_000 });
      const { store: seenByWorker, outcomes } = commandAtClaim(store, (runId) => operator.cancel(runId, { reason: "not needed" }));
      const worker = new Worker(seenByWorker, new WorkflowRegistry(seenByWorker, actionRegistry({}), [held]), { pollMs: 50, killGraceMs: 200 });
      worker.start();
      try {
        await until(() => outcomes.length > 0, 5_000, "the claim");
        // Unanswered, the command would wait for the worker as long as the node runs.
        const outcome = await Promise.race([outcomes[0], sleep(5_000).then(() => "unanswered")]);
        expect(outcome).toMatchObject({ command: { status: "accepted" }, effect: `run ${run.id} canceled` });
        expect((await store.getRun(run.id))?.status).toBe("canceled");
      } finally {
        await worker.stop();
      }
    } finally {
      await store.close();
      await factory.teardown?.();
    }
  });
});
