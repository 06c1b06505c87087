import { readFileSync } from "node:fs";
import stringWidth from "string-width";
import { afterEach, describe, expect, it } from "vitest";
import { KEYMAP } from "../../source/console/keymap.js";
import { fixture, settle, type Fixture } from "./fixtures.js";
import { closeAll, openConsole, type ConsoleHarness } from "./harness.js";

let fx: Fixture | undefined;
let ui: ConsoleHarness | undefined;
afterEach(async () => ([ui, fx] = await closeAll(ui, fx)));

/** The line of the open text field: after its title, up to the cursor. */
const fieldText = (frame: string, title: string) => {
  const line = frame.split("\n").find((l) => l.startsWith(`${title} `) && l.includes("█"));
  return line?.slice(title.length + 1, line.indexOf("█"));
};

const footer = (ui: ConsoleHarness) => ui.lines().at(-1) ?? "";

const WRITING_KEYS = ["a", "r", "e", "t", "x", "ctrl-k", "R", "E", "b", "C", "!", "F", "D"];

/** Every screen of the console, reached with keys, checked by `check` on the way. */
async function visitEverything(ui: ConsoleHarness, runId: string, checkNow: (what: string) => void): Promise<void> {
  // The footer fills in once the view has registered its keys.
  const check = async (what: string) => {
    await ui.waitFor((f) => /\? help|esc cancel/.test(f));
    checkNow(what);
  };
  await ui.waitFor(runId);
  await check("runs");
  await ui.press(":");
  await ui.waitFor("tab completes");
  await check("palette");
  await ui.press("esc");
  while (!(ui.lines().find((l) => l.startsWith("›")) ?? "").includes(runId)) await ui.press("j");
  await ui.press("enter");
  await ui.waitFor("1 Graph");
  for (const tab of ["1", "2", "3", "4", "5"]) {
    await ui.press(tab);
    await new Promise((resolve) => setTimeout(resolve, 30));
    await check(`run tab ${tab}`);
  }
  await ui.press("2");
  await ui.waitFor("run.paused");
  await ui.press("enter");
  await ui.waitFor("· run.paused");
  await check("event payload");
  await ui.press("esc", "i");
  await ui.waitFor("oldest first");
  await check("interrupts");
  await ui.press("enter");
  await ui.waitFor(/Interrupt 1 of \d/);
  await check("operator panel");
  await ui.press("?");
  await ui.waitFor("Keys");
  await check("help");
  await ui.press("esc");
}

