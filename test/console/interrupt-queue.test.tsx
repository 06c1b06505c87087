import { afterEach, expect, it } from "vitest";
import { fixture, settle, type Fixture } from "./fixtures.js";
import { closeAll, openConsole, type ConsoleHarness } from "./harness.js";

let fx: Fixture | undefined;
let ui: ConsoleHarness | undefined;
afterEach(async () => ([ui, fx] = await closeAll(ui, fx)));

/** The queue's rows, as the runs they belong to, top to bottom. */
const rowsOf = (ui: ConsoleHarness, runIds: readonly string[]) => ui.lines().flatMap((l) => runIds.filter((id) => l.includes(id)));

it("filters the queue by node, workflow, kind, run and text, sorts it by age, workflow and node, and marks with * only what the filter shows", async () => {
  fx = fixture();
  const oslo = await settle(fx.engine, "travel-planner", { city: "Oslo" });
  const ask = await settle(fx.engine, "ask");
  const rome = await settle(fx.engine, "travel-planner", { city: "Rome" });
  const refund = await settle(fx.engine, "refund");
  const all = [oslo.id, ask.id, rome.id, refund.id];
  ui = await openConsole({ store: fx.store, columns: 120 });
  await ui.waitFor("⚑ 4 pending");
  await ui.press("i");
  await ui.waitFor("4 pending, oldest first");
  expect(rowsOf(ui, all)).toEqual(all);

  // By node, live as it is typed; enter keeps it.
  await ui.press("/");
  await ui.waitFor("workflow: node: run: kind:");
  await ui.type("node:approve");
  await ui.waitFor("4 pending, 2 shown");
  await ui.press("enter");
  await ui.waitFor("filter: node:approve");
  expect(rowsOf(ui, all)).toEqual([oslo.id, rome.id]);
  // `*` marks what is shown, and a decision takes only those.
  await ui.press("*");
  await ui.waitFor("2 marked");
  await ui.press("esc");
  await ui.waitFor("4 pending, oldest first · 2 marked");

  // Other keys, and free text (a word with a colon that names no key is text).
  const shows = async (filter: string, expected: string[]) => {
    await ui!.press("/", "ctrl-u");
    await ui!.type(filter);
    await ui!.press("enter");
    await ui!.waitFor(`filter: ${filter}`);
    expect(rowsOf(ui!, all), filter).toEqual(expected);
  };
  await shows("w:refund", [refund.id]);
  await shows("kind:node", [ask.id, refund.id]);
  await shows(`run:${rome.id.slice(-5)}`, [rome.id]);
  await shows("city=rome", [rome.id]);
  await shows("issueRefund?", [refund.id]);
  await ui.press("esc");
  await ui.waitFor((f) => f.includes("4 pending, oldest first") && !f.includes("filter:"));

  // Sorts: by workflow, by node, turned round.
  await ui.press("s");
  await ui.waitFor("4 pending, workflow, A to Z");
  expect(rowsOf(ui, all)).toEqual([ask.id, refund.id, oslo.id, rome.id]);
  await ui.press("s");
  await ui.waitFor("4 pending, node, A to Z");
  expect(rowsOf(ui, all)).toEqual([oslo.id, rome.id, ask.id, refund.id]);
  await ui.press("S");
  await ui.waitFor("4 pending, node, Z to A");
  expect(rowsOf(ui, all)).toEqual([refund.id, ask.id, oslo.id, rome.id]);

  // The two marked ones are approved; the others stay.
  await ui.press("a");
  await ui.waitFor("Approve 2 interrupts?");
  await ui.press("tab", "enter");
  await ui.waitFor("approved 2 interrupts");
  const left = await fx.store.listInterrupts({ status: "pending" });
  expect(left.map((i) => i.runId).sort()).toEqual([ask.id, refund.id].sort());
});
