import { describe, expect, it } from "vitest";
import type { AttemptRecord, TaskRecord } from "../../engine/index.js";
import { waterfallLine } from "../../source/console/views/waterfall.js";

const attempt = (n: number, startedAt: number, endedAt: number, outcome: AttemptRecord["outcome"]): AttemptRecord => ({ n, worker: "w", startedAt, endedAt, outcome });
const text = (line: ReturnType<typeof waterfallLine>) => line.map((s) => s.text).join("");

describe("the timeline's bars", () => {
  it("draws every attempt and pause of a try that ends at the axis's end, each a column at least", () => {
    const attempts = [attempt(1, 98, 99, "interrupted"), attempt(2, 100, 100, "succeeded")];
    const task = { node: "approve", status: "succeeded", createdAt: 97, attempts } as unknown as TaskRecord;
    const line = text(waterfallLine({ task, n: 1, attempts, previous: undefined, last: true }, { start: 0, end: 100 }, 20, 100));
    expect(line.slice(0, 20)).toMatch(/^ +·*█┄█$/);
    const three = [attempt(1, 99, 99, "interrupted"), attempt(2, 100, 100, "interrupted"), attempt(3, 100, 100, "succeeded")];
    const resumedTwice = text(waterfallLine({ task: { ...task, attempts: three }, n: 1, attempts: three, previous: undefined, last: true }, { start: 0, end: 100 }, 20, 100));
    expect(resumedTwice.slice(0, 20)).toMatch(/█┄█┄█$/);
  });
});
