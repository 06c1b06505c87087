import { afterEach, expect, it } from "vitest";
import type { Store } from "../../engine/index.js";
import { fixture, settle, type Fixture } from "./fixtures.js";
import { openConsole, type ConsoleHarness } from "./harness.js";

let ui: ConsoleHarness | undefined;
let fx: Fixture | undefined;
afterEach(async () => {
  ui?.unmount();
  await fx?.close();
  [ui, fx] = [undefined, undefined];
});

it("says it is reading the queue of interrupts until it has, never that nothing waits", async () => {
  fx = fixture();
  await settle(fx.engine, "travel-planner");
  let release = () => {};
  const gate = new Promise<void>((resolve) => (release = resolve));
  // The store answers the interrupts' listing only when the test lets it.
  const store = new Proxy(fx.store, {
    get(target, key, receiver) {
      const value = Reflect.get(target, key, receiver) as unknown;
      if (key !== "listInterrupts" || typeof value !== "function") return typeof value === "function" ? value.bind(target) : value;
      return async (...args: unknown[]) => (await gate, (value as (...a: unknown[]) => unknown).apply(target, args));
    },
  }) as Store;
  ui = await openConsole({ store });
  await ui.waitFor("travel-planner");
  await ui.press("i");
  const reading = await ui.waitFor("reading the queue…");
  expect(reading).not.toContain("nothing is waiting");
  expect(reading).not.toContain("0 pending");
  release();
  const read = await ui.waitFor("1 pending, oldest first");
  expect(read).toContain("Book this trip?");
});
