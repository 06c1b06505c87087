import { afterEach, expect, it } from "vitest";
import { diffStates } from "../../engine/index.js";
import { statusLines } from "../../source/console/components/chrome.js";
import { wrapLine } from "../../source/console/components/lines.js";
import { KEYMAP } from "../../source/console/keymap.js";
import { diffLines } from "../../source/console/views/diff-lines.js";
import { fixture, settle, type Fixture } from "./fixtures.js";
import { closeAll, openConsole, type ConsoleHarness } from "./harness.js";

let fx: Fixture | undefined;
let ui: ConsoleHarness | undefined;
afterEach(async () => ([ui, fx] = await closeAll(ui, fx)));

/** Every row of a page of text, paging down to its end. */
async function wholePage(ui: ConsoleHarness): Promise<string[]> {
  const rows: string[] = [];
  for (let guard = 0; guard < 20; guard++) {
    const lines = ui.lines();
    const at = lines.findIndex((l) => l.endsWith("esc back"));
    const [, from, to, of] = / (\d+)-(\d+) of (\d+) /.exec(lines[at]!) ?? [];
    const page = from === undefined ? lines.slice(at + 1, -1) : lines.slice(at + 1, at + 2 + Number(to) - Number(from));
    rows.push(...page.slice(from === undefined ? 0 : rows.length - Number(from) + 1));
    if (to === undefined || to === of) return rows;
    await ui.press("pgdn");
    await ui.waitFor((f) => !f.includes(` ${from}-${to} of `));
  }
  throw new Error("the page did not end");
}

const PROSE =
  "Collect the quarterly results from every regional office, reconcile them against the ledger, and summarize the differences for the board before Thursday's meeting";

it("breaks the help page between words, a long help going on under itself", async () => {
  fx = fixture();
  ui = await openConsole({ store: fx.store, columns: 80, rows: 24 });
  await ui.press("?");
  await ui.waitFor("Keys");
  const rows = (await wholePage(ui)).filter((r) => r.trim() && !r.includes("? help"));
  // A row that goes on is indented to the help column; joined, every help reads whole.
  const joined = rows.join("\n").replace(/\n {18}(?=\S)/g, " ");
  for (const binding of KEYMAP.filter((b) => !("quiet" in b))) expect(joined, binding.id).toContain(binding.help);
  expect(rows.some((r) => /^ {18}\S/.test(r))).toBe(true);
});

it("shows a long text value whole broken between words, never inside one", async () => {
  fx = fixture();
  const run = await settle(fx.engine, "ask", { question: PROSE });
  ui = await openConsole({ store: fx.store, columns: 60, rows: 24, initial: { kind: "run", runId: run.id, tab: 2 } });
  await ui.waitFor("question:");
  for (let guard = 0; guard < 5 && !(ui.lines().find((l) => l.startsWith("›")) ?? "").includes("question:"); guard++) await ui.press("j");
  await ui.press("enter");
  await ui.waitFor("at checkpoint");
  const rows = (await wholePage(ui)).filter((r) => r.trim());
  const words = rows.flatMap((r) => r.trim().split(/\s+/));
  expect(words).toEqual(PROSE.split(" "));
  expect(rows.length).toBeGreaterThan(2);
});

it("breaks a diff of long texts between words, its later rows indented", () => {
  const before = { plan: "collect the results from every office and file them" };
  const after = { plan: "collect the quarterly results from every regional office, then reconcile them" };
  const rows = diffLines(diffStates(before, after)).flatMap((line) => wrapLine(line, 40)).map((row) => row.map((s) => s.text).join(""));
  expect(rows.length).toBeGreaterThan(2);
  for (const row of rows.slice(1)) expect(row).toMatch(/^ {2}\S/);
  const words = rows.join(" ").trim().split(/\s+/);
  for (const word of [...before.plan.split(" "), ...after.plan.split(" ")]) expect(words.some((w) => w.replace(/^"|"$/g, "") === word)).toBe(true);
});

it("ends a footer message longer than its rows with one …, where the last row is cut", () => {
  const text = (lines: ReturnType<typeof statusLines>) => lines.map((l) => l.map((s) => s.text).join(""));
  const cut = text(statusLines({ tone: "info", text: "x".repeat(200) }, undefined, 40));
  expect(cut).toHaveLength(3);
  expect(cut[2]).toBe(`  ${"x".repeat(36)}…`);
  const short = text(statusLines({ tone: "info", text: Array.from({ length: 40 }, () => "word").join(" ") }, undefined, 40));
  expect(short[2]).toMatch(/^ {2}(word ?)+…$/);
  expect(short[2]!.length).toBeLessThanOrEqual(40);
});
