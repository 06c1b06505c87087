import { chmodSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { readState, type RunRecord } from "../../engine/index.js";
import { fixture, settle, type Fixture } from "./fixtures.js";
import { closeAll, openConsole, type ConsoleHarness } from "./harness.js";

let fx: Fixture | undefined;
let ui: ConsoleHarness | undefined;
let scripts: string;
afterEach(async () => ([ui, fx] = await closeAll(ui, fx)));

/** An $EDITOR that is a script: it edits the file it is given like a person would, then exits. */
function editorScript(name: string, body: string): string {
  const file = join(scripts, name);
  writeFileSync(file, `#!/bin/sh\n${body}\n`);
  chmodSync(file, 0o755);
  return file;
}

beforeAll(() => {
  scripts = mkdtempSync(join(tmpdir(), "pitwall-editors-"));
});
afterAll(() => rmSync(scripts, { recursive: true, force: true }));

async function openPanel(f: Fixture, options: { coalesceMs?: number; editorCommand?: string } = {}) {
  ui = await openConsole({ store: f.store, ...options });
  // The header counts the pending interrupts once they are read (the runs list comes first).
  await ui.waitFor(/⚑ [1-9]\d* pending/);
  await ui.press("i");
  await ui.waitFor(/[1-9]\d* pending, oldest first/);
  await ui.press("enter");
  await ui.waitFor(/Interrupt \d of \d/);
  return ui;
}

const pendingOf = async (f: Fixture, runId: string) => f.store.listInterrupts({ runId, status: "pending" });

describe("operator panel", () => {
  it("takes another decision (x) only after a confirmation that says what it does: skip at a before-interrupt", async () => {
    fx = fixture();
    const run = await fx.engine.start("task-queue", {}, { interruptBefore: ["work"] });
    await run.wait();
    ui = await openPanel(fx);
    await ui.waitFor("x skip");
    await ui.press("x");
    await ui.waitFor("Decision:");
    await ui.type("skip");
    await ui.press("enter");
    const frame = await ui.waitFor("Skip: About to run");
    expect(frame.replace(/\s*\n\s*▌ /g, " ")).toContain('"work" will not run: the run goes on along its edges as if it had written nothing.');
    expect(await pendingOf(fx, run.id)).toHaveLength(1);
    await ui.press("tab", "enter");
    await ui.waitFor(/resolved int-\S+ with skip \(work will not run\)/);
  });

  it("shows a long question whole, broken between words", async () => {
    fx = fixture();
    const words = Array.from({ length: 60 }, (_, i) => `word${i}`);
    const run = await fx.engine.start("ask", { question: `${words.join(" ")}?` });
    await run.wait();
    ui = await openPanel(fx);
    const frame = await ui.waitFor("word59?");
    const text = frame.split("\n").join(" ");
    for (const word of words) expect(text).toMatch(new RegExp(`\\b${word}\\b`));
  });

  it("approves, goes back to the queue (a second key press decides nothing), and the runs finish", async () => {
    fx = fixture();
    const a = await settle(fx.engine, "travel-planner", { city: "Oslo" });
    const b = await settle(fx.engine, "travel-planner", { city: "Rome" });
    ui = await openPanel(fx);
    let frame = await ui.waitFor("Interrupt 1 of 2");
    expect(frame).toContain("Book this trip?");
    expect(frame).toContain('city: "Oslo"');
    expect(frame).toContain("budget: 1200");
    expect(frame).toMatch(/a approve\s+r reject \(with a reason\)\s+e edit the state/);
    await ui.press("a");
    frame = await ui.waitFor("pending, oldest first");
    expect(frame).toMatch(/✓ resolved int-\S+ with approve/);
    // The same key again, as a double tap would send it: the queue has no such key.
    await ui.press("a");
    await ui.waitFor("⚑ 1 pending");
    await ui.press("enter");
    frame = await ui.waitFor("Interrupt 1 of 1");
    expect(frame).toContain('city: "Rome"');
    expect(await pendingOf(fx, b.id)).toHaveLength(1);
    await ui.press("a");
    await ui.waitFor("nothing is waiting for an operator");
    for (const run of [a, b]) expect((await fx.engine.run(run.id).wait({ until: "end", timeoutMs: 5_000 })).status).toBe("succeeded");
    const [resolved] = await fx.store.listInterrupts({ runId: a.id });
    expect(resolved!.resolution).toMatchObject({ decision: "approve", actor: "operator:tester" });
    await ui.press("esc");
    await ui.waitFor("✓2");
  });

  it("marks interrupts in the queue with space (* all) and approves or rejects the marked ones at once, after listing them", async () => {
    fx = fixture();
    const runs: RunRecord[] = [];
    for (const city of ["Oslo", "Rome", "Kyiv"]) runs.push(await settle(fx.engine, "travel-planner", { city }));
    ui = await openConsole({ store: fx.store });
    await ui.waitFor("⚑ 3 pending");
    await ui.press("i");
    await ui.waitFor("3 pending, oldest first");
    await ui.press("a");
    await ui.waitFor("a (approve marked): nothing here it applies to");
    await ui.press("space", "j", "j", "space");
    let frame = await ui.waitFor("2 marked");
    expect(frame.split("\n").filter((l) => l.startsWith("◆")).map((l) => runs.findIndex((r) => l.includes(r.id)))).toEqual([0, 2]);
    await ui.press("a");
    frame = await ui.waitFor("Approve 2 interrupts?");
    const listed = frame.split("\n").filter((l) => l.startsWith("▌"));
    expect(runs.map((r) => listed.some((l) => l.includes(r.id)))).toEqual([true, false, true]);
    await ui.press("enter"); // Cancel is the default
    await ui.waitFor("approve not confirmed; nothing sent");
    expect(await pendingOf(fx, runs[0]!.id)).toHaveLength(1);
    await ui.press("a");
    await ui.waitFor("Approve 2 interrupts?");
    await ui.press("tab", "enter");
    await ui.waitFor("approved 2 interrupts");
    await ui.waitFor("1 pending, oldest first");
    for (const i of [0, 2]) expect((await fx.engine.run(runs[i]!.id).wait({ until: "end", timeoutMs: 5_000 })).status).toBe("succeeded");
    expect(await pendingOf(fx, runs[1]!.id)).toHaveLength(1);

    await ui.press("*");
    await ui.waitFor("1 pending, oldest first · 1 marked");
    // One arriving meanwhile is not marked by the next *: that clears the marks.
    const late = await settle(fx.engine, "travel-planner", { city: "Lima" });
    await ui.waitFor("2 pending, oldest first · 1 marked");
    await ui.press("*");
    await ui.waitFor("2 pending, oldest first");
    await ui.press("*");
    await ui.waitFor("2 pending, oldest first · 2 marked");
    await ui.press("r");
    await ui.waitFor("Reject 2 interrupts?");
    await ui.type("not now");
    await ui.press("enter"); // from the reason to the action button
    await ui.waitFor("[Reject 2]");
    await ui.press("enter");
    await ui.waitFor("rejected 2 interrupts");
    expect((await fx.store.listInterrupts({ runId: late.id }))[0]!.resolution).toMatchObject({ decision: "reject" });
    const [rejected] = await fx.store.listInterrupts({ runId: runs[1]!.id });
    expect(rejected!.resolution).toMatchObject({ decision: "reject", reason: "not now", actor: "operator:tester" });
  });

  it("sends one decision for a double tap (two keys in one chunk), with no refusal shown", async () => {
    fx = fixture();
    const run = await settle(fx.engine, "travel-planner", { city: "Oslo" });
    ui = await openPanel(fx);
    await ui.press("aa");
    const frame = await ui.waitFor(/✓ resolved int-\S+ with approve/);
    expect(frame).not.toContain("refused");
    const commands = await fx.store.listCommands({ runId: run.id });
    expect(commands.filter((c) => c.type === "resolve").map((c) => c.status)).toEqual(["accepted"]);
  });

  it("says when the request does not fit, and v shows it whole", async () => {
    fx = fixture();
    await settle(fx.engine, "travel-planner", { city: "Oslo" });
    ui = await openPanel(fx);
    await ui.resize(80, 12);
    let frame = await ui.waitFor("… more than fits here: v shows the whole request");
    expect(frame).toMatch(/a approve/);
    await ui.press("v");
    frame = await ui.waitFor("the whole request");
    expect(frame).toContain('"question": "Book this trip?"');
    await ui.press("G");
    frame = await ui.waitFor(/^ }$/m);
    await ui.press("esc");
    await ui.waitFor(/Interrupt 1 of 1/);
  });

  it("rejects only after confirming with a reason; the confirmation defaults to Cancel", async () => {
    fx = fixture();
    const run = await settle(fx.engine, "travel-planner");
    ui = await openPanel(fx);
    await ui.press("r");
    let frame = await ui.waitFor("Reject: Book this trip?");
    expect(frame).toMatch(/Reason: █/);
    await ui.press("enter"); // Cancel is focused
    await ui.waitFor("reject not confirmed; nothing sent");
    expect(await pendingOf(fx, run.id)).toHaveLength(1);

    await ui.press("r");
    await ui.waitFor("Reject: Book this trip?");
    await ui.press("tab", "enter"); // no reason typed yet
    await ui.waitFor("a reason is required");
    await ui.type("too expensive");
    await ui.waitFor((f) => !f.includes("a reason is required"));
    await ui.press("esc");
    await ui.waitFor("reject not confirmed; nothing sent");

    // A reason typed, then Cancel chosen with tab: enter cancels (it does not move to the action).
    await ui.press("r");
    await ui.waitFor("Reject: Book this trip?");
    await ui.type("too expensive");
    await ui.press("tab");
    await ui.waitFor("[Reject]");
    await ui.press("tab");
    await ui.waitFor("[Cancel]");
    await ui.press("enter");
    await ui.waitFor("reject not confirmed; nothing sent");
    expect(await pendingOf(fx, run.id)).toHaveLength(1);

    // A reason typed while Cancel is focused: enter moves to the action (the reason is kept), enter again acts.
    await ui.press("r");
    await ui.waitFor("Reject: Book this trip?");
    await ui.type("too expensive");
    await ui.press("enter");
    frame = await ui.waitFor("[Reject]");
    expect(frame).toContain("Reason: too expensive█");
    expect(await pendingOf(fx, run.id)).toHaveLength(1);
    await ui.press("enter");
    frame = await ui.waitFor(/resolved int-\S+ with reject/);
    const [interrupt] = await fx.store.listInterrupts({ runId: run.id });
    expect(interrupt!.resolution).toMatchObject({ decision: "reject", reason: "too expensive", actor: "operator:tester" });
    const ended = await fx.engine.run(run.id).wait({ until: "end", timeoutMs: 5_000 });
    expect((await readState(fx.store, run.id, ended.headN)).booked).toBe(false);
  });

  it("takes a tab inside pasted text as the key that moves to the action button", async () => {
    fx = fixture();
    const run = await settle(fx.engine, "travel-planner");
    ui = await openPanel(fx);
    await ui.press("r");
    await ui.waitFor("Reject: Book this trip?");
    await ui.press("over budget\t"); // one chunk, as a paste or fast typing delivers it
    const frame = await ui.waitFor("[Reject]");
    expect(frame).toContain("Reason: over budget█");
    await ui.press("enter");
    await ui.waitFor(/resolved int-\S+ with reject/);
    const [interrupt] = await fx.store.listInterrupts({ runId: run.id });
    expect(interrupt!.resolution).toMatchObject({ decision: "reject", reason: "over budget" });
  });

  it("edits the state in $EDITOR, shows the diff, and resolves with the edit once confirmed", async () => {
    fx = fixture();
    const run = await settle(fx.engine, "travel-planner");
    const editor = editorScript("porto.sh", `sed -i 's/"Lisbon"/"Porto"/; s/"budget": 1200/"budget": 900/' "$1"`);
    ui = await openPanel(fx, { editorCommand: editor });
    await ui.press("e");
    const frame = await ui.waitFor("Apply this change?");
    expect(frame).toContain('~ $.city "Lisbon" → "Porto"');
    expect(frame).toContain("~ $.budget 1200 → 900");
    expect(await pendingOf(fx, run.id)).toHaveLength(1); // nothing sent before the confirmation
    await ui.press("tab", "enter");
    await ui.waitFor(/resolved int-\S+ with edit and a state edit/);
    const ended = await fx.engine.run(run.id).wait({ until: "end", timeoutMs: 5_000 });
    const state = await readState(fx.store, run.id, ended.headN);
    expect(state).toMatchObject({ city: "Porto", budget: 900, booked: true });
  });

  it("edits a tool call's proposed arguments (not the state) and resolves with them", async () => {
    fx = fixture();
    const run = await settle(fx.engine, "refund");
    const editor = editorScript(
      "amount.sh",
      `if grep -q "^// ERROR" "$1"; then sed -i 's/"amount": 500/"amount": 15/' "$1"; else sed -i 's/"amount": 18/"amount": 500/' "$1"; fi`,
    );
    ui = await openPanel(fx, { editorCommand: editor });
    // The keys say what they do here: e edits the proposal; no text answer, since it must be an object.
    expect(ui.frame()).toContain("e edit the proposal in $EDITOR");
    expect(ui.frame()).not.toContain("respond with text");
    await ui.press("e");
    let frame = await ui.waitFor("The edit is not valid; nothing was sent");
    expect(frame).toMatch(/the edited proposal is invalid at \$\.amount/);
    await ui.press("tab", "enter");
    frame = await ui.waitFor("Apply this change?");
    expect(frame).toContain("~ $.amount 18 → 15");
    await ui.press("tab", "enter");
    await ui.waitFor(/resolved int-\S+ with edit/);
    const ended = await fx.engine.run(run.id).wait({ until: "end", timeoutMs: 5_000 });
    expect((await readState(fx.store, run.id, ended.headN)).refunded).toBe(15);
  });

  it("refuses an invalid edit, shows why, and reopens the editor with the error on top", async () => {
    fx = fixture();
    const run = await settle(fx.engine, "travel-planner");
    // First save: budget becomes a string (invalid). Second time, seeing the ERROR line, a valid number.
    const editor = editorScript(
      "fix-on-second-try.sh",
      `if grep -q "^// ERROR: edited state is invalid at \\$.budget" "$1"; then sed -i 's/"budget": "lots"/"budget": 1500/' "$1"; else sed -i 's/"budget": 1200/"budget": "lots"/' "$1"; fi`,
    );
    ui = await openPanel(fx, { editorCommand: editor });
    await ui.press("e");
    const frame = await ui.waitFor("The edit is not valid; nothing was sent");
    expect(frame).toMatch(/edited state is invalid at \$\.budget/);
    expect(await pendingOf(fx, run.id)).toHaveLength(1);
    await ui.press("tab", "enter"); // Edit again
    await ui.waitFor("~ $.budget 1200 → 1500");
    await ui.press("tab", "enter");
    await ui.waitFor(/resolved int-\S+ with edit/);
    const ended = await fx.engine.run(run.id).wait({ until: "end", timeoutMs: 5_000 });
    expect((await readState(fx.store, run.id, ended.headN)).budget).toBe(1500);
  });

  it("lists every failing place of an invalid edit (an undeclared key too), in the dialog and the reopened file", async () => {
    fx = fixture();
    const run = await settle(fx.engine, "travel-planner");
    // First save: two errors. Second time, both must be named in the file's header, then both are fixed.
    const editor = editorScript(
      "two-errors.sh",
      `if grep -q "^// ERROR: the edit is invalid in 2 places" "$1"; then grep -q "^//   \\$\\.budget: " "$1" && grep -q "^//   .*extra" "$1" || exit 3; sed -i -e 's/"budget": "lots"/"budget": 1500/' -e 's/^{ "extra": true,$/{/' "$1"; else sed -i -e 's/"budget": 1200/"budget": "lots"/' -e 's/^{$/{ "extra": true,/' "$1"; fi`,
    );
    ui = await openPanel(fx, { editorCommand: editor });
    await ui.press("e");
    const frame = await ui.waitFor("The edit is not valid; nothing was sent");
    expect(frame).toContain("the edit is invalid in 2 places");
    expect(frame).toMatch(/\$\.budget: /);
    expect(frame).toMatch(/extra/);
    await ui.press("tab", "enter"); // Edit again
    await ui.waitFor("~ $.budget 1200 → 1500");
    await ui.press("tab", "enter");
    await ui.waitFor(/resolved int-\S+ with edit/);
    expect(await pendingOf(fx, run.id)).toHaveLength(0);
  });

  it("names the line of a JSON error as the reopened file numbers it, its header with the error counted", async () => {
    fx = fixture();
    await settle(fx.engine, "travel-planner");
    const shown = join(scripts, "shown-json-error.txt");
    // First save: not JSON. Second time, the file as shown is kept, then fixed.
    const editor = editorScript(
      "json-error.sh",
      `if grep -q "^// ERROR: not valid JSON" "$1"; then cp "$1" "${shown}"; sed -i 's/"budget": 1200 x/"budget": 1500/' "$1"; else sed -i 's/"budget": 1200/"budget": 1200 x/' "$1"; fi`,
    );
    ui = await openPanel(fx, { editorCommand: editor });
    await ui.press("e");
    await ui.waitFor("The edit is not valid; nothing was sent");
    await ui.press("tab", "enter"); // Edit again
    await ui.waitFor("~ $.budget 1200 → 1500");
    const lines = readFileSync(shown, "utf8").split("\n");
    const line = Number(/^\/\/ ERROR: not valid JSON at line (\d+),/m.exec(lines.join("\n"))?.[1]);
    expect(lines[line - 1]).toContain('"budget": 1200 x');
  });

  it("says an editor that is not installed was not found, naming where it was chosen", async () => {
    fx = fixture();
    const run = await settle(fx.engine, "travel-planner");
    ui = await openPanel(fx, { editorCommand: "pitwall-no-such-editor" });
    await ui.press("e");
    const frame = await ui.waitFor("was not found");
    expect(frame.replace(/\s*\n\s*/g, " ")).toContain('editor "pitwall-no-such-editor" ($EDITOR) was not found: set $VISUAL or $EDITOR to an editor installed here; nothing sent');
    expect(await pendingOf(fx, run.id)).toHaveLength(1);
  });

  it("sends nothing when the editor is closed without saving", async () => {
    fx = fixture();
    const run = await settle(fx.engine, "travel-planner");
    ui = await openPanel(fx, { editorCommand: "true" });
    await ui.press("e");
    await ui.waitFor("edit closed without changes; nothing sent");
    expect(await pendingOf(fx, run.id)).toHaveLength(1);
  });

  it("responds with text to a node that asked a question", async () => {
    fx = fixture();
    const run = await settle(fx.engine, "ask");
    ui = await openPanel(fx);
    const frame = await ui.waitFor("Which branch should I deploy?");
    expect(frame).toMatch(/t respond with text/);
    expect(frame).not.toMatch(/a approve/);
    await ui.press("t");
    await ui.waitFor("Response:");
    await ui.type("release-2.0");
    await ui.press("enter");
    await ui.waitFor(/resolved int-\S+ with respond/);
    const ended = await fx.engine.run(run.id).wait({ until: "end", timeoutMs: 5_000 });
    expect((await readState(fx.store, run.id, ended.headN)).branch).toBe("release-2.0");
  });

  it("shows who answered first and when, and sends nothing", async () => {
    fx = fixture();
    const run = await settle(fx.engine, "travel-planner");
    // Live updates held back so that the panel still offers the decision when the key is pressed.
    ui = await openPanel(fx, { coalesceMs: 60_000 });
    const [interrupt] = await pendingOf(fx, run.id);
    await fx.engine.operator("ann").resolve(interrupt!.id, { decision: "approve" });
    await ui.press("a");
    await ui.waitFor(/already resolved by operator:ann at \d\d:\d\d:\d\d \(approve\); nothing was sent/);
    const commands = await fx.store.listCommands({ runId: run.id });
    expect(commands.filter((c) => c.actor === "operator:tester")).toHaveLength(0);
  });

  it("notices live when someone else answers, and offers no decision", async () => {
    fx = fixture();
    const run = await settle(fx.engine, "travel-planner");
    ui = await openPanel(fx);
    const [interrupt] = await pendingOf(fx, run.id);
    await fx.engine.operator("bob").resolve(interrupt!.id, { decision: "reject", reason: "over budget" });
    const frame = await ui.waitFor("already resolved by operator:bob");
    expect(frame).toContain("(reject: over budget)");
    expect(frame).not.toContain("Decide:");
  });
});
