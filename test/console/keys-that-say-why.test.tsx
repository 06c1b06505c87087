import { afterEach, expect, it } from "vitest";
import { fixture, settle, type Fixture } from "./fixtures.js";
import { closeAll, openConsole, type ConsoleHarness } from "./harness.js";

let fx: Fixture | undefined;
let ui: ConsoleHarness | undefined;
afterEach(async () => ([ui, fx] = await closeAll(ui, fx)));

/** The footer's last rows as one text (a message may wrap). */
const footer = (frame: string) => frame.slice(frame.lastIndexOf("q quit") + 6).replace(/\s*\n\s*/g, " ");
const says = (text: string) => (frame: string) => footer(frame).includes(text);

it("says why a key does nothing on a run: p without a parent, ⏎ on a node that has not run, ctrl-k on an idle node, / outside the Events tab and in the help", async () => {
  fx = fixture();
  const run = await settle(fx.engine, "travel-planner");
  ui = await openConsole({ store: fx.store, initial: { kind: "run", runId: run.id } });
  await ui.waitFor("▶◆ approve");
  await ui.press("p");
  await ui.waitFor(says(`p: run ${run.id} has no parent run (it is neither a sub-workflow's run nor a fork)`));
  await ui.press("/");
  await ui.waitFor(says("/: the Graph tab has nothing to filter; the Events tab (2) filters events by type or node"));
  // The node after the approval has not run.
  await ui.press("j");
  await ui.waitFor("book · has not run");
  await ui.press("enter");
  await ui.waitFor(says("⏎: book has not run yet: its task opens here once it has"));
  await ui.press("ctrl-k");
  await ui.waitFor(says("ctrl-k: book has not run in step 4; only a running task can be killed"));
  await ui.press("R");
  await ui.waitFor(says("R: book has not run in step 4; only a failed or canceled task is retried"));
  await ui.press("5");
  await ui.waitFor("attempts");
  await ui.press("/");
  await ui.waitFor(says("/: the Timeline tab has nothing to filter"));
  await ui.press("?");
  await ui.waitFor("show this help");
  await ui.press("/");
  await ui.waitFor(says("/: a page of text has no filter; j/k and pgup/pgdn scroll it"));
  await ui.press("y");
  await ui.waitFor(says("y: nothing here has an id to copy"));
});

it("answers with o on a parent run whose sub-workflow waits for a person", async () => {
  fx = fixture();
  const parent = await settle(fx.engine, "trip-parent");
  ui = await openConsole({ store: fx.store, initial: { kind: "run", runId: parent.id } });
  await ui.waitFor("o answers it");
  await ui.press("o");
  const frame = await ui.waitFor(/Interrupt \d of \d/);
  expect(frame).toContain("Book this trip?");
  expect(frame).not.toContain(parent.id); // the child's interrupt: its own run
});

it("says why e does nothing on a running run's state, and what to do", async () => {
  fx = fixture();
  const handle = await fx.engine.start("slow");
  ui = await openConsole({ store: fx.store, initial: { kind: "run", runId: handle.id, tab: 2 } });
  await ui.waitFor("● running");
  await ui.waitFor("state at checkpoint");
  await ui.press("e");
  await ui.waitFor(says(`e: run ${handle.id} is running: its state is edited while it is paused — set a breakpoint (b in the graph) or kill its task (ctrl-k) first`));
  await ui.press("C");
  await ui.waitFor("Reason:");
  await ui.type("done testing");
  await ui.press("enter", "enter");
  await ui.waitFor("canceled");
});

it("retries a failed task and copies its id from the task's page", async () => {
  fx = fixture();
  const run = await settle(fx.engine, "failing", { lang: "en" });
  expect(run.status).toBe("failed");
  ui = await openConsole({ store: fx.store, initial: { kind: "run", runId: run.id } });
  await ui.waitFor("✗ call");
  await ui.press("enter");
  await ui.waitFor("connection refused, retry later");
  const [task] = await fx.store.listTasks(run.id);
  await ui.press("y");
  await ui.waitFor(`copied ${task!.id} to the clipboard`);
  expect(ui.copied).toEqual([task!.id]);
  await ui.press("R");
  await ui.waitFor("Retry call (task");
  await ui.press("esc");
  await ui.waitFor("retry canceled; nothing sent");
});
