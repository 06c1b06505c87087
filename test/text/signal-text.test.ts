import { describe, expect, it } from "vitest";
import { inboxText, receivedText } from "../../source/text/signal-text.js";

describe("what a task took of signals, as show's task table says it", () => {
  it("names each receive it took, and those that gave up with none come in time", () => {
    const sent = (name: string) => ({ id: `cmd-${name}`, name, actor: "operator:ann", sentAt: 1 });
    expect(receivedText(undefined)).toBe("");
    expect(receivedText({ "paid#1": sent("paid") })).toBe("took signal paid#1");
    expect(receivedText({ "item#1": sent("item"), "item#2": sent("item"), "reply#1": { ...sent("reply"), actor: "timeout", timedOut: true } })).toBe("took signals item#1, item#2 · no signal reply#1 in time");
  });
});

describe("what a run holds of signals, as show and the console's run view say it", () => {
  it("counts each name, and says how many a fork carried from which run unless told not to", () => {
    const sent = (name: string, carriedFrom?: string) => ({ id: `cmd-${name}`, name, actor: "operator:ann", sentAt: 1, ...(carriedFrom ? { carriedFrom } : {}) });
    expect(inboxText([sent("paid"), sent("paid"), sent("note")])).toBe("3 signals no node has taken: paid ×2, note");
    const forked = [sent("paid", "run-a"), sent("note", "run-a"), sent("note")];
    expect(inboxText(forked)).toBe("3 signals no node has taken: paid, note ×2 (2 carried from run run-a)");
    expect(inboxText(forked, { carried: false })).toBe("3 signals no node has taken: paid, note ×2");
  });
});
