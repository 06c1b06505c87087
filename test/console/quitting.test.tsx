import { afterEach, expect, it } from "vitest";
import { MemoryStore, type Store } from "../../engine/index.js";
import { fixtureOn, settle, type Fixture } from "./fixtures.js";
import { closeAll, openConsole, type ConsoleHarness } from "./harness.js";

let fx: Fixture | undefined;
let ui: ConsoleHarness | undefined;
afterEach(async () => ([ui, fx] = await closeAll(ui, fx)));

const turns = async (n: number) => {
  for (let i = 0; i < n; i++) await new Promise<void>((resolve) => setImmediate(resolve));
};

/** `store` as the console sees it: while `held` is set, reading an interrupt (the first thing a decision does) waits for it. */
function holdingStore(store: Store): { store: Store; hold(): void; release(): void } {
  let held: Promise<void> | undefined;
  let release = () => {};
  const proxy = new Proxy(store, {
    get(target, prop) {
      const value = Reflect.get(target, prop, target) as unknown;
      if (typeof value !== "function") return value;
      if (prop !== "getInterrupt") return value.bind(target);
      return async (...args: unknown[]) => {
        await held;
        return (value as (...a: unknown[]) => unknown).apply(target, args);
      };
    },
  });
  return {
    store: proxy,
    hold: () => (held = new Promise<void>((resolve) => (release = resolve))),
    release: () => (release(), (held = undefined)),
  };
}

it("q quits at once when nothing is being sent; in a dialog it is a key of the dialog, never a quit", async () => {
  fx = fixtureOn(new MemoryStore());
  const run = await settle(fx.engine, "travel-planner");
  ui = await openConsole({ store: fx.store });
  await ui.waitFor(run.id);
  // The filter takes q as text.
  await ui.press("/");
  await ui.waitFor("enter keeps · esc cancels");
  await ui.press("q");
  await ui.waitFor("filter: q");
  expect(ui.quit()).toBe(false);
  await ui.press("esc");
  // A confirmation takes it too (as text of its reason, where it has one; else as nothing).
  await ui.press("i");
  await ui.waitFor("1 pending, oldest first");
  await ui.press("space", "a");
  await ui.waitFor("Approve 1 interrupt?");
  await ui.press("q");
  await ui.waitFor("Reason (optional): q");
  expect(ui.quit()).toBe(false);
  await ui.press("esc");
  await ui.waitFor("approve not confirmed; nothing sent");
  await ui.press("q");
  await turns(4);
  expect(ui.quit()).toBe(true);
});

/** A console on the queue of two interrupts, approving both, their sending held up. */
async function sendingTwoApprovals(): Promise<{ held: ReturnType<typeof holdingStore>; ui: ConsoleHarness; fx: Fixture }> {
  const f = (fx = fixtureOn(new MemoryStore()));
  for (const city of ["Oslo", "Rome"]) await settle(f.engine, "travel-planner", { city });
  const held = holdingStore(f.store);
  const harness = (ui = await openConsole({ store: held.store }));
  await harness.waitFor("⚑ 2 pending");
  await harness.press("i");
  await approveAllHeld(held);
  return { held, ui: harness, fx: f };
}

/** On the queue of two: approves both, their sending held up. */
async function approveAllHeld(held: ReturnType<typeof holdingStore>): Promise<void> {
  await ui!.waitFor("2 pending, oldest first");
  await ui!.press("*", "a");
  await ui!.waitFor("Approve 2 interrupts?");
  held.hold();
  await ui!.press("tab", "enter");
  await ui!.waitFor("approving 2 interrupts…");
}

