import { describe, expect, it } from "vitest";
import { actionRegistry, checkWorkflowText, loadWorkflowText } from "../../engine/index.js";

describe("state schemas in workflow files", () => {
  it("a key marked nullable accepts null as its default", () => {
    const text = JSON.stringify({
      name: "n",
      start: "a",
      state: { operation: { type: "object", nullable: true, default: null } },
      nodes: { a: { action: "x" } },
    });
    expect(checkWorkflowText(text).problems).toEqual([]);
    const wf = loadWorkflowText(text, actionRegistry({ x: () => ({}) }));
    expect(wf.initialState({ operation: { id: 1 } })).toEqual({ operation: { id: 1 } });
    expect(wf.initialState({})).toEqual({ operation: null });
    expect(() => wf.initialState({ operation: "x" })).toThrow("run input is invalid at $.operation");
  });

  it("enforces minItems and maxItems without items, and required keys however their properties are written", () => {
    const text = JSON.stringify({
      name: "keywords",
      start: "a",
      state: {
        tags: { type: "array", maxItems: 1, default: [] },
        pair: { type: "array", minItems: 2, default: [1, 2] },
        cfg: { type: "object", required: ["url", "mode"], properties: { mode: {} }, default: { url: "u", mode: null } },
      },
      nodes: { a: { action: "x" } },
    });
    expect(checkWorkflowText(text).problems).toEqual([]);
    const wf = loadWorkflowText(text, actionRegistry({ x: () => ({}) }));
    expect(wf.initialState({ tags: ["one"], cfg: { url: "https://x", mode: 0 } })).toMatchObject({ tags: ["one"], pair: [1, 2] });
    expect(() => wf.initialState({ tags: [1, 2, 3] })).toThrow("run input is invalid at $.tags");
    expect(() => wf.initialState({ pair: [] })).toThrow("run input is invalid at $.pair");
    expect(() => wf.initialState({ cfg: { nourl: 1, mode: 1 } })).toThrow("run input is invalid at $.cfg.url");
    expect(() => wf.initialState({ cfg: { url: "u" } })).toThrow("run input is invalid at $.cfg.mode");
  });
});
