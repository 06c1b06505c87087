import stringWidth from "string-width";
import { afterEach, describe, expect, it } from "vitest";
import { z } from "zod";
import { MemoryStore, createEngine, workflow, type Engine } from "../../engine/index.js";
import { seg, wrapLine } from "../../source/console/components/lines.js";
import { closeAll, openConsole, type ConsoleHarness } from "./harness.js";

/** 100 KB of model output: ASCII, CJK, emoji families, combining accents and escape codes. */
const BIG = `${"x".repeat(50_000)}${"中".repeat(20_000)}${"👨‍👩‍👧‍👦e\u0301".repeat(1000)}\u001b[31mend`;

function oddWorkflow() {
  return workflow("odd", { state: z.object({ big: z.string().default(""), note: z.string().default("") }) })
    .node("生成-🚀", () => ({ big: BIG, note: "日本語 🎉 \u001b[2J" }), { next: "終わり" })
    .node("終わり", () => ({}), { next: "END" })
    .compile();
}

let engine: Engine | undefined;
let ui: ConsoleHarness | undefined;
afterEach(async () => ([ui, engine] = await closeAll(ui, engine)));

describe("console with odd data", () => {
  it("wraps a long line of mixed-width text into rows of at most the width, losing nothing", () => {
    const text = BIG.replace(/\u001b/g, "␛");
    const rows = wrapLine([seg(text)], 78, "").map((row) => row.map((s) => s.text).join(""));
    expect(rows.join("")).toBe(text);
    expect(Math.max(...rows.map((r) => stringWidth(r)))).toBeLessThanOrEqual(78);
  });

  it("opens a 100 KB state value whole, at once, and draws CJK and emoji node names within the frame", async () => {
    const store = new MemoryStore();
    engine = createEngine({ store, worker: { pollMs: 20 }, workflows: [oddWorkflow()] });
    const run = await (await engine.start("odd", {})).wait({ timeoutMs: 10_000 });
    ui = await openConsole({ store, initial: { kind: "run", runId: run.id } });
    await ui.waitFor("✓ 生成-🚀");
    await ui.press("3");
    await ui.waitFor("big:");
    await ui.press("enter");
    await ui.waitFor(/\$\.big at checkpoint \d+ +1-\d+ of \d+/);
    await ui.press("G");
    await ui.waitFor("e\u0301end\n");
    const lines = ui.lines();
    expect(lines.length).toBeLessThanOrEqual(23);
    expect(Math.max(...lines.map((l) => stringWidth(l)))).toBeLessThanOrEqual(80);
  });
});
