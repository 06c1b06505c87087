import { expect, it } from "vitest";
import { z } from "zod";
import { workflow } from "../../engine/index.js";
import { openConsole } from "./harness.js";
import { sqliteFixtures } from "./sqlite-fixture.js";

const sqlite = sqliteFixtures("retry-wait");

it("says a queued run waits out a retry's backoff, which node and which attempt, not a timer", async () => {
  const { fx } = await sqlite.open();
  const flaky = workflow("flaky", { state: z.object({ n: z.number().default(0) }) })
    .node(
      "fetch",
      () => {
        throw new Error("upstream 503");
      },
      { next: "END", retry: { maxAttempts: 3, backoffMs: 60_000, maxBackoffMs: 60_000, jitter: 0 } },
    )
    .compile();
  const run = await fx.engine.start(flaky);
  // Released for a backoff longer than the worker holds a run through.
  for (let i = 0; i < 200 && (await fx.store.getRun(run.id))?.wakeAt == null; i++) await new Promise((r) => setTimeout(r, 25));
  const ui = sqlite.console(await openConsole({ store: fx.store, columns: 160 }));
  const row = (await ui.waitFor(/retry of fetch in \d+s, attempt 2/)).split("\n").find((l) => l.includes(run.id));
  expect(row).toMatch(/retry of fetch in (59|60)s, attempt 2/);
  expect(row).not.toContain("timer");
  while (!(ui.lines().find((l) => l.startsWith("›")) ?? "").includes(run.id)) await ui.press("j");
  await ui.press("enter");
  expect(await ui.waitFor("1 Graph")).toMatch(/retry of fetch in \d+s, attempt 2/);
});
