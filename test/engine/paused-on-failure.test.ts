import { describe, expect, it } from "vitest";
import { z } from "zod";
import { workflow } from "../../engine/index.js";
import { engineHarness } from "../support/engine.js";
import { storeFactories } from "../support/stores.js";

const state = z.object({ n: z.number().default(0) });

describe("RunHandle.pausedOnFailure: which pauses need an operator's repair", () => {
  const harness = engineHarness(storeFactories[0]!);

  it("a sub-workflow run that spent its retries holds its parent on a failure; a child asking a person does not", async () => {
    const failing = workflow("failing-child", { state })
      .node("boom", () => {
        throw new Error("no luck");
      }, { next: "END" })
      .compile();
    const asking = workflow("asking-child", { state, interruptBefore: ["ask"] }).node("ask", () => ({}), { next: "END" }).compile();
    const parentOf = (name: string, child: typeof failing) => workflow(name, { state }).subgraph("sub", child, { next: "END" }).compile();
    const [failed, asked] = [parentOf("failed-parent", failing), parentOf("asked-parent", asking)];
    const engine = await harness.engine([failed, asked]);
    const [a, b] = await Promise.all([engine.start(failed), engine.start(asked)]);
    const [settledA, settledB] = await Promise.all([a.wait({ timeoutMs: 10_000 }), b.wait({ timeoutMs: 10_000 })]);
    expect([settledA.status, settledB.status]).toEqual(["queued", "queued"]);
    expect(await a.pausedOnFailure()).toEqual({ run: expect.objectContaining({ id: settledA.waitingOn, reason: "retries-exhausted" }), why: "retries-exhausted" });
    expect(await b.pausedOnFailure()).toBeUndefined();
  });
});
