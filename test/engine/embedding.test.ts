import { describe, expect, it } from "vitest";
import { z } from "zod";
import { workflow } from "../../engine/index.js";
import { engineHarness } from "../support/engine.js";
import { storeFactories } from "../support/stores.js";

const harness = engineHarness(storeFactories.find((f) => f.name === "sqlite")!);

const held = workflow("held", { state: z.object({ n: z.number().default(0) }), interruptBefore: ["work"] })
  .node("work", () => ({ n: 1 }), { next: "END" })
  .compile();

describe("an engine embedded in a service", () => {
  it("records run.cancel as the engine's actor, with the engine's secret keys, unless given another actor", async () => {
    const engine = await harness.engine([held], { actor: "service:billing", secretKeys: ["reason"] });
    const first = await engine.start(held);
    await first.wait();
    await first.cancel("card 4111-1111");
    const second = await engine.start(held);
    await second.wait();
    await second.cancel("duplicate", "ann");
    const requested = await engine.store.readEvents({ types: ["operator.requested"] });
    expect(requested.map((e) => [e.runId, e.actor])).toEqual([
      [first.id, "service:billing"],
      [second.id, "operator:ann"],
    ]);
    expect(JSON.stringify(requested)).not.toContain("4111");
  });
});