it("q while a decision is being sent asks first, one key: n stays and the decision goes on, y quits", async () => {
  const { held, ui, fx } = await sendingTwoApprovals();
  await ui.press("q");
  const asked = await ui.waitFor("quit? approving 2 interrupts… is still being sent — y quits · n stays");
  expect(asked).not.toMatch(/\bq quit\b/);
  // Any other key neither quits nor reaches the view.
  await ui.press("j", "q");
  expect(ui.quit()).toBe(false);
  await ui.press("n");
  await ui.waitFor((f) => !f.includes("quit?"));
  expect(ui.quit()).toBe(false);
  held.release();
  await ui.waitFor("approved 2 interrupts");
  expect(await fx.store.listInterrupts({ status: "pending" })).toHaveLength(0);

  // Again, and this time y.
  for (const city of ["Kyiv", "Lima"]) await settle(fx.engine, "travel-planner", { city });
  await approveAllHeld(held);
  await ui.press("q");
  await ui.waitFor("quit?");
  await ui.press("y");
  await turns(4);
  expect(ui.quit()).toBe(true);
  held.release();
});

/** What opens each kind of dialog, from the runs list of a console on one travel-planner run waiting for approval. */
const DIALOGS: [string, (ui: ConsoleHarness) => Promise<void>][] = [
  ["the runs filter", async (ui) => (await ui.press("/"), await ui.type("trav"), void (await ui.waitFor("/ trav█")))],
  ["the command palette", async (ui) => (await ui.press(":"), await ui.type("ru"), void (await ui.waitFor(": ru█")))],
  [
    "a confirmation's reason",
    async (ui) => {
      await ui.press("i");
      await ui.waitFor("1 pending, oldest first");
      await ui.press("space", "a");
      await ui.waitFor("Approve 1 interrupt?");
      await ui.type("fine");
      await ui.waitFor("Reason (optional): fine█");
    },
  ],
  [
    "the state editor's confirmation",
    async (ui) => {
      await ui.press("i");
      await ui.waitFor("1 pending, oldest first");
      await ui.press("enter");
      await ui.waitFor(/Interrupt 1 of 1/);
      await ui.press("e");
      await ui.waitFor("Apply this change?");
    },
  ],
];

it.each(DIALOGS)("ctrl-c quits from %s, as the footer there says, and sends nothing", async (_, open) => {
  fx = fixtureOn(new MemoryStore());
  await settle(fx.engine, "travel-planner");
  ui = await openConsole({ store: fx.store, columns: 100, editorCommand: `sed -i 's/"Lisbon"/"Porto"/'` });
  await ui.waitFor("⚑ 1 pending");
  await open(ui);
  expect(ui.frame()).toMatch(/ctrl-c quit\s*$/m);
  await ui.press("ctrl-c");
  await turns(4);
  expect(ui.quit()).toBe(true);
  expect(await fx.store.listInterrupts({ status: "pending" })).toHaveLength(1);
});

it("ctrl-c while a decision is being sent asks first, from a dialog too: n leaves the dialog as it was, ctrl-c again quits", async () => {
  const { held, ui } = await sendingTwoApprovals();
  await ui.press("/");
  await ui.type("Ro");
  await ui.waitFor("/ Ro█");
  await ui.press("ctrl-c");
  let frame = await ui.waitFor("quit? approving 2 interrupts… is still being sent — y quits · n stays");
  // The filter stays open under the question, and the question has the keys: n is not typed into it.
  expect(frame).toContain("/ Ro█");
  await ui.press("n");
  await ui.waitFor((f) => !f.includes("quit?"));
  expect(ui.quit()).toBe(false);
  await ui.type("me");
  frame = await ui.waitFor("/ Rome█");
  // Outside any dialog ctrl-c asks as well; a second one quits.
  await ui.press("esc");
  await ui.waitFor((f) => !f.includes("█"));
  await ui.press("ctrl-c");
  await ui.waitFor("quit? approving 2 interrupts…");
  expect(ui.quit()).toBe(false);
  await ui.press("ctrl-c");
  await turns(4);
  expect(ui.quit()).toBe(true);
  held.release();
});

it("q quits a terminal too small to draw in, as the screen says", async () => {
  fx = fixtureOn(new MemoryStore());
  ui = await openConsole({ store: fx.store, columns: 30, rows: 8 });
  await ui.waitFor((f) => f.replace(/\s*\n\s*/g, " ").includes("terminal too small: 30×8 (needs 40×10); q quits"));
  await ui.press("q");
  await turns(4);
  expect(ui.quit()).toBe(true);
});
