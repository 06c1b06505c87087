import { afterEach, describe, expect, it } from "vitest";
import type { RunRecord } from "../../engine/index.js";
import { newRun } from "../../engine/runtime/new-run.js";
import { terminalClipboard } from "../../source/console/clipboard.js";
import { fixture, settle, type Fixture } from "./fixtures.js";
import { closeAll, openConsole, type ConsoleHarness } from "./harness.js";

let fx: Fixture | undefined;
let ui: ConsoleHarness | undefined;
afterEach(async () => ([ui, fx] = await closeAll(ui, fx)));

/** Runs on the memory store start and end within a millisecond: this keeps their times apart. */
const apart = () => new Promise((resolve) => setTimeout(resolve, 5));

const selectedLine = (ui: ConsoleHarness) => ui.lines().find((l) => l.startsWith("›")) ?? "";

describe("runs view", () => {
  it("lists every run with its status, workflow, step, what it waits on and its pending interrupts", async () => {
    fx = fixture();
    const paused = await settle(fx.engine, "travel-planner");
    const done = await settle(fx.engine, "task-queue");
    ui = await openConsole({ store: fx.store });
    const frame = await ui.waitFor(paused.id);
    const pausedLine = ui.lines().find((l) => l.includes(paused.id))!;
    expect(pausedLine).toMatch(/^ ‖ /);
    expect(pausedLine).toContain("travel-planner");
    expect(pausedLine).toContain("interrupt: approve");
    expect(pausedLine).toMatch(/ 1$/);
    expect(ui.lines().find((l) => l.includes(done.id))).toMatch(/✓ .*task-queue/);
    await ui.resize(120, 30);
    await ui.waitFor("‖ paused");
    expect(ui.lines()[0]).toMatch(/⚑ 1 pending .*‖ 1 paused .*✓ 1 succeeded/);
    expect(ui.lines().find((l) => l.includes(done.id))).toMatch(/✓ succeeded .*task-queue/);
    // The header shows the pending interrupt badge and counts runs by status.
    expect(frame.split("\n")[0]).toMatch(/⚑ 1 pending .*‖1 .*✓1/);
  });

  it("on a narrow screen gives up the names' width, then age, duration and step, before what a run is doing and what waits for a person", async () => {
    fx = fixture();
    const paused = await settle(fx.engine, "travel-planner");
    ui = await openConsole({ store: fx.store, columns: 60, rows: 20 });
    await ui.waitFor("NOW");
    const at60 = ui.lines().find((l) => l.includes("‖ run-"))!;
    expect(at60).toMatch(/^.‖ run-\S+ +travel-pl… +\d+ interrupt: approve +\S+ +1$/);
    expect(ui.lines().find((l) => l.includes("NOW"))).not.toContain("AGE");
    await ui.resize(45, 15);
    await ui.waitFor((f) => f.split("\n").some((l) => /^.‖ run-\S* .*interrupt/.test(l) && / 1$/.test(l)));
    const at45 = ui.lines().find((l) => /^.‖ run-/.test(l))!;
    expect(at45).toMatch(/interrupt: appr/);
    expect(at45).not.toContain(paused.id.slice(-3)); // the id gave way (the run view shows it whole)
    expect(ui.lines().every((l) => l.length <= 45)).toBe(true);
  });

  it("deletes the selected run that has ended after asking (enter alone keeps it); a run still going offers no delete", async () => {
    fx = fixture();
    const paused = await settle(fx.engine, "travel-planner");
    const done = await settle(fx.engine, "task-queue");
    ui = await openConsole({ store: fx.store });
    await ui.waitFor(done.id);
    await ui.press("g");
    expect(selectedLine(ui)).toContain(done.id);
    expect(ui.lines().at(-1)).toContain("delete");
    await ui.press("D");
    await ui.waitFor(`Delete run ${done.id} (task-queue, succeeded)?`);
    await ui.press("enter");
    await ui.waitFor("delete not confirmed; nothing deleted");
    expect(await fx.store.getRun(done.id)).toBeDefined();
    await ui.press("D");
    await ui.waitFor(`Delete run ${done.id}`);
    await ui.press("tab", "enter");
    await ui.waitFor(`deleted run ${done.id}`);
    await ui.waitFor((frame) => !frame.split("\n").some((l) => l.includes(done.id) && !l.includes("deleted run")));
    expect(await fx.store.getRun(done.id)).toBeUndefined();
    expect(selectedLine(ui)).toContain(paused.id);
    await ui.press("D");
    expect(ui.frame()).not.toContain("Delete run");
    expect(await fx.store.getRun(paused.id)).toBeDefined();
  });

  it("refuses at once, without asking, to delete a run whose child run has not ended", async () => {
    fx = fixture();
    const done = await settle(fx.engine, "task-queue");
    const travel = await settle(fx.engine, "travel-planner");
    const child = newRun({ id: "run-child", workflow: { name: travel.workflow, version: travel.version }, state: await fx.engine.run(travel.id).state(0), actor: "test", parentRunId: done.id });
    await fx.store.createRun(child);
    await fx.engine.run(child.run.id).wait({ timeoutMs: 10_000 });
    ui = await openConsole({ store: fx.store });
    await ui.waitFor("run-child");
    while (!selectedLine(ui).includes(done.id)) await ui.press("j");
    await ui.press("D");
    await ui.waitFor(`cannot delete: run ${done.id} has a child run run-child that is paused`);
    expect(ui.frame()).not.toContain("Delete run");
    expect(await fx.store.getRun(done.id)).toBeDefined();
  });

  it("says when a run waits on a sub-workflow paused for an operator, and counts its interrupt on the folded parent", async () => {
    fx = fixture();
    const parent = await settle(fx.engine, "trip-parent");
    expect(parent.status).toBe("queued");
    ui = await openConsole({ store: fx.store });
    await ui.resize(140, 30);
    await ui.waitFor(`waiting for ${parent.waitingOn}, paused`);
    const parentLine = () => ui!.lines().find((l) => l.includes(parent.id)) ?? "";
    expect(parentLine()).not.toMatch(/ 1$/);
    while (!selectedLine(ui).includes(parent.id)) await ui.press("j");
    await ui.press("space");
    await ui.waitFor(() => parentLine().includes("▸1"));
    expect(parentLine()).toMatch(/ 1$/);
  });

  it("says why a queued run is not claimed, from the workers' heartbeats: here the one live worker cannot run its workflow", async () => {
    fx = fixture();
    const init = newRun({ id: "run-unclaimed", workflow: { name: "nobody-runs-this", version: "v-none" }, state: {}, actor: "test" });
    init.run.createdAt = init.run.updatedAt = Date.now() - 90_000;
    await fx.store.createRun(init);
    ui = await openConsole({ store: fx.store, columns: 120 });
    await ui.waitFor("run-unclaimed");
    await ui.resize(220, 30);
    await ui.waitFor("no worker has taken it: the one live worker cannot run workflow nobody-runs-this");
  });

  it("says at once that a queued run waits for a slot under its workflow's limits.runsAtOnce", async () => {
    fx = fixture();
    const definition = { name: "one-at-once", state: {}, start: "a", nodes: {}, limits: { maxSteps: 10, concurrency: 1, runsAtOnce: 1 }, interruptBefore: [], interruptAfter: [] };
    await fx.store.putWorkflow({ version: "v-one-at-once", name: "one-at-once", definition: definition as never, createdAt: Date.now() });
    for (const id of ["run-at-once-1", "run-at-once-2"]) await fx.store.createRun(newRun({ id, workflow: { name: "one-at-once", version: "v-one-at-once" }, state: {}, actor: "test" }));
    // A worker elsewhere holds the first (this console's worker cannot run the version).
    await fx.store.claimRun({ owner: "elsewhere", leaseMs: 60_000, runId: "run-at-once-1" });
    ui = await openConsole({ store: fx.store, columns: 160 });
    await ui.waitFor("run-at-once-2");
    expect(ui.lines().find((l) => l.includes("run-at-once-2"))).toContain("limit: 1 of one-at-once running");
  });

  it("keeps its columns in place while paging, and says which rows are shown", async () => {
    fx = fixture();
    for (let i = 0; i < 30; i++) await settle(fx.engine, "task-queue");
    await settle(fx.engine, "trip-parent");
    ui = await openConsole({ store: fx.store });
    const columnsLine = () => ui!.lines().find((l) => l.includes("WORKFLOW")) ?? "";
    await ui.waitFor(/1-\d+ shown/);
    const before = columnsLine();
    await ui.press("pgdn", "pgdn");
    await ui.waitFor(/ (?!1-)\d+-\d+ shown/);
    expect(columnsLine()).toBe(before);
  });

  it("moves with j/k, opens a run with enter and comes back with esc where it was", async () => {
    fx = fixture();
    const first = await settle(fx.engine, "task-queue");
    await apart();
    const second = await settle(fx.engine, "task-queue");
    ui = await openConsole({ store: fx.store });
    await ui.waitFor(first.id);
    expect(selectedLine(ui)).toContain(second.id); // most recent activity first
    await ui.press("j");
    expect(selectedLine(ui)).toContain(first.id);
    await ui.press("enter");
    await ui.waitFor("1 Graph");
    expect(ui.frame()).toContain(`✓ succeeded  ${first.id}`); // the run view's summary
    await ui.press("esc");
    await ui.waitFor("by recent activity");
    expect(selectedLine(ui)).toContain(first.id);
    await ui.press("k");
    expect(selectedLine(ui)).toContain(second.id);
    await ui.press("G");
    expect(selectedLine(ui)).toContain(first.id);
    // Esc and a key right after it arrive as one alt+key sequence: both act, in order.
    await ui.press("enter");
    await ui.waitFor("1 Graph");
    await ui.press("\u001bk");
    await ui.waitFor("by recent activity");
    await ui.waitFor(() => selectedLine(ui!).includes(second.id));
  });

  it("sorts by another column with s (age, status, workflow, duration, pending) and turns the order round with S, the cursor on the first row (as after g)", async () => {
    fx = fixture();
    const paused = await settle(fx.engine, "travel-planner");
    await apart();
    const first = await settle(fx.engine, "task-queue");
    await apart();
    const last = await settle(fx.engine, "task-queue");
    ui = await openConsole({ store: fx.store, columns: 120 });
    await ui.waitFor("by recent activity");
    const order = () => ui!.lines().filter((l) => /run-/.test(l) && !l.includes("Runs")).map((l) => [paused.id, first.id, last.id].find((id) => l.includes(id)));
    // A worker's last write to a run (its release) may land after the next run started: the
    // activity order is the store's.
    const byActivity = (await fx.store.listRuns({})).runs.sort((a, b) => b.updatedAt - a.updatedAt).map((r) => r.id);
    await ui.waitFor(() => order().join() === byActivity.join());
    await ui.press("s");
    await ui.waitFor("by newest");
    expect(order()).toEqual([last.id, first.id, paused.id]);
    await ui.press("S");
    await ui.waitFor("by oldest");
    expect(order()).toEqual([paused.id, first.id, last.id]);
    expect(selectedLine(ui)).toContain(paused.id); // a new order starts at its top
    await ui.press("s");
    await ui.waitFor("by status, paused and failed first");
    expect(order()[0]).toBe(paused.id);
    await ui.press("s");
    await ui.waitFor("by workflow, A to Z");
    expect(order()[2]).toBe(paused.id); // task-queue before travel-planner
    await ui.press("S");
    await ui.waitFor("by workflow, Z to A");
    expect(order()[0]).toBe(paused.id);
    await ui.press("s", "s");
    await ui.waitFor("by most pending interrupts");
    expect(order()[0]).toBe(paused.id);
    await ui.press("s");
    await ui.waitFor("by recent activity");
    expect(order()).toEqual(byActivity);
  });

  it("copies ids with y: the selected run, the run open, the selected interrupt, the interrupt being answered", async () => {
    fx = fixture();
    const paused = await settle(fx.engine, "travel-planner");
    const done = await settle(fx.engine, "task-queue");
    const [interrupt] = await fx.store.listInterrupts({ runId: paused.id, status: "pending" });
    ui = await openConsole({ store: fx.store });
    await ui.waitFor(paused.id);
    while (!selectedLine(ui).includes(done.id)) await ui.press("j");
    await ui.press("y");
    await ui.waitFor(`copied ${done.id} to the clipboard`);
    await ui.press("enter");
    await ui.waitFor("1 Graph");
    await ui.press("y");
    await ui.press("esc", "i");
    await ui.waitFor("1 pending, oldest first");
    await ui.press("y");
    await ui.press("enter");
    await ui.waitFor("approve");
    await ui.press("y");
    expect(ui.copied).toEqual([done.id, done.id, interrupt!.id, interrupt!.id]);
    const written: string[] = [];
    terminalClipboard((data) => written.push(data))("run-é1");
    expect(written).toEqual([`\u001b]52;c;${Buffer.from("run-é1").toString("base64")}\u0007`]);
  });

  it("keeps the selection on the same run while new activity moves the rows", async () => {
    fx = fixture();
    const older = await settle(fx.engine, "task-queue");
    const second = await settle(fx.engine, "task-queue");
    ui = await openConsole({ store: fx.store });
    await ui.waitFor((f) => f.includes(older.id) && f.includes(second.id));
    // Off the first row (where the cursor stays on the first row), on whichever run is second.
    await ui.press("j");
    const held = [older.id, second.id].find((id) => selectedLine(ui!).includes(id))!;
    const newer = await settle(fx.engine, "task-queue");
    await ui.waitFor(newer.id);
    expect(ui.lines().findIndex((l) => l.includes(newer.id))).toBeLessThan(ui.lines().findIndex((l) => l.includes(held)));
    expect(selectedLine(ui)).toContain(held);
  });

  it("keeps the cursor on the first row while newer runs sort above (k9s): before any key, and after g, a sort or a filter; the list never scrolls by itself", async () => {
    fx = fixture();
    const store = fx.store;
    let n = 0;
    // Queued runs of a workflow no worker runs: each new one sorts first (most recent activity).
    const add = async () => {
      const init = newRun({ id: `run-${String(n++).padStart(3, "0")}`, workflow: { name: "nobody-runs-this", version: "v-none" }, state: {}, actor: "test" });
      init.run.createdAt = init.run.updatedAt = Date.now() + n;
      await store.createRun(init);
      return init.run.id;
    };
    for (let i = 0; i < 40; i++) await add();
    ui = await openConsole({ store });
    await ui.waitFor("1-18 shown");
    const top = () => ui!.lines()[3] ?? "";
    expect(top()).toMatch(/^›.*run-039/);
    await add();
    await ui.waitFor((f) => f.includes("Runs 41") && /^›.*run-040/m.test(f));
    expect(ui.frame()).toContain("1-18 shown");
    // Off the first row the cursor holds its run while it is on screen; the list stays where it is.
    await ui.press("j", "j");
    await ui.waitFor(/^›.*run-038/m);
    await add();
    await ui.waitFor((f) => f.includes("Runs 42") && /^›.*run-038/m.test(f));
    expect(ui.lines().findIndex((l) => l.startsWith("›"))).toBe(6);
    expect(ui.frame()).toContain("1-18 shown");
    // A run pushed off the screen leaves the cursor on its place on the screen.
    await ui.press("G");
    await ui.waitFor((f) => /^›.*run-000/m.test(f) && f.includes("25-42 shown"));
    await add();
    await ui.waitFor((f) => f.includes("Runs 43") && /^›.*run-001/m.test(f));
    expect(ui.frame()).toContain("25-42 shown");
    // g, a sort and a filter put the cursor on the first row, where it stays as runs arrive.
    await ui.press("g");
    await ui.waitFor((f) => f.includes("1-18 shown") && /^›.*run-042/m.test(f));
    await add();
    await ui.waitFor((f) => f.includes("Runs 44") && /^›.*run-043/m.test(f));
    await ui.press("G", "s");
    await ui.waitFor((f) => f.includes("by newest") && f.includes("1-18 shown"));
    expect(top()).toMatch(/^›.*run-043/);
    await ui.press("G", "/");
    await ui.waitFor("enter keeps");
    await ui.type("run-0");
    await ui.press("enter");
    await ui.waitFor((f) => f.includes("filter: run-0") && f.includes("1-18 shown"));
    expect(top()).toMatch(/^›.*run-043/);
  });

  it("finds runs by their tags as free words (ticket=t-123)", async () => {
    fx = fixture();
    const tagged = await (await fx.engine.start("task-queue", {}, { tags: { ticket: "T-123" } })).wait({ timeoutMs: 10_000 });
    const other = await settle(fx.engine, "task-queue");
    ui = await openConsole({ store: fx.store });
    await ui.waitFor(other.id);
    await ui.press("/");
    await ui.type("ticket=t-123");
    await ui.waitFor((f) => f.includes(tagged.id) && !f.includes(other.id));
  });

  it("filters by status, by workflow and by text (what the NOW column says too), live as it is typed; esc puts back the filter there was, or clears it", async () => {
    fx = fixture();
    const paused = await settle(fx.engine, "travel-planner");
    const done = await settle(fx.engine, "task-queue");
    ui = await openConsole({ store: fx.store });
    await ui.waitFor(done.id);
    await ui.press("/");
    await ui.type("status:paused");
    await ui.waitFor((f) => f.includes(paused.id) && !f.includes(done.id));
    await ui.press("esc");
    await ui.waitFor((f) => f.includes(paused.id) && f.includes(done.id));
    expect(ui.frame()).not.toContain("filter: status:paused");

    await ui.press("/");
    await ui.type("status:paused");
    await ui.press("enter");
    await ui.waitFor("filter: status:paused");
    expect(ui.frame()).toContain(paused.id);
    expect(ui.frame()).not.toContain(done.id);

    await ui.press("/");
    for (let i = 0; i < "status:paused".length; i++) await ui.press("backspace");
    await ui.type("workflow:task");
    await ui.press("enter");
    await ui.waitFor("filter: workflow:task");
    expect(ui.frame()).toContain(done.id);
    expect(ui.frame()).not.toContain(paused.id);

    await ui.press("esc");
    await ui.waitFor((f) => f.includes(paused.id) && f.includes(done.id));
    await ui.press("/");
    await ui.type(paused.id.slice(-5));
    await ui.press("enter");
    await ui.waitFor((f) => f.includes(paused.id) && !f.includes(done.id));
    await ui.press("/");
    await ui.type("zzz");
    await ui.press("enter");
    await ui.waitFor("no run matches the filter");
    // A word with a colon that names no filter key is text: what the NOW column says finds its runs.
    await ui.press("/", "ctrl-u");
    await ui.type("interrupt: approve");
    await ui.press("enter");
    const frame = await ui.waitFor("filter: interrupt: approve");
    expect(frame).toContain(paused.id);
    expect(frame).not.toContain(done.id);
  });

  it("takes apart keys that arrive in one chunk (a paste, fast typing): backspaces delete, a last enter applies, jjj moves three rows, jj⏎ opens the row reached", async () => {
    fx = fixture();
    const runs: RunRecord[] = [];
    for (let i = 0; i < 4; i++) runs.push(await settle(fx.engine, "task-queue"));
    const paused = await settle(fx.engine, "travel-planner");
    ui = await openConsole({ store: fx.store });
    await ui.waitFor(paused.id);
    await ui.press("/");
    await ui.press(`status:runningxyz${"\x7f".repeat(10)}paused\r`);
    // The enter, the chunk's last key, closes the prompt (the filter follows the text as typed).
    await ui.waitFor((f) => f.includes("filter: status:paused") && !f.includes("·"));
    expect(ui.frame()).not.toContain(runs[0]!.id);
    await ui.press("esc");
    const screen = ui;
    await screen.waitFor((f) => runs.every((r) => f.includes(r.id)));
    // The rows in the order drawn (runs that ended together may sort either way).
    const rowIds = () => screen.lines().flatMap((l) => /run-\w+/.exec(l)?.[0] ?? []);
    const order = rowIds();
    const from = order.findIndex((id) => selectedLine(screen).includes(id));
    await screen.press("jjj");
    await screen.waitFor(() => selectedLine(screen).includes(order[from + 3]!));
    // Moves and an enter in one chunk open the row the moves reached, not the one selected before.
    await screen.press("gjj\r");
    await screen.waitFor("1 Graph");
    expect(screen.frame()).toContain(`  ${order[2]}  `);
    await screen.press("esc");
    await screen.waitFor("by recent activity");
    // A status that names none matches no run (it used to be dropped, and every run shown).
    await screen.press("/");
    await screen.press("status:runpaused\r");
    await screen.waitFor("no run matches the filter");
  });

  it("shows forked runs under their parent as a tree that folds and unfolds", async () => {
    fx = fixture();
    const parent = await settle(fx.engine, "task-queue");
    const fork = await fx.engine.operator("ann").fork(parent.id, 2);
    const child = fork.result.runId as string;
    await fx.engine.run(child).wait({ timeoutMs: 10_000 });
    ui = await openConsole({ store: fx.store });
    await ui.waitFor(child);
    const lines = ui.lines();
    const parentAt = lines.findIndex((l) => l.includes(parent.id));
    expect(lines[parentAt]).toContain(`▾ ${parent.id}`);
    expect(lines[parentAt + 1]).toContain(`└─ ${child}`);
    while (!selectedLine(ui).includes(parent.id)) await ui.press("j");
    await ui.press("space");
    await ui.waitFor(`▸1 ${parent.id}`);
    expect(ui.frame()).not.toContain(child);
    await ui.press("right");
    await ui.waitFor(child);
  });

  it("follows the store live: a new run appears and a changed row flashes, without a key press", async () => {
    fx = fixture();
    ui = await openConsole({ store: fx.store });
    await ui.waitFor("no runs yet");
    const run = await settle(fx.engine, "travel-planner");
    await ui.waitFor(run.id);
    await ui.waitFor("⚑ 1 pending");
  });
});
