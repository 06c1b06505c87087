import { expect, it } from "vitest";
import { diffStates } from "../../engine/index.js";
import { diffLines } from "../../source/console/views/diff-lines.js";
import { jsonLines } from "../../source/console/views/json-lines.js";
import { treeRows } from "../../source/console/views/json-tree.js";

const text = (lines: ReturnType<typeof diffLines>) => lines.map((l) => l.map((s) => s.text).join(""));

it("shows a change in a long text from a little before where the texts differ, and marks cuts", () => {
  const before = { long: `${"L".repeat(5000)}🚀END`, items: Array.from({ length: 200 }, (_, i) => `item ${i}`) };
  const after = { long: `${"L".repeat(5000)}🛸END2`, items: [...before.items, ...Array.from({ length: 55 }, (_, i) => `new ${i} ${"x".repeat(20)}`)] };
  const [long, items] = text(diffLines(diffStates(before, after))).sort((a, b) => (a.includes("$.long") ? -1 : b.includes("$.long") ? 1 : 0));
  expect(long).toBe(` ~ $.long "…${"L".repeat(23)}🚀END" → "…${"L".repeat(23)}🛸END2"`);
  expect(items).toMatch(/^ \+ \$\.items \+55 items \["new 0 x+".*…$/);
  // Short values are shown whole.
  expect(text(diffLines(diffStates({ a: "one" }, { a: "two" })))).toEqual([' ~ $.a "one" → "two"']);
});

it("cuts a huge state tree below its big keys, never dropping a top-level key, and says so", () => {
  const blob = Object.fromEntries(Array.from({ length: 20_000 }, (_, i) => [`k${i}`, { a: i, b: i }]));
  const { rows, cut } = treeRows({ blob, long: "the last key" }, new Set(), 60);
  expect(cut).toBe(true);
  expect(rows.length).toBeLessThanOrEqual(5_001);
  expect(rows.filter((r) => r.depth === 0).map((r) => r.key)).toEqual(["blob", "long"]);
  expect(treeRows({ small: { a: 1 } }, new Set(), 60).cut).toBe(false);
});

it("says when a value shown whole is cut, and how long it is", () => {
  const lines = jsonLines("y".repeat(150_000), 80).map((l) => l.map((s) => s.text).join(""));
  expect(lines.at(-2)).toMatch(/y…$/);
  expect(lines.at(-1)).toBe(" (the line above is cut at 100,000 of its 150,000 characters; pitwall state prints it whole)");
});
