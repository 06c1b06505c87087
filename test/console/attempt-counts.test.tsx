import { afterEach, expect, it } from "vitest";
import { z } from "zod";
import { MemoryStore, createEngine, workflow } from "../../engine/index.js";
import { fixture, settle, type Fixture } from "./fixtures.js";
import { closeAll, openConsole, type ConsoleHarness } from "./harness.js";

let fx: Fixture | undefined;
let ui: ConsoleHarness | undefined;
afterEach(async () => ([ui, fx] = await closeAll(ui, fx)));

/** Moves the graph's selection down until the selected node's line starts with `node`. */
async function selectNode(ui: ConsoleHarness, node: string): Promise<string> {
  await ui.press("g");
  for (let i = 0; i < 12 && !ui.frame().includes(` ${node} · step`); i++) await ui.press("j");
  return ui.waitFor(` ${node} · step`);
}

it("counts an approval's pause and its resume as one attempt, as pitwall show does, in the graph and the task", async () => {
  fx = fixture();
  const paused = await settle(fx.engine, "travel-planner");
  const [asked] = await fx.store.listInterrupts({ runId: paused.id, status: "pending" });
  await fx.engine.operator("ann").resolve(asked!.id, { decision: "approve" });
  expect(await fx.engine.run(paused.id).wait({ timeoutMs: 10_000 })).toMatchObject({ status: "succeeded" });
  ui = await openConsole({ store: fx.store, initial: { kind: "run", runId: paused.id }, columns: 120 });
  await ui.waitFor("✓ book");
  expect(await selectNode(ui, "approve")).toMatch(/ approve · step 4: succeeded, 1 attempt \(\+1 resume\), ran /);
  // A node that failed once and ran again tried twice.
  expect(await selectNode(ui, "hotels")).toMatch(/ hotels · step 2: succeeded, 2 attempts, ran /);
  await selectNode(ui, "approve");
  await ui.press("enter");
  expect(await ui.waitFor("no model or tool calls")).toMatch(/approve {2}succeeded · attempt 1 \(\+1 resume\) · /);
});

it("says a call its node's retry made again was made twice, not tried twice", async () => {
  let tries = 0;
  const pay = workflow("pay-twice", { state: z.object({ paid: z.number().default(0) }) })
    .node(
      "pay",
      async (_s, ctx) => {
        await ctx.call("charge", () => ({ charged: 5 }), { input: { kind: "tool", tool: "chargeCard", arguments: { amount: 5 } } });
        if (++tries === 1) throw new Error("flaky after the charge");
        return { paid: 5 };
      },
      { next: "END", retry: { maxAttempts: 2, backoffMs: 1, jitter: 0 } },
    )
    .compile();
  const store = new MemoryStore();
  const engine = createEngine({ store, worker: { pollMs: 20 }, workflows: [pay] });
  fx = { store, engine, close: () => engine.close() };
  const run = await (await engine.start(pay, {})).wait({ timeoutMs: 10_000 });
  expect(run.status).toBe("succeeded");
  ui = await openConsole({ store, initial: { kind: "run", runId: run.id }, columns: 120 });
  expect(await selectNode(ui, "pay")).toMatch(/ pay · step 1: succeeded, 2 attempts, /);
  await ui.press("enter");
  await ui.waitFor("1 tool call");
  // The call's row is selected: enter shows it whole, its status said as show's calls table says it.
  await ui.press("enter");
  const page = await ui.waitFor("pay · charge · chargeCard");
  expect(page).toMatch(/^ succeeded \(made 2 times\) · /m);
  expect(page).not.toMatch(/attempts?\b/);
});
