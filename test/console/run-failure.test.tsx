import { afterEach, expect, it } from "vitest";
import { fixture, settle, type Fixture } from "./fixtures.js";
import { closeAll, openConsole, type ConsoleHarness } from "./harness.js";

let fx: Fixture | undefined;
let ui: ConsoleHarness | undefined;
afterEach(async () => ([ui, fx] = await closeAll(ui, fx)));

it("w shows why a run failed: its error's code, node and message, and the stack trace a line a frame; esc goes back", async () => {
  fx = fixture();
  const failed = await settle(fx.engine, "failing", { lang: "en" });
  expect(failed.status).toBe("failed");
  ui = await openConsole({ store: fx.store, columns: 100, rows: 40 });
  await ui.waitFor(failed.id);
  await ui.press("w");
  const page = await ui.waitFor(`run ${failed.id}: why it failed`);
  const lines = ui.lines();
  expect(page).toMatch(/^ +code +TASK_FAILED$/m);
  expect(page).toMatch(/^ +node +call$/m);
  expect(page).toMatch(/^ +message +node "call" failed after 1 attempt: connection refused, retry later$/m);
  expect(page).toMatch(/^ Failed task call · step 1 · /m);
  // The stack as it was thrown: its message, then one row per frame, not one JSON string.
  const stack = lines.findIndex((l) => l.startsWith(" Stack trace"));
  expect(lines[stack + 1]).toMatch(/^ +Error: connection refused, retry later$/);
  expect(lines[stack + 2]).toMatch(/^ +at .*fixtures\.ts:\d+:\d+\)?$/);
  expect(page).not.toContain("\\n");
  expect(page).toMatch(/^ +#1 failed after \d+ms connection refused, retry later$/m);
  await ui.press("esc");
  await ui.waitFor((f) => f.includes(" Runs ") && !f.includes("why it failed"));

  // From the run view too; a run where nothing failed says so instead.
  await ui.press("enter");
  // Its header says where the why is.
  expect(await ui.waitFor("1 Graph")).toMatch(new RegExp(`${failed.id} {2}failing@\\w{8} .* · ran \\d+ms {2}w: why it failed\n`));
  await ui.press("w");
  await ui.waitFor(`run ${failed.id}: why it failed`);
  await ui.press("esc", "esc");
  const fine = await settle(fx.engine, "failing", { lang: "de" });
  await ui.waitFor(fine.id);
  await ui.press("g");
  await ui.press("w");
  await ui.waitFor(`w: run ${fine.id} (succeeded) has no failure to describe: none of its nodes failed`);
});

it("w follows a sub-workflow's failure down the child runs to the node that threw: its message and stack trace", async () => {
  fx = fixture();
  const failed = await settle(fx.engine, "failing-grandparent");
  expect(failed.status).toBe("failed");
  const child = (await fx.store.listRuns({ parentRunId: failed.id })).runs[0]!;
  const grandchild = (await fx.store.listRuns({ parentRunId: child.id })).runs[0]!;
  ui = await openConsole({ store: fx.store, columns: 100, rows: 100, initial: { kind: "run", runId: failed.id } });
  await ui.waitFor("1 Graph");
  await ui.press("w");
  const page = await ui.waitFor(`run ${failed.id}: why it failed`);
  expect(page).toMatch(/^ +node +delegate$/m);
  // Its node parked on the child run and failed when it ended: one try, resumed once.
  expect(page).toMatch(/^ +message +node "delegate" failed after 1 attempt \(\+1 resume\): child run /m);
  expect(page).toMatch(/^ +error +ChildRunError \(CHILD_FAILED\)$/m);
  const lines = ui.lines();
  const at = (pattern: RegExp, from = 0) => lines.findIndex((l, i) => i >= from && pattern.test(l));
  // Each child run in turn, under the failure of the node that started it, down to the one where a node threw.
  const first = at(new RegExp(`^ Child run ${child.id} · started by delegate of ${failed.id}$`));
  const second = at(new RegExp(`^ Child run ${grandchild.id} · started by ask of ${child.id}$`));
  expect(first).toBeGreaterThan(0);
  expect(second).toBeGreaterThan(first);
  expect(at(/^ +error +ChildRunError \(CHILD_FAILED\)$/, first)).toBeLessThan(second);
  // Its attempts as tries, as the Timeline and `show` count them: parked on the child run and resumed is one try.
  const tries = lines.slice(at(/^ Attempts$/), first).filter((l) => /^ +#\d/.test(l));
  expect(tries).toHaveLength(1);
  expect(tries[0]).toMatch(/^ +#1 failed after \d+ms \(\+1 resume\) CHILD_FAILED: child run /);
  expect(at(/^ failed {2}failing · step 1/, second)).toBe(second + 1);
  expect(at(/^ Failed task call · step 1 · /, second)).toBeGreaterThan(second);
  const stack = at(/^ Stack trace/, second);
  expect(lines[stack + 1]).toMatch(/^ +Error: connection refused, retry later$/);
  expect(lines[stack + 2]).toMatch(/^ +at .*fixtures\.ts:\d+:\d+\)?$/);
});
