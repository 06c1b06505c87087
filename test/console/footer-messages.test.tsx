import { afterEach, expect, it } from "vitest";
import { fixture, settle, type Fixture } from "./fixtures.js";
import { openConsole, type ConsoleHarness } from "./harness.js";

let fx: Fixture | undefined;
let ui: ConsoleHarness | undefined;
afterEach(async () => {
  ui?.unmount();
  ui = undefined;
  await fx?.close();
  fx = undefined;
});

const footer = (ui: ConsoleHarness) => ui.lines().at(-1) ?? "";

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
  await ui.waitFor("ctrl-k (kill): nothing here it applies to");
  await ui.press("2");
  await ui.waitFor("run.succeeded");
  expect(ui.frame()).not.toContain("nothing here it applies to");
  await ui.press("ctrl-k");
  await ui.waitFor("nothing here it applies to");
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
