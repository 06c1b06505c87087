import { afterEach, expect, it } from "vitest";
import { z } from "zod";
import { MemoryStore, createEngine, workflow, type Engine } from "../../engine/index.js";
import { closeAll, openConsole, type ConsoleHarness } from "./harness.js";

let engine: Engine | undefined;
let ui: ConsoleHarness | undefined;
afterEach(async () => ([ui, engine] = await closeAll(ui, engine)));

/** An approval that asks `question`, answered `deadline.decision` by a worker `deadline.seconds` after it was asked (when given). */
function review(name: string, question: string, deadline?: { seconds: number; decision: "approve" | "reject" }) {
  return workflow(name, { state: z.object({ done: z.boolean().default(false) }) })
    .approval("review", { question, ...(deadline ? { deadline } : {}), routes: { approve: "ship", reject: "END" } })
    .node("ship", () => ({ done: true }), { next: "END" })
    .compile();
}

it("the operator panel says what an interrupt's deadline will answer, and when", async () => {
  const wf = review("review-by-deadline", "Ship it?", { seconds: 7_200, decision: "reject" });
  const store = new MemoryStore();
  engine = createEngine({ store, workflows: [wf], worker: { pollMs: 50 } });
  await (await engine.start(wf)).wait();
  ui = await openConsole({ store, columns: 100 });
  await ui.waitFor("⚑ 1 pending");
  await ui.press("i");
  await ui.waitFor("1 pending, oldest first");
  await ui.press("enter");
  const frame = await ui.waitFor("Ship it?");
  expect(frame).toMatch(/⏱ deadline: reject in 1h59m/);
});

it("the queue says what each deadline will answer, and when, from 120 columns, and sorts soonest first", async () => {
  const flows = [review("no-deadline", "Keep it?"), review("by-two-hours", "Ship it?", { seconds: 7_200, decision: "reject" }), review("by-ten-minutes", "Roll back?", { seconds: 600, decision: "approve" })];
  const store = new MemoryStore();
  engine = createEngine({ store, workflows: flows, worker: { pollMs: 50 } });
  const runs: string[] = [];
  for (const wf of flows) runs.push((await (await engine.start(wf)).wait()).id);
  const [none, later, sooner] = runs as [string, string, string];
  // Oldest first as the store lists them: runs started a millisecond apart may tie, and their ids then decide.
  const oldest = (await store.listInterrupts({ status: "pending" })).map((i) => i.runId);
  ui = await openConsole({ store, columns: 120 });
  await ui.waitFor("⚑ 3 pending");
  await ui.press("i");
  await ui.waitFor("3 pending, oldest first");
  const rowOf = (run: string) => ui!.lines().find((l) => l.includes(run))!;
  const order = () => ui!.lines().flatMap((l) => runs.filter((id) => l.includes(id)));
  const header = ui.lines().find((l) => l.includes("AGE"))!;
  expect(header).toMatch(/ KIND +DEADLINE +QUESTION /);
  // Each in the DEADLINE column, under its header; none where there is no deadline.
  const column = header.indexOf("DEADLINE");
  expect(rowOf(later).slice(column)).toMatch(/^reject in 1h59m +Ship it\?/);
  expect(rowOf(sooner).slice(column)).toMatch(/^approve in 9m +Roll back\?/);
  expect(rowOf(none).slice(column)).toMatch(/^ +Keep it\?/);
  expect(order()).toEqual(oldest);

  // By deadline: soonest first, those without one last, whichever way round.
  await ui.press("s", "s", "s");
  await ui.waitFor("3 pending, deadline, soonest first");
  expect(order()).toEqual([sooner, later, none]);
  await ui.press("S");
  await ui.waitFor("3 pending, deadline, latest first");
  expect(order()).toEqual([later, sooner, none]);

  // Narrower, the question keeps its room: the panel says the deadline.
  await ui.resize(100, 24);
  await ui.waitFor((f) => f.includes(" QUESTION") && !f.includes("DEADLINE"));
  expect(rowOf(later)).not.toContain("reject in");
  // No column where none of the rows shown has a deadline.
  await ui.resize(120, 24);
  await ui.waitFor("DEADLINE");
  await ui.press("/");
  await ui.type("w:no-deadline");
  await ui.press("enter");
  await ui.waitFor("3 pending, 1 shown");
  expect(ui.frame()).not.toContain("DEADLINE");
});
