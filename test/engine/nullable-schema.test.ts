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
});
