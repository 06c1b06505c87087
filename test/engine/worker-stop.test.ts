import { describe, expect, it } from "vitest";
import { z } from "zod";
import { workflow, type WorkerNotice } from "../../engine/index.js";
import { engineHarness, until } from "../support/engine.js";
import { storeFactories } from "../support/stores.js";

/** A node that takes 300 ms unless aborted, counting its starts and how they ended. */
function slowWorkflow(seen: string[]) {
  return workflow("stop-slow", { state: z.object({ done: z.boolean().default(false), after: z.boolean().default(false) }) })
    .node(
      "slow",
      async (_s, ctx) => {
        seen.push("start");
        await new Promise<void>((resolve, reject) => {
          const timer = setTimeout(resolve, 300);
          ctx.signal.addEventListener("abort", () => (clearTimeout(timer), reject(ctx.signal.reason)));
        });
        seen.push("finished");
        return { done: true };
      },
      { next: "after" },
    )
    .node("after", () => ({ after: true }), { next: "END" })
    .compile();
}

describe.each(storeFactories.filter((f) => f.name !== "redis"))("Worker.stop on $name", (factory) => {
  const harness = engineHarness(factory);

  it("with drainMs lets the running node finish and commit, starts nothing more, and releases the run", async () => {
    const seen: string[] = [];
    const notices: WorkerNotice[] = [];
    const wf = slowWorkflow(seen);
    const engine = await harness.engine([wf], { worker: { onNotice: (n) => notices.push(n) } });
    const run = await engine.start(wf, {});
    await until(() => seen.length > 0, 5_000, "the node to start");
    expect(engine.worker!.runningNodes()).toEqual([{ runId: run.id, node: "slow" }]);
    await engine.worker!.stop({ drainMs: 5_000 });
    expect(seen).toEqual(["start", "finished"]);
    const stopped = await engine.store.getRun(run.id);
    expect(stopped?.status).toBe("queued");
    expect((await engine.store.listTasks(run.id)).map((t) => [t.node, t.status])).toEqual([["slow", "succeeded"]]);
    expect(notices.map((n) => [n.level, n.kind, n.message])).toEqual([
      ["info", "draining", "draining: 1 node running (in 1 run), up to 5 s"],
      ["info", "drained", "drained: the running nodes finished; 1 run released"],
    ]);
    expect(engine.worker!.stats()).toMatchObject({ claimed: 1, stopping: true, running: 0, ended: { queued: 1 } });
  });

  it("without drainMs aborts the running node at once, as before", async () => {
    const seen: string[] = [];
    const wf = slowWorkflow(seen);
    const engine = await harness.engine([wf]);
    const run = await engine.start(wf, {});
    await until(() => seen.length > 0, 5_000, "the node to start");
    await engine.worker!.stop();
    expect(seen).toEqual(["start"]);
    expect((await engine.store.listTasks(run.id)).map((t) => [t.node, t.status])).toEqual([["slow", "pending"]]);
  });
});
