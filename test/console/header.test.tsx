import { afterEach, expect, it } from "vitest";
import { fixture, settle, type Fixture } from "./fixtures.js";
import { closeAll, openConsole, type ConsoleHarness } from "./harness.js";

let fx: Fixture | undefined;
let ui: ConsoleHarness | undefined;
afterEach(async () => ([ui, fx] = await closeAll(ui, fx)));

// The header's one line: the store, the actor, the pending and orphaned badges, counts by status.
it("cuts a long store path in the header before the pending badge and the counts", async () => {
  fx = fixture();
  await settle(fx.engine, "travel-planner");
  const label = `sqlite:/srv/${"deeply/nested/".repeat(6)}stores/production.db`;
  ui = await openConsole({ store: fx.store, storeLabel: label });
  const header = (await ui.waitFor("⚑ 1 pending")).split("\n")[0]!;
  expect(header).toContain("…");
  expect(header).toContain("stores/production.db");
  expect(header).toMatch(/‖1/);
  // At 40 columns the actor gives way too: the pending badge and the counts stay.
  await ui.resize(40, 20);
  const narrow = (await ui.waitFor((f) => !f.split("\n")[0]!.includes("operator:"))).split("\n")[0]!;
  expect(narrow).toMatch(/⚑ 1 pending .*‖1/);
  // Counts that do not fit are left out whole, never cut into another number.
  for (let i = 0; i < 12; i++) await settle(fx.engine, "travel-planner");
  const crowded = (await ui.waitFor("⚑ 13 pending")).split("\n")[0]!;
  expect(crowded.trimEnd()).not.toMatch(/…$/);
  expect(crowded.trimEnd()).toMatch(/‖13$/);
});

it("on a narrow header keeps the failed count and the pending badge longest; succeeded and canceled give way first", async () => {
  fx = fixture();
  await settle(fx.engine, "travel-planner");
  await settle(fx.engine, "task-queue");
  await settle(fx.engine, "failing");
  const canceled = await fx.engine.start("travel-planner", {});
  await canceled.wait({ timeoutMs: 10_000 });
  await canceled.cancel("not needed");
  await canceled.wait({ timeoutMs: 10_000 });
  ui = await openConsole({ store: fx.store, columns: 60, rows: 20 });
  await ui.waitFor("NOW");
  expect(ui.lines()[0]).toMatch(/⚑ 1 pending +●0 ‖1 ✓1 ✗1 ⊘1$/);
  await ui.resize(44, 20);
  await ui.waitFor(() => ui!.lines()[0]!.length <= 44);
  expect(ui.lines()[0]).toMatch(/⚑ 1 pending +‖1 ✗1 ⊘1$/);
  await ui.resize(40, 20);
  await ui.waitFor(() => ui!.lines()[0]!.length <= 40);
  expect(ui.lines()[0]).toMatch(/⚑ 1 pending +‖1 ✗1$/);
});