describe("console qualities", () => {
  for (const [columns, rows] of [
    [80, 24],
    [200, 60],
  ] as const) {
    it(`keeps every frame at most ${rows - 1} rows tall and ${columns} wide at ${columns}×${rows}`, async () => {
      fx = fixture();
      const run = await settle(fx.engine, "travel-planner");
      await settle(fx.engine, "task-queue");
      await settle(fx.engine, "research-fanout");
      ui = await openConsole({ store: fx.store, columns, rows });
      const checked: string[] = [];
      await visitEverything(ui, run.id, (what) => {
        const lines = ui!.lines();
        expect(lines.length, what).toBeLessThanOrEqual(rows - 1);
        expect(Math.max(...lines.map((l) => stringWidth(l))), what).toBeLessThanOrEqual(columns);
        checked.push(what);
      });
      // A dialog shares the height with the view above it.
      await ui.waitFor("Decide:");
      await ui.press("r");
      await ui.waitFor("Reject:");
      expect(ui.lines().length).toBeLessThanOrEqual(rows - 1);
      expect(checked).toHaveLength(11);
      // Long lists draw only their visible rows.
      expect(ui.frames().every((f) => f.split("\n").length <= rows)).toBe(true);
    });
  }

  it("registers no writing action when read-only: footer says RO, help lists none, writing keys do nothing", async () => {
    fx = fixture();
    const run = await settle(fx.engine, "travel-planner");
    const slow = await fx.engine.start("slow");
    ui = await openConsole({ store: fx.store, readOnly: true });
    expect(ui.frame()).toMatch(/RO/);
    const seen: string[] = [];
    await visitEverything(ui, run.id, (what) => {
      const footer = ui!.lines().find((l) => l.startsWith(" RO "));
      expect(footer, what).toBeDefined();
      for (const label of ["kill", "retry", "breakpoint", "cancel run", "fork", "approve", "reject", "respond", " edit", "delete"]) {
        expect(footer!, `${what}: ${label}`).not.toContain(label);
      }
      seen.push(what);
    });
    await ui.press("?");
    const help = await ui.waitFor("Keys");
    for (const binding of KEYMAP) {
      if ("writes" in binding) expect(help).not.toContain(binding.help);
    }
    await ui.press("esc", "i", "enter");
    await ui.waitFor("read-only console: allowed decisions are approve, reject, edit");
    await ui.press(...WRITING_KEYS);
    await ui.press(":");
    await ui.type(`run ${slow.id}`);
    await ui.press("enter");
    await ui.waitFor("▶● crunch");
    await ui.press(...WRITING_KEYS, "4", ...WRITING_KEYS);
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(await fx.store.listCommands({})).toEqual([]);
    expect((await fx.store.listInterrupts({ status: "pending" })).length).toBe(1);
    expect(seen.length).toBe(11);
  });

  it("strips terminal control sequences from state and event text before drawing", async () => {
    fx = fixture();
    const run = await settle(fx.engine, "hostile");
    ui = await openConsole({ store: fx.store, initial: { kind: "run", runId: run.id, tab: 2 } });
    await ui.waitFor("output:");
    const safe = (raw: string) => raw.replace(/\u001b\[[\d;]*m/g, "");
    const assertClean = (where: string) => {
      const raw = safe(ui!.raw());
      expect(raw, where).not.toMatch(/[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u202e]/);
    };
    // JSON shows control characters escaped; the one JSON leaves alone (U+202E) is neutralized.
    expect(ui.frame()).toContain('output: "before\\u001b]0;pwned');
    assertClean("state tab");
    await ui.press("enter");
    await ui.waitFor("$.output");
    expect(ui.frame()).toMatch(/beforemovedred␍after·/);
    expect(ui.frame()).not.toContain("pwned title"); // the title-setting sequence is gone, payload and all
    assertClean("value shown whole");
    await ui.press("esc", "2");
    await ui.waitFor("node.log");
    expect(ui.frame()).toMatch(/info: before.*moved/);
    assertClean("events tab");
    await ui.press("/");
    await ui.type("node.log");
    await ui.press("enter", "enter");
    await ui.waitFor("· node.log");
    assertClean("event payload");
  });

  it("keeps columns aligned when text holds wide characters (CJK, emoji)", async () => {
    fx = fixture();
    const ja = await settle(fx.engine, "failing", { lang: "ja" });
    const en = await settle(fx.engine, "failing", { lang: "en" });
    expect(ja.status).toBe("failed");
    ui = await openConsole({ store: fx.store, columns: 160, rows: 30 });
    await ui.waitFor("接続に失敗しました 🚀");
    // Both rows end with the duration column at the same screen column, whatever the text before it.
    const ends = () => [ja.id, en.id].map((id) => stringWidth(ui!.lines().find((l) => l.includes(id))!.trimEnd()));
    expect(ends()[0]).toBe(ends()[1]);
    for (const columns of [100, 93, 80]) {
      await ui.resize(columns, 24);
      await ui.waitFor((f) => f.split("\n").every((l) => stringWidth(l) <= columns));
      expect(ends()[0], `at ${columns} columns`).toBe(ends()[1]);
    }
  });

  it("answers the palette: :run <id prefix>, :interrupts, unknown commands, tab completion", async () => {
    fx = fixture();
    const run = await settle(fx.engine, "task-queue");
    ui = await openConsole({ store: fx.store });
    await ui.waitFor(run.id);
    await ui.press(":");
    await ui.type(`run ${run.id.slice(0, 7)}`);
    await ui.waitFor(`↹ run ${run.id}`);
    await ui.press("tab", "enter");
    await ui.waitFor(`✓ succeeded  ${run.id}`);
    await ui.press(":");
    await ui.type("interrupts");
    await ui.press("enter");
    await ui.waitFor("nothing is waiting for an operator");
    await ui.press(":");
    await ui.type("launch");
    await ui.press("enter");
    await ui.waitFor('unknown command ":launch"');
    await ui.press(":");
    await ui.type("runs");
    await ui.press("enter");
    await ui.waitFor("by recent activity");
    // Typed faster than the palette opens: nothing is lost to the view underneath.
    await ui.typeAhead(`:run ${run.id}\r`);
    await ui.waitFor(`✓ succeeded  ${run.id}`);
    // A run the list does not hold is read from the store; one that does not exist says so.
    await ui.press(":");
    await ui.type("run run-nosuchrun");
    await ui.press("enter");
    await ui.waitFor("✗ run run-nosuchrun not found");
    expect(ui.frame()).toContain(`✓ succeeded  ${run.id}`); // said in the footer; no view opened
    // What follows the id (a key typed on in the same burst) is not part of it.
    await ui.press(":");
    await ui.type(`run ${run.id} 2`);
    await ui.press("enter");
    await ui.waitFor(`✓ succeeded  ${run.id}`);
  });

  it("says how many more runs the palette's :run matches than it lists, and tab completes only what they share", async () => {
    fx = fixture();
    const runs = [];
    for (let i = 0; i < 5; i++) runs.push(await settle(fx.engine, "task-queue"));
    ui = await openConsole({ store: fx.store });
    await ui.waitFor(runs[4]!.id);
    await ui.press(":");
    await ui.type("run run-");
    await ui.waitFor("… 2 more: type more to narrow them");
    // Five ids share only "run-": tab leaves the text as it is rather than taking the first.
    await ui.press("tab");
    await ui.press("enter");
    await ui.waitFor(/"run-" matches 5 runs/);
  });

  it("prints help generated from the key table", async () => {
    fx = fixture();
    ui = await openConsole({ store: fx.store, rows: 100, columns: 120 });
    await ui.press("?");
    const help = await ui.waitFor("Keys");
    for (const binding of KEYMAP) expect(help, binding.id).toContain(binding.help);
    expect(help).toMatch(/ctrl-k\s+kill the selected node's running task\s+\(writes\)/);
    // q on a page of text closes it (as in less or k9s); the console goes on.
    await ui.press("q");
    await ui.waitFor("Runs");
    expect(ui.frame()).not.toContain("show this help");
  });

  it("documents every key of the table in the README", () => {
    const readme = readFileSync(new URL("../../README.md", import.meta.url), "utf8");
    const keys = readme.slice(readme.indexOf("### Console keys"));
    for (const binding of KEYMAP) expect(keys, binding.id).toContain(`| ${binding.help}`);
  });

  it("edits every text field alike: ctrl-u clears the line, ctrl-w deletes the last word, no control character is ever inserted", async () => {
    fx = fixture();
    const run = await settle(fx.engine, "travel-planner");
    ui = await openConsole({ store: fx.store, columns: 100 });
    // Keys of one chunk act one by one, each once the screen is drawn: the field is polled.
    const field = (title: string, text: string) => ui!.waitFor((f) => fieldText(f, title) === text);
    await ui.waitFor(run.id);

    // The runs filter, keys pressed one by one.
    await ui.press("/");
    await ui.waitFor("enter keeps");
    await ui.type("status:paused hotels");
    await ui.press("ctrl-w");
    await field("/", "status:paused ");
    await ui.press("ctrl-u");
    await field("/", "");
    // Typed faster than the terminal is read, ctrl-u arrives in one chunk with the text around it.
    await ui.press("abc\u0015trav");
    await field("/", "trav");
    await ui.press("el hot\u0017planner");
    await field("/", "travel planner");
    // A paste holding control characters and escape sequences inserts only what can be typed.
    await ui.press("\u0015x\u0000\u001c\u009b31my\u200ez");
    await field("/", "xyz");
    expect(ui.frame()).not.toMatch(/[␀-␡]/);
    await ui.press("esc");

    // The palette.
    await ui.press(":");
    await ui.waitFor("tab completes");
    await ui.type("rnus");
    await ui.press("ctrl-u");
    await ui.type("interrupts");
    await field(":", "interrupts");
    await ui.press("enter");
    await ui.waitFor("oldest first");
    await ui.press("esc");

    // A reason in a confirmation.
    await ui.press("enter");
    await ui.waitFor("1 Graph");
    await ui.press("C");
    await ui.waitFor("Reason:");
    await ui.press("by mistake\u0015no longer needed now");
    await ui.press("ctrl-w");
    await ui.waitFor(/Reason: no longer needed █/);
    await ui.press("enter", "enter");
    await ui.waitFor("canceled");
    const canceled = (await fx.store.readEvents({ runId: run.id })).find((e) => e.type === "run.canceled");
    expect(JSON.stringify(canceled?.payload)).toContain('"no longer needed"');
  });

  it("clears a footer message when the operator moves to another view or tab; an action's outcome that moved stays", async () => {
    fx = fixture();
    const run = await settle(fx.engine, "task-queue");
    ui = await openConsole({ store: fx.store, columns: 100 });
    await ui.waitFor(run.id);

    await ui.press(":");
    await ui.waitFor("tab completes");
    await ui.type("foo");
    await ui.press("enter");
    await ui.waitFor('✗ unknown command ":foo"');
    await ui.press("enter");
    await ui.waitFor("1 Graph");
    expect(footer(ui)).not.toContain("unknown command");

    // A key that applies to nothing on the Graph tab: the next tab is not about it.
    await ui.press("ctrl-k");
    await ui.waitFor(`ctrl-k: run ${run.id} has ended (succeeded); only a running task can be killed`);
    await ui.press("2");
    await ui.waitFor("run.succeeded");
    expect(ui.frame()).not.toContain("only a running task can be killed");
    await ui.press("ctrl-k");
    await ui.waitFor("ctrl-k (kill): nothing here it applies to");
    await ui.press("esc");
    await ui.waitFor(" Runs ");
    expect(ui.frame()).not.toContain("nothing here it applies to");

    // Forking opens the new run: the outcome is about where it moved, and stays.
    await ui.press("enter");
    await ui.waitFor("1 Graph");
    await ui.press("4");
    await ui.waitFor(/\d+ checkpoints/);
    await ui.press("F");
    await ui.waitFor("Reason (optional)");
    await ui.press("tab", "enter");
    await ui.waitFor((f) => f.includes("1 Graph") && !f.includes(`  ${run.id}  `));
    await ui.waitFor(/^✓ .*fork/m);
  });
});
