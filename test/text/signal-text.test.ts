import { describe, expect, it } from "vitest";
import { receivedText } from "../../source/text/signal-text.js";

describe("what a task took of signals, as show's task table says it", () => {
  it("names each receive it took, and those that gave up with none come in time", () => {
    const sent = (name: string) => ({ id: `cmd-${name}`, name, actor: "operator:ann", sentAt: 1 });
    expect(receivedText(undefined)).toBe("");
    expect(receivedText({ "paid#1": sent("paid") })).toBe("took signal paid#1");
    expect(receivedText({ "item#1": sent("item"), "item#2": sent("item"), "reply#1": { ...sent("reply"), actor: "timeout", timedOut: true } })).toBe("took signals item#1, item#2 · no signal reply#1 in time");
  });
});
