import { expect, it } from "vitest";
import { Operator, type Store } from "../../engine/index.js";
import { openConsole, type ConsoleHarness } from "./harness.js";
import { sqliteFixtures } from "./sqlite-fixture.js";

const sqlite = sqliteFixtures("dialog-keys");
/** The operator panel on the first pending interrupt of a run of `workflow`, on a SQLite store. */
async function panelOn(workflow: string): Promise<{ ui: ConsoleHarness; runId: string; store: Store }> {
  const { fx } = await sqlite.open();
  const run = await (await fx.engine.start(workflow, {})).wait({ timeoutMs: 10_000 });
  const ui = sqlite.console(await openConsole({ store: fx.store, columns: 120 }));
  // The header counts the pending interrupts once they are read (the runs list comes first).
  await ui.waitFor(/⚑ [1-9]\d* pending/);
  await ui.press("i");
  await ui.waitFor(/[1-9]\d* pending, oldest first/);
  await ui.press("enter");
  await ui.waitFor(/Interrupt \d of \d/);
  return { ui, runId: run.id, store: fx.store };
}

const footer = (ui: ConsoleHarness) => ui.lines().at(-1) ?? "";

it("keeps left and right in a reason field: focus moves to the action only with tab, Cancel stays the default", async () => {
  const { ui, runId, store } = await panelOn("travel-planner");
  await ui.press("r");
  await ui.waitFor("Reason:");
  await ui.type("over budget");
  await ui.press("left", "right", "left");
  let frame = await ui.waitFor("over budget█");
  expect(frame).toContain("[Cancel]");
  expect(frame).not.toContain("[Reject]");
  // Enter after a reason moves to the action; it does not act at once.
  await ui.press("enter");
  frame = await ui.waitFor("[Reject]");
  expect((await store.listInterrupts({ runId, status: "pending" })).length).toBe(1);
  await ui.press("tab");
  await ui.waitFor("[Cancel]");
  await ui.press("enter");
  await ui.waitFor("reject not confirmed; nothing sent");
  expect((await store.listInterrupts({ runId, status: "pending" })).length).toBe(1);
});

it("says an interrupt was answered already, by whom, when a decision key is pressed on it", async () => {
  const { ui, runId, store } = await panelOn("travel-planner");
  const [pending] = await store.listInterrupts({ runId, status: "pending" });
  await new Operator(store, { actor: "operator:alice" }).resolve(pending!.id, { decision: "approve" });
  await ui.waitFor("already resolved by operator:alice");
  await ui.press("a");
  await ui.waitFor(() => footer(ui).includes("nothing sent"));
  expect(footer(ui)).toMatch(new RegExp(`interrupt ${pending!.id} already resolved by operator:alice at \\d\\d:\\d\\d:\\d\\d \\(approve\\); nothing sent`));
  expect(ui.frame()).not.toContain("approve marked");
});

it("says why t does nothing where no text answer is offered", async () => {
  const { ui } = await panelOn("travel-planner");
  await ui.press("t");
  await ui.waitFor("t: this interrupt takes no text answer; its decisions are approve, reject");
  expect(footer(ui)).not.toMatch(/\bt respond\b/);
});

it("says that a tool call's proposal is edited with e, not answered with text", async () => {
  const { ui } = await panelOn("refund");
  await ui.press("t");
  await ui.waitFor("t: this interrupt's answer is a JSON object, not text: e edits it");
});
