import { describe, expect, it } from "vitest";
import { z } from "zod";
import { StateValidator, actionRegistry, checkWorkflowText, createEngine, loadWorkflowText, workflow } from "../../engine/index.js";

describe("optional state keys", () => {
  it("a zod .optional() key may be absent: an operator's edit of another key is accepted, and the node sets it later", async () => {
    const wf = workflow("optional", { state: z.object({ summary: z.string().optional(), ok: z.boolean().default(false) }) })
      .node("check", () => ({ ok: true }), { next: "write" })
      .node("write", (s) => ({ summary: `ok=${s.ok}` }))
      .compile();
    expect(wf.definition.state.summary).toEqual({ type: "string", optional: true });
    const engine = createEngine({ workflows: [wf] });
    try {
      const run = await engine.start(wf, {}, { interruptBefore: ["check"] });
      expect((await run.wait()).status).toBe("paused");
      const [pending] = await engine.store.listInterrupts({ runId: run.id, status: "pending" });
      await engine.operator("ann").resolve(pending!.id, { decision: "edit", patch: { ok: false } });
      expect((await run.wait()).status).toBe("succeeded");
      expect(await run.state()).toEqual({ ok: true, summary: "ok=true" });
    } finally {
      await engine.close();
    }
  });

  it("in a workflow file, \"optional\": true lets the key be absent and still checks it when present", () => {
    const text = JSON.stringify({ name: "o", start: "a", state: { note: { type: "string", optional: true } }, nodes: { a: { action: "x" } } });
    expect(checkWorkflowText(text).problems).toEqual([]);
    const wf = loadWorkflowText(text, actionRegistry({ x: () => ({}) }));
    expect(wf.initialState({})).toEqual({});
    const validator = new StateValidator(wf.definition.state);
    expect(validator.parse({})).toEqual({});
    expect(() => validator.parse({ note: 3 })).toThrow("state is invalid at $.note");
    const required = new StateValidator({ note: { type: "string" } });
    expect(() => required.parse({})).toThrow("state is invalid at $.note");
  });

  it("refuses an optional that is not true or false", () => {
    const text = JSON.stringify({ name: "o", start: "a", state: { note: { type: "string", optional: "yes" } }, nodes: { a: { action: "x" } } });
    expect(checkWorkflowText(text).problems.map((p) => `${p.path} ${p.code} ${p.message}`)).toContain("$.state.note.optional BAD_STATE_SCHEMA optional must be true or false");
  });
});
