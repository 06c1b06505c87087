import { afterEach, expect, it } from "vitest";
import { keyboardFilter } from "../../source/console/keyboard.js";
import { fixture, settle, type Fixture } from "./fixtures.js";
import { closeAll, openConsole, type ConsoleHarness } from "./harness.js";

let fx: Fixture | undefined;
let ui: ConsoleHarness | undefined;
afterEach(async () => ([ui, fx] = await closeAll(ui, fx)));

/** The text of the `/` field as drawn (its cursor is `█`). */
const filterField = (frame: string) => /^\/ (.*)█/m.exec(frame)?.[1];

it("keeps what can be typed of a paste with colour codes in the runs filter, and goes on taking keys", async () => {
  fx = fixture();
  const run = await settle(fx.engine, "travel-planner");
  ui = await openConsole({ store: fx.store });
  await ui.waitFor(run.id);
  await ui.press("/");
  await ui.waitFor("enter keeps");
  // A log line copied with its colours, pasted in one chunk.
  await ui.press("log: \u001b[31mERROR\u001b[0m");
  await ui.waitFor((f) => filterField(f) === "log: ERROR");
  await ui.press("ctrl-u", "travel", "enter");
  await ui.waitFor("filter: travel");
  expect(ui.frame()).toContain(run.id);
});

it("takes a colour code sent with no field open as no key at all", async () => {
  fx = fixture();
  const run = await settle(fx.engine, "travel-planner");
  ui = await openConsole({ store: fx.store });
  await ui.waitFor(run.id);
  await ui.press("\u001b[31m", "\u001b]0;a title\u0007", "\u001b[200~", "\u001b[1;31m");
  await ui.press("?");
  await ui.waitFor("show this help");
});

it("lets keys through whole — arrows, page keys, shift-tab, esc then a key — and waits for a sequence cut between two chunks", () => {
  const filter = keyboardFilter();
  for (const key of ["\u001b[A", "\u001b[B", "\u001b[1;5C", "\u001b[5~", "\u001b[6~", "\u001b[Z", "\u001bOH", "\u001b", "\u001bj", "\u001b\u001b[A"]) {
    expect(filter.push(key)).toBe(key);
  }
  expect(filter.push("x\u001b[3")).toBe("x");
  expect(filter.holding).toBe(true);
  expect(filter.push("1mERROR\u001b[0m")).toBe("ERROR");
  expect(filter.push("\u009b31mred \u001b[99;5~ok")).toBe("red ok");
  // A sequence whose rest never comes is given up as the keys it may be.
  expect(filter.push("\u001b[")).toBe("");
  expect(filter.flush()).toBe("[");
});
