import { describe, expect, it } from "vitest";
import type { EventRecord } from "../../engine/index.js";
import { describeEvent } from "../../source/cli/event-text.js";

const event = (type: EventRecord["type"], payload: Record<string, unknown>) => ({ type, payload }) as unknown as EventRecord;

describe("events as pitwall events prints them", () => {
  it("names a node's durable call beside the node, as show does", () => {
    expect(describeEvent(event("task.started", { node: "agent", attempt: 1, call: "search" }))).toBe("agent · search attempt 1");
    expect(describeEvent(event("task.succeeded", { node: "agent", attempt: 1, durationMs: 12, keys: [], call: "search" }))).toBe("agent · search in 12ms");
    expect(describeEvent(event("task.failed", { node: "agent", attempt: 2, error: "boom", willRetry: false, call: "search" }))).toBe("agent · search attempt 2: boom");
    expect(describeEvent(event("task.canceled", { node: "agent", reason: "its node was killed by operator", call: "search" }))).toBe("agent · search: its node was killed by operator");
    expect(describeEvent(event("task.started", { node: "each", attempt: 1, index: 2 }))).toBe("each[2] attempt 1");
  });

  it("says a skipped node did not run", () => {
    expect(describeEvent(event("task.succeeded", { node: "review", attempt: 1, durationMs: 0, keys: [], skipped: true }))).toBe("review skipped by an operator: it did not run");
  });
});
