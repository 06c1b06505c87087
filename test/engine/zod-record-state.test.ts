import { describe, expect, it } from "vitest";
import { z } from "zod";
import { workflow } from "../../engine/index.js";

// Found while writing the SQLite store's state property test (issue 3); reported to the lead.
describe("code workflows with a z.record state key", () => {
  it.fails("compiles (z.toJSONSchema emits `propertyNames`, which the accepted JSON-Schema subset refuses)", () => {
    const compile = () =>
      workflow("with-record", { state: z.object({ scores: z.record(z.string(), z.number()).default({}) }), reducers: { scores: "merge" } })
        .node("a", () => ({ scores: { x: 1 } }), { next: "END" })
        .compile();
    expect(compile).not.toThrow();
  });
});
