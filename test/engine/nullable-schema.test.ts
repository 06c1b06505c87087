import { describe, expect, it } from "vitest";
import { checkWorkflowText } from "../../engine/index.js";

// Found while writing fixtures/: the JSON-Schema subset accepts `nullable` (engine/state/schema.ts)
// but z.fromJSONSchema ignores it, so a key declared nullable still refuses null. The fixtures use
// `"type": ["object", "null"]` instead. Kept failing for the lead to fix (or to drop `nullable`).
describe("state schemas in workflow files", () => {
  it.fails("a key marked nullable accepts null as its default", () => {
    const text = JSON.stringify({
      name: "n",
      start: "a",
      state: { operation: { type: "object", nullable: true, default: null } },
      nodes: { a: { action: "x" } },
    });
    expect(checkWorkflowText(text).problems).toEqual([]);
  });
});
