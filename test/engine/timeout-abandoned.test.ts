import { describe, expect, it } from "vitest";
import { z } from "zod";
import { workflow } from "../../engine/index.js";
import { engineHarness } from "../support/engine.js";
import { storeFactories } from "../support/stores.js";

describe("a timed-out node that ignores its signal", () => {
  const harness = engineHarness(storeFactories[0]!);

  it("is recorded as abandoned after the grace period, its result discarded, still a TIMEOUT", async () => {
    const wf = workflow("deaf", { state: z.object({ out: z.string().default("") }) })
      .node("deaf", () => new Promise((resolve) => setTimeout(() => resolve({ out: "late" }), 1_000)), { timeoutMs: 50, next: "END" })
      .compile();
    const engine = await harness.engine([wf], { worker: { killGraceMs: 200 } });
    const run = await engine.start(wf);
    const end = await run.wait({ timeoutMs: 5_000 });
    const message = 'node "deaf" timed out after 50 ms; abandoned 200 ms later (it ignored its signal), its result discarded';
    expect(end).toMatchObject({ status: "paused", reason: "retries-exhausted", error: { message: `node "deaf" failed after 1 attempt: ${message}` } });
    const [task] = await engine.store.listTasks(run.id);
    expect(task!.attempts).toEqual([expect.objectContaining({ outcome: "failed", code: "TIMEOUT", error: message })]);
  });
});
