import { describe, expect, it } from "vitest";
import { secondsPast } from "../../engine/index.js";

describe("secondsPast (how long a hold or silence went past a lease, in notices and /healthz)", () => {
  it("never reads as no longer than the limit it went past", () => {
    for (const limitMs of [150, 300, 1_000, 30_000]) {
      for (let overMs = 1; overMs < 200; overMs++) {
        expect(Number(secondsPast(limitMs + overMs)), `${limitMs + overMs} ms past a ${limitMs} ms lease`).toBeGreaterThan(limitMs / 1000);
      }
    }
  });

  it("says seconds to a tenth", () => {
    expect([secondsPast(301), secondsPast(1_000), secondsPast(12_345)]).toEqual(["0.4", "1.0", "12.4"]);
  });
});
