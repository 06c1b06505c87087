import { execFile } from "node:child_process";
import { chmodSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { promisify } from "node:util";
import { expect, it } from "vitest";
import { Operator, readState } from "../../engine/index.js";
import { BIN } from "../support/cli.js";
import { openConsole } from "./harness.js";
import { sqliteFixtures } from "./sqlite-fixture.js";

// What another operator does from the CLI while a dialog or an editor is open in the console.
const sqlite = sqliteFixtures("underneath");

/** A shell script in `dir`, used as $EDITOR. */
function script(name: string, body: string): string {
  const file = join(sqlite.dir, name);
  writeFileSync(file, `#!/bin/sh\n${body}\n`);
  chmodSync(file, 0o755);
  return file;
}

it("offers to edit again on the state as it is now when someone edited it while $EDITOR was open", async () => {
  const made = await sqlite.open();
  const { fx } = made;
  const handle = await fx.engine.start("travel-planner", {});
  const run = await handle.wait({ timeoutMs: 10_000 });
  // The first time, alice sets the budget from the CLI while the editor is open, then the operator saves 250 over 1200.
  // The second time (the file notes the change, and its header the checkpoint alice's edit made) the
  // operator makes the change again on 100.
  const editor = script(
    "edit-over-alice.sh",
    `if grep -q "^// NOTE: someone .*changed the state" "$1"; then grep -q "^// Editing the state .* at checkpoint 4\\.$" "$1" || exit 3; sed -i 's/"budget": 100,/"budget": 250,/' "$1"; else
  node ${JSON.stringify(BIN)} edit ${run.id} --set budget=100 --as alice --store ${JSON.stringify(made.url)} >/dev/null || exit 1
  sed -i 's/"budget": 1200/"budget": 250/' "$1"; fi`,
  );
  const [pending] = await fx.store.listInterrupts({ runId: run.id, status: "pending" });
  const ui = sqlite.console(await openConsole({ store: fx.store, editorCommand: editor }));
  // The header counts the pending interrupts once they are read (the runs list comes first).
  await ui.waitFor(/⚑ [1-9]\d* pending/);
  await ui.press("i");
  await ui.waitFor(/[1-9]\d* pending, oldest first/);
  await ui.press("enter");
  await ui.waitFor("e edit the state");
  await ui.press("e");
  await ui.waitFor("~ $.budget 1200 → 250", 15_000);
  await ui.press("tab", "enter");
  let frame = await ui.waitFor("Someone changed the state meanwhile");
  expect(frame).toContain("Someone changed the state meanwhile; your edit was not sent");
  expect(frame).toMatch(/While you edited, operator:alice at \d\d:\d\d:\d\d changed it:/);
  expect(frame).toContain("~ $.budget 1200 → 100");
  expect(frame).not.toContain("patch operation");
  await ui.press("tab", "enter"); // Edit again
  frame = await ui.waitFor("Apply this change?");
  expect(frame).toContain("~ $.budget 100 → 250");
  await ui.press("tab", "enter");
  await ui.waitFor(/resolved int-\S+ with edit and a state edit/);
  // Sent on the state as it is now: alice's budget is the base the operator's 250 replaced.
  const resolved = await fx.store.getInterrupt(pending!.id);
  expect(resolved!.resolution).toMatchObject({ decision: "edit", actor: "operator:tester" });
  const head = (await fx.store.getRun(run.id))!.headN;
  expect(await readState(fx.store, run.id, head)).toMatchObject({ budget: 250 });
});

for (const [what, key, title] of [
  ["cancel (C)", "C", "Cancel run"],
  ["kill (ctrl-k)", "ctrl-k", "Kill crunch"],
] as const) {
  it(`closes a ${what} dialog when its run is ended from the CLI meanwhile, saying who ended it and when`, async () => {
    const made = await sqlite.open();
    const { fx } = made;
    const handle = await fx.engine.start("slow", {});
    const ui = sqlite.console(await openConsole({ store: fx.store, columns: 140, initial: { kind: "run", runId: handle.id } }));
    await ui.waitFor("▶● crunch");
    await ui.press(key);
    await ui.waitFor(title);
    await ui.type("half a reason");
    // Not a blocking call: this process's worker owns the run and applies the cancel.
    await promisify(execFile)(process.execPath, [BIN, "cancel", handle.id, "--reason", "wrong inputs", "--as", "alice", "--store", made.url]);
    const frame = await ui.waitFor(`meanwhile run ${handle.id} ended`);
    expect(frame).not.toContain(title);
    expect(ui.lines().at(-1)).toMatch(new RegExp(`meanwhile run ${handle.id} ended: canceled by operator:alice at \\d\\d:\\d\\d:\\d\\d \\(wrong inputs\\); nothing sent`));
    // The keys go to the view again, not to a dialog still listening.
    await ui.press("2");
    await ui.waitFor("run.canceled");
  });
}

it("closes the confirmation after $EDITOR when the run was ended from the CLI while the editor was open, saying who ended it and when", async () => {
  const made = await sqlite.open();
  const { fx } = made;
  const handle = await fx.engine.start("slow", {});
  // Retry with an edit; while the editor is open, alice cancels the run from another shell.
  const editor = script(
    "cancel-meanwhile.sh",
    `node ${JSON.stringify(BIN)} cancel ${handle.id} --reason dup --as alice --store ${JSON.stringify(made.url)} >/dev/null || exit 1
  sed -i 's/"n": 0/"n": 5/' "$1"`,
  );
  const ui = sqlite.console(await openConsole({ store: fx.store, columns: 140, initial: { kind: "run", runId: handle.id }, editorCommand: editor }));
  await ui.waitFor("▶● crunch");
  await new Operator(fx.store, { actor: "bob" }).kill(handle.id);
  await ui.waitFor("‖ paused");
  await ui.press("E");
  const frame = await ui.waitFor(`meanwhile run ${handle.id} ended`, 15_000);
  expect(frame).not.toContain("Apply this change?");
  expect(ui.lines().at(-1)).toMatch(new RegExp(`meanwhile run ${handle.id} ended: canceled by operator:alice at \\d\\d:\\d\\d:\\d\\d \\(dup\\); nothing sent`));
});
