import { describe, expect, it } from "vitest";
import type { EventRecord } from "../../engine/index.js";
import { describeEvent, eventText } from "../../source/text/event-text.js";

const event = (type: string, payload: Record<string, unknown>) => ({ type, payload }) as unknown as EventRecord;

describe("events in words, as `pitwall events` prints them and the console's events tab shows them", () => {
  it("names a node's durable call beside the node, as show does", () => {
    expect(describeEvent(event("task.started", { node: "agent", attempt: 1, call: "search" }))).toBe("agent · search attempt 1");
    expect(describeEvent(event("task.succeeded", { node: "agent", attempt: 1, durationMs: 12, keys: [], call: "search" }))).toBe("agent · search attempt 1 in 12ms");
    expect(describeEvent(event("task.failed", { node: "agent", attempt: 2, error: "boom", willRetry: false, call: "search" }))).toBe("agent · search attempt 2: boom");
    expect(describeEvent(event("task.canceled", { node: "agent", reason: "its node was killed by operator", call: "search" }))).toBe(
      "agent · search canceled: its node was killed by operator",
    );
    expect(describeEvent(event("task.started", { node: "each", attempt: 1, index: 2 }))).toBe("each[2] attempt 1");
  });

  it("says who claimed a run and when it was taken over, what a node wrote and where it routed, a skip", () => {
    expect(describeEvent(event("run.claimed", { worker: "w1", fence: 3, recovered: true }))).toBe("by w1 (fence 3): taken over, its worker was lost");
    expect(describeEvent(event("run.resumed", { by: "operator:ann" }))).toBe("by operator:ann");
    expect(describeEvent(event("run.created", { workflow: "order", version: "0123456789abcdef", signal: { id: "cmd-1", name: "paid" } }))).toBe("order (version 0123456789ab), started to take signal paid (cmd-1)");
    expect(describeEvent(event("task.succeeded", { node: "triage", attempt: 2, durationMs: 1500, keys: ["label"], route: "bug" }))).toBe(
      "triage attempt 2 in 1.5s → route bug, wrote label",
    );
    expect(describeEvent(event("task.succeeded", { node: "review", attempt: 1, durationMs: 0, keys: [], skipped: true }))).toBe("review skipped by an operator: it did not run");
  });

  it("says what a node waits for: the interrupt, the child run (by id), or the timer", () => {
    expect(describeEvent(event("task.interrupted", { node: "ask", waitingFor: { kind: "interrupt", interruptId: "int-1" } }))).toBe("ask waits for interrupt int-1");
    expect(describeEvent(event("task.interrupted", { node: "research", waitingFor: { kind: "run", runId: "run-7k2m9q4x1z" } }))).toBe("research waits for run run-7k2m9q4x1z");
    expect(describeEvent(event("task.interrupted", { node: "nap", waitingFor: { kind: "time", until: Date.UTC(2030, 0, 2, 3, 4, 5) } }))).toBe(
      "nap waits for its timer, until 2030-01-02T03:04:05.000Z",
    );
  });

  it("keeps the node apart for the console's node column", () => {
    expect(eventText(event("interrupt.created", { interruptId: "int-1", kind: "approval", node: "ship", question: "Ship it?" }))).toEqual({
      subject: "ship",
      text: "approval int-1: Ship it?",
    });
    // A question asked again (its answer was given on another state) names the one it replaces.
    expect(eventText(event("interrupt.created", { interruptId: "int-2", kind: "node", node: "ship", question: "Ship it?", asksAgain: "int-1" })).text).toBe("node int-2 (asks int-1 again): Ship it?");
    expect(eventText(event("run.succeeded", { steps: 3 }))).toEqual({ text: "after 3 steps" });
  });

  it("never prints a model's escape sequences or newlines, and cuts long text", () => {
    const { text } = eventText(event("node.log", { node: "agent", level: "info", message: `\u001b]0;owned\u0007line one\nline two ${"x".repeat(400)}` }), 80);
    expect(text).not.toMatch(/[\u0000-\u001f]/);
    expect(text.startsWith("info: line one ⏎ line two")).toBe(true);
    expect(Array.from(text)).toHaveLength(80);
  });

  it("shows an event it has no words for, or whose payload is not what its type says, as JSON", () => {
    expect(describeEvent(event("run.failed", { oops: 1 }))).toBe('{"oops":1}');
  });
});
