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

/** The line of the open text field: after its title, up to the cursor. */
const fieldText = (frame: string, title: string) => {
  const line = frame.split("\n").find((l) => l.startsWith(`${title} `) && l.includes("█"));
  return line?.slice(title.length + 1, line.indexOf("█"));
};

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
