import { afterEach, describe, expect, it } from "vitest";
import { z } from "zod";
import { MemoryStore, createEngine, workflow } from "../../engine/index.js";
import { fixture, settle, type Fixture } from "./fixtures.js";
import { closeAll, openConsole, type ConsoleHarness } from "./harness.js";

let fx: Fixture | undefined;
let ui: ConsoleHarness | undefined;
afterEach(async () => ([ui, fx] = await closeAll(ui, fx)));

async function openRun(runId: string, tab = 0, size = { columns: 80, rows: 24 }): Promise<ConsoleHarness> {
  ui = await openConsole({ store: fx!.store, initial: { kind: "run", runId, tab }, ...size });
  await ui.waitFor("1 Graph");
  return ui;
}

const lineWith = (ui: ConsoleHarness, ...parts: string[]) => ui.lines().find((l) => parts.every((p) => l.includes(p)));
const columnOf = (line: string, text: string) => [...line.slice(0, line.indexOf(text))].length;

describe("run view: graph", () => {
  it("draws the travel planner at 80×24: parallel branches side by side, route labels, status glyphs, the current node", async () => {
    fx = fixture();
    const run = await settle(fx.engine, "travel-planner");
    ui = await openRun(run.id);
    await ui.waitFor("▶◆ approve");
    const lines = ui.lines();
    expect(lines.length).toBeLessThanOrEqual(23);
    expect(lineWith(ui, "✓ flights", "✓ hotels", "✓ weather")).toBeDefined();
    const plan = lines.findIndex((l) => l.includes("✓ plan"));
    const branches = lines.findIndex((l) => l.includes("✓ flights"));
    const join = lines.findIndex((l) => l.includes("✓ join"));
    const approve = lines.findIndex((l) => l.includes("▶◆ approve"));
    const book = lines.findIndex((l) => l.includes("○ book"));
    expect(plan).toBeLessThan(branches);
    expect(branches).toBeLessThan(join);
    expect(join).toBeLessThan(approve);
    expect(approve).toBeLessThan(book);
    // The fan-out is one bus from plan to the three branches.
    expect(lines[plan + 1]).toMatch(/╭─+┼─+╮/);
    // Route labels sit on the edges leaving the approval, above their targets.
    const labels = lines.slice(approve + 1, book + 1).find((l) => l.includes("approve") && l.includes("reject"));
    expect(labels).toBeDefined();
    expect(Math.abs(columnOf(labels!, "approve") - columnOf(lines[book]!, "book"))).toBeLessThanOrEqual(4);
    expect(lines.some((l) => l.includes("END"))).toBe(true);
    // The selected node's detail: the current node, waiting on its approval.
    expect(ui.frame()).toContain(" approve · step 4: waiting, 1 attempt");
    // The run is at the step its waiting node is in: the header and the detail say the same.
    expect(ui.frame()).toMatch(/travel-planner {2}step 4 /);
  });

  it("draws the nodes a fork's source ran before the fork point as done, not idle", async () => {
    fx = fixture();
    const source = await settle(fx.engine, "travel-planner");
    const forkId = (await fx.engine.operator("ann").fork(source.id, 2)).result.runId as string;
    await fx.engine.run(forkId).wait({ timeoutMs: 10_000 });
    ui = await openRun(forkId, 0);
    const frame = await ui.waitFor("plan");
    expect(frame).toMatch(/✓ plan/);
    expect(frame).not.toMatch(/○ plan/);
  });

  it("draws a loop as an annotation with visit counts, and YES/NO routes", async () => {
    fx = fixture();
    const run = await settle(fx.engine, "task-queue");
    ui = await openRun(run.id);
    const frame = await ui.waitFor("↺");
    expect(frame).toContain("✓ work ×3");
    expect(frame).toContain("✓ check ×3 ↺ NO/else→work");
    expect(frame).not.toContain("init ×"); // not in the loop: no visit count
    const lines = ui.lines();
    const check = lines.findIndex((l) => l.includes("check ×3"));
    const summary = lines.findIndex((l) => l.includes("✓ summary"));
    expect(lines.slice(check + 1, summary).some((l) => l.trim() === "YES")).toBe(true);
    expect(lines.findIndex((l) => l.includes("✓ init"))).toBeLessThan(lines.findIndex((l) => l.includes("work ×3")));
  });

  it("draws five parallel researchers on one row at 80 columns, with the approval between layers", async () => {
    fx = fixture();
    const run = await settle(fx.engine, "research-fanout");
    ui = await openRun(run.id);
    await ui.waitFor("▶◆ review");
    const row = lineWith(ui, "researcher-1", "researcher-2", "researcher-3", "researcher-4", "researcher-5");
    expect(row).toBeDefined();
    expect(row!.match(/✓ researcher-\d/g)).toHaveLength(5);
    const lines = ui.lines();
    const review = lines.findIndex((l) => l.includes("▶◆ review"));
    // Edges that skip the approval's layer pass it as vertical lines.
    expect((lines[review]!.match(/│/g) ?? []).length).toBe(4);
    expect(lines.findIndex((l) => l.includes("○ join"))).toBeGreaterThan(review);
  });

  it("opens a sub-workflow node's child run with enter, and p goes back to the parent", async () => {
    fx = fixture();
    const parent = await settle(fx.engine, "trip-parent");
    ui = await openRun(parent.id);
    await ui.waitFor(`⏎ opens its run ${parent.waitingOn}`);
    await ui.press("enter");
    await ui.waitFor(`‖ paused  ${parent.waitingOn}`);
    await ui.press("p");
    await ui.waitFor(`  ${parent.id}  trip-parent`);
    // The parent says what it waits on, as the runs list does.
    await ui.waitFor(`waiting for ${parent.waitingOn}, paused`);
    // p went back to the parent it was opened from: esc does not return to the child.
    await ui.press("esc");
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(ui.frame()).toContain(`  ${parent.id}  trip-parent`);
  });

  it("scrolls a graph wider than the screen sideways to the selected node", async () => {
    const store = new MemoryStore();
    const branches = Array.from({ length: 8 }, (_, i) => `researcher-number-${i + 1}`);
    let builder = workflow("wide-fanout", { state: z.object({}) }).node("split", () => ({}), { next: branches });
    for (const b of branches) builder = builder.node(b, () => ({}), { next: "END" });
    const wide = builder.compile();
    const engine = createEngine({ store, worker: { pollMs: 20 }, workflows: [wide] });
    fx = { store, engine, close: () => engine.close() };
    const run = await settle(engine, "wide-fanout");
    ui = await openRun(run.id);
    const graphRows = (f: string) => f.split("\n").filter((l) => !l.includes("· step"));
    await ui.waitFor(/◀ columns \d+-\d+ of \d+ ▶/); // split, in the middle, is selected
    while (!ui.frame().includes(" researcher-number-1 · step")) await ui.press("j");
    let frame = await ui.waitFor(/ columns 1-78 of \d+ ▶/);
    expect(graphRows(frame).some((l) => l.includes("researcher-number-1"))).toBe(true);
    expect(graphRows(frame).some((l) => l.includes("researcher-number-8"))).toBe(false);
    while (!ui.frame().includes(" researcher-number-8 · step")) await ui.press("j");
    frame = await ui.waitFor(/◀ columns \d+-(\d+) of \1(?! ▶)/);
    expect(graphRows(frame).some((l) => l.includes("researcher-number-8"))).toBe(true);
  });

  it("selects nodes with j/k and describes the selected one", async () => {
    fx = fixture();
    const run = await settle(fx.engine, "travel-planner");
    ui = await openRun(run.id);
    await ui.waitFor(" approve · step 4: waiting");
    await ui.press("g");
    await ui.waitFor(/ plan · step 1: succeeded, 1 attempt, ran \d+ms — action plan/);
    await ui.press("j", "j", "j");
    await ui.waitFor(/ weather · step 2: succeeded/);
    await ui.press("k");
    await ui.waitFor(/ hotels · step 2: succeeded, 2 attempts, ran \d+ms \(last \d+ms/);
  });

  it("stays inside the frame on a big terminal and when resized", async () => {
    fx = fixture();
    const run = await settle(fx.engine, "travel-planner");
    ui = await openRun(run.id, 0, { columns: 200, rows: 60 });
    await ui.waitFor("▶◆ approve");
    expect(ui.lines().length).toBeLessThanOrEqual(59);
    expect(Math.max(...ui.lines().map((l) => [...l].length))).toBeLessThanOrEqual(200);
    await ui.resize(60, 15);
    await ui.waitFor((f) => f.split("\n").filter(Boolean).length <= 14 && !f.includes("✓ weather  "));
    expect(ui.lines().length).toBeLessThanOrEqual(14);
    expect(Math.max(...ui.lines().map((l) => [...l].length))).toBeLessThanOrEqual(60);
  });
});

describe("run view: events, state, checkpoints, timeline", () => {
  it("lists events one per line, follows the tail, filters by type and shows a payload with enter", async () => {
    fx = fixture();
    const run = await settle(fx.engine, "travel-planner");
    ui = await openRun(run.id, 1);
    await ui.waitFor("following ●");
    expect(lineWith(ui, "task.failed", "hotels", "hotel API timed out")).toBeDefined();
    expect(ui.lines().filter((l) => /^\s+\d+ \d\d:\d\d:\d\d /.test(l)).length).toBeGreaterThan(10);
    // The last event is selected while following.
    expect(ui.lines().filter((l) => /^\s+\d+ \d\d:\d\d:\d\d /.test(l)).pop()).toContain("run.paused");

    await ui.press("f");
    await ui.waitFor("paused (f follows)");
    await ui.press("/");
    await ui.type("task.failed");
    await ui.press("enter");
    await ui.waitFor("filter: task.failed");
    expect(ui.frame()).toMatch(/1 of the \d+ events/);
    await ui.press("enter");
    await ui.waitFor("· task.failed");
    expect(ui.frame()).toMatch(/· task\.failed · \d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z/);
    expect(ui.frame()).toContain('"willRetry": true');
    expect(ui.frame()).toContain('"error": "hotel API timed out"');
    const framesBefore = ui.frames().length;
    await ui.press("esc");
    await ui.waitFor("filter: task.failed");
    // Back from the page, the run and its events are drawn at once, not read again from nothing.
    expect(ui.frames().slice(framesBefore).filter((f) => f.includes("reading run") || / 0 events/.test(f))).toEqual([]);
    await ui.press("esc");
    await ui.waitFor((f) => !f.includes("filter:"));
  });

  it("holds the selected event still while new ones arrive with following off, also as the oldest kept slide away", async () => {
    // A run with more events than the tab keeps (5,000): new ones push the oldest out of the window.
    const store = new MemoryStore();
    const chatty = workflow("chatty", { state: z.object({}) })
      .node("talk", async (_s, ctx) => {
        for (let i = 0; i < 5_100; i++) ctx.log.info(`line ${i}`);
        await ctx.interrupt({ question: "Go on?" });
        return {};
      }, { next: "END" })
      .compile();
    const engine = createEngine({ store, worker: { pollMs: 20 }, workflows: [chatty] });
    fx = { store, engine, close: () => engine.close() };
    const run = await settle(engine, "chatty");
    ui = await openRun(run.id, 1, { columns: 80, rows: 12 });
    await ui.waitFor("last 5000 of");
    await ui.waitFor("following ●");
    await ui.press("k", "k");
    await ui.waitFor("paused (f follows)");
    // Which event is selected: enter opens it, and its page names it.
    const selectedEvent = async () => {
      await ui!.press("enter");
      const title = /event (\d+) · ([\w.]+)/.exec(await ui!.waitFor(/event \d+ · /))!.slice(1).join(" ");
      await ui!.press("esc");
      await ui!.waitFor(/last 5000 of \d+ events {2}paused \(f follows\)/);
      return title;
    };
    const before = await selectedEvent();
    const count = () => Number(/of (\d+) events/.exec(ui!.frame())?.[1]);
    const seen = count();
    const op = fx.engine.operator("ann");
    for (let i = 0; i < 4; i++) await op.breakpoint(run.id, "talk").then(() => op.clearBreakpoint(run.id, "talk"));
    await ui.waitFor(() => count() >= seen + 16);
    expect(await selectedEvent()).toBe(before);
  });

  it("receives new events live while open", async () => {
    fx = fixture();
    const run = await settle(fx.engine, "travel-planner");
    ui = await openRun(run.id, 1);
    await ui.waitFor("run.paused");
    const [pending] = await fx.store.listInterrupts({ runId: run.id, status: "pending" });
    await fx.engine.operator("ann").resolve(pending!.id, { decision: "approve" });
    await ui.waitFor("run.succeeded");
    expect(ui.frame()).toContain("interrupt.resolved");
  });

  it("shows the state as a folded tree; space folds, enter opens a long value whole", async () => {
    fx = fixture();
    const run = await settle(fx.engine, "travel-planner", { city: `Lisbon ${"and beyond ".repeat(20)}the end` });
    ui = await openRun(run.id, 2);
    await ui.waitFor("state at checkpoint");
    expect(ui.frame()).toContain("budget: 1200");
    expect(ui.frame()).toContain("▾ notes: [5 items]");
    expect(ui.frame()).toContain('1: "flight TP123"');
    await ui.press("j", "j"); // city, budget, notes
    await ui.press("space");
    await ui.waitFor("▸ notes: [5 items]");
    expect(ui.frame()).not.toContain("flight TP123");
    await ui.press("g");
    expect(ui.frame()).toContain("⏎ whole");
    await ui.press("enter");
    await ui.waitFor("$.city at checkpoint");
    expect(ui.frame().replace(/\s+/g, " ")).toContain("beyond the end"); // broken between words
  });

  it("diffs a checkpoint against its parent, and two marked checkpoints, in colour-coded lines", async () => {
    fx = fixture();
    const run = await settle(fx.engine, "travel-planner");
    ui = await openRun(run.id, 3);
    await ui.waitFor("4 checkpoints");
    expect(lineWith(ui, "input", "engine")).toMatch(/■ [\d.]+[BKM]$/);
    expect(lineWith(ui, "loop", "flights, hotels")).not.toContain("■");
    expect(ui.frame()).toContain("d diff marked · ■ snapshot");
    await ui.press("k");
    await ui.press("enter");
    await ui.waitFor("checkpoint 2 against its parent 1");
    expect(ui.frame()).toContain("+ $.notes +3 items");
    await ui.press("esc");
    await ui.waitFor("4 checkpoints");
    await ui.press("g", "space", "G", "space");
    await ui.waitFor("mark (0, 3)");
    await ui.press("d");
    await ui.waitFor("checkpoint 0 → 3");
    expect(ui.frame()).toContain("+ $.notes +5 items");
    // A line longer than the screen is wrapped, so the appended items are read to the last one.
    expect(ui.frame()).toMatch(/"itinerary\n\s+ready"\]/);
    expect(ui.frame()).not.toContain("…");
  });

  it("compares two checkpoints side by side where the screen has room: each changed path, its value before and after", async () => {
    fx = fixture();
    const run = await settle(fx.engine, "travel-planner");
    await fx.engine.operator("ann").updateState(run.id, { budget: 999 });
    ui = await openRun(run.id, 3, { columns: 140, rows: 40 });
    await ui.waitFor("5 checkpoints");
    await ui.press("G", "enter");
    await ui.waitFor("checkpoint 4 against its parent 3");
    const heading = lineWith(ui, "checkpoint 3 · step 3 · loop by worker:", "checkpoint 4 · step 3 · update by operator:ann")!;
    expect(heading.indexOf("│")).toBeGreaterThan(60);
    expect(ui.frame()).toContain("~ $.budget");
    // Before on the left, after on the right, on the same row.
    expect(lineWith(ui, "1200", "│")).toMatch(/^ 1200 +│ 999 *$/);
    await ui.press("esc");
    await ui.waitFor("5 checkpoints");
    await ui.press("g", "space", "j", "j", "j", "space", "d");
    await ui.waitFor("checkpoint 0 → 3");
    expect(lineWith(ui, "(the list as it was)", "│")).toMatch(/│ \+5 items:$/);
    expect(ui.frame()).toContain('│   "itinerary ready"');
    expect(ui.lines().every((l) => l.length <= 140)).toBe(true);
  });

  it("d with fewer than two checkpoints marked says what is missing, and diffs one marked against the selected one", async () => {
    fx = fixture();
    const run = await settle(fx.engine, "travel-planner");
    ui = await openRun(run.id, 3);
    await ui.waitFor("4 checkpoints");
    await ui.press("d");
    await ui.waitFor("mark a checkpoint with space, then d diffs it with the selected one");
    await ui.press("g", "space");
    await ui.waitFor("mark (0)");
    await ui.press("d");
    await ui.waitFor("select another checkpoint to diff with 0 (or mark a second with space)");
    expect(ui.frame()).not.toContain("nothing here it applies to");
    await ui.press("j", "j");
    await ui.press("d");
    await ui.waitFor("checkpoint 0 → 2");
    expect(ui.frame()).toContain("+ $.notes +4 items");
  });

  it("draws a waterfall of attempts: the retry, its wait, outcomes and durations", async () => {
    fx = fixture();
    const run = await settle(fx.engine, "travel-planner");
    ui = await openRun(run.id, 4);
    await ui.waitFor("attempts");
    const failed = lineWith(ui, "s2 hotels #1");
    const retried = lineWith(ui, "s2 hotels #2");
    expect(failed).toMatch(/█+.*✗ hotel API/);
    expect(retried).toMatch(/┄+█+.*✓/);
    expect(lineWith(ui, "s4 approve #1")).toMatch(/◆ waiting/);
    expect(ui.lines().findIndex((l) => l.includes("s1 plan"))).toBeLessThan(ui.lines().findIndex((l) => l.includes("s3 join")));
    // The legend: ┄ is a retry's backoff and a pause of any kind, named in full where there is room.
    expect(lineWith(ui, "· queued")).toMatch(/█ ran \(colour: outcome\) {2}┄ backoff or pause *$/);
    await ui.resize(140, 24);
    await ui.waitFor("┄ retry backoff or pause (question, timer, sub-workflow)  ⏎ the task, its calls");
  });

  it("draws a node resumed after its interrupt was answered as one row, the pause marked between its bars; a retry stays a row of its own", async () => {
    fx = fixture();
    const run = await settle(fx.engine, "travel-planner");
    const [pending] = await fx.store.listInterrupts({ runId: run.id, status: "pending" });
    await fx.engine.operator("ann").resolve(pending!.id, { decision: "approve" });
    await fx.engine.run(run.id).wait({ until: "end", timeoutMs: 5_000 });
    const approve = (await fx.store.listTasks(run.id)).find((t) => t.node === "approve")!;
    expect(approve.attempts.map((a) => a.outcome)).toEqual(["interrupted", "succeeded"]);
    ui = await openRun(run.id, 4);
    await ui.waitFor("s4 approve #1");
    expect(lineWith(ui, "s4 approve #1")).toMatch(/█+┄+█+ +\d+ms ✓ \(\+1 resume\)/);
    expect(lineWith(ui, "s4 approve #2")).toBeUndefined();
    expect(lineWith(ui, "s2 hotels #1")).toMatch(/✗ hotel API/);
    expect(lineWith(ui, "s2 hotels #2")).toMatch(/┄+█+.*✓/);
    // A row per try, as show counts them: the resume is no attempt of its own.
    const tries = (await fx.store.listTasks(run.id)).reduce((n, t) => n + t.attempts.length, 0) - 1;
    expect(ui.frame()).toContain(`${tries} attempts`);
  });

  it("shows the progress a running node reported before the run was opened", async () => {
    fx = fixture();
    const handle = await fx.engine.start("quiet");
    const store = fx.store;
    while ((await store.readEvents({ runId: handle.id, types: ["node.progress"] })).length === 0) await new Promise((r) => setTimeout(r, 10));
    await openRun(handle.id);
    await ui!.waitFor("▶● warm 37%");
    await fx.engine.operator("ann").cancel(handle.id, { reason: "test over" });
  });

  it("drops whole footer entries that do not fit, never half a word", async () => {
    fx = fixture();
    const run = await settle(fx.engine, "travel-planner");
    await openRun(run.id, 0, { columns: 70, rows: 24 });
    await ui!.waitFor("o answer");
    expect(lineWith(ui!, "? help")!.trimEnd()).toBe("j/k move  ⏎ open  b breakpoint  1-5 tabs  o answer  … ? help  q quit");
  });
});
