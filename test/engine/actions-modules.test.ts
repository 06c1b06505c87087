import { resolve } from "node:path";
import { describe, expect, it } from "vitest";
import { createEngine, loadActionModules, loadWorkflowValue } from "../../engine/index.js";

describe("an actions module typed with defineActions", () => {
  it("loads as the plain object it is: its actions by their dotted names, run by a JSON workflow", async () => {
    const actions = await loadActionModules([resolve("test/fixtures/typed-actions.ts")]);
    expect(actions.names()).toEqual(["triage.close", "triage.nested.mark"]);
    const wf = loadWorkflowValue(
      {
        name: "typed",
        state: { resolution: { type: "string", default: "refund" }, outcome: { type: "string", default: "" } },
        start: "close",
        nodes: { close: { action: "triage.close", next: "mark" }, mark: { action: "triage.nested.mark", next: "END" } },
      },
      actions,
    );
    const engine = createEngine({ workflows: [wf], actions });
    try {
      const run = await engine.start(wf);
      await run.wait({ timeoutMs: 5_000 });
      expect(await run.state()).toEqual({ resolution: "refund", outcome: "marked by mark" });
      expect((await run.state(1)).outcome).toBe("closed: refund");
    } finally {
      await engine.close();
    }
  });
});
