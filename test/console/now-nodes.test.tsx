import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, afterEach, expect, it } from "vitest";
import { z } from "zod";
import { createEngine, openStore, workflow, type Engine } from "../../engine/index.js";
import { until } from "../support/engine.js";
import { closeAll, openConsole, type ConsoleHarness } from "./harness.js";

const dir = mkdtempSync(join(tmpdir(), "pitwall-console-now-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
let engine: Engine | undefined;
let ui: ConsoleHarness | undefined;
afterEach(async () => ([ui, engine] = await closeAll(ui, engine)));

/** Two parallel branches: one done at once, one working until it is aborted. */
function branches() {
  return workflow("branches", { state: z.object({ n: z.number().default(0) }) })
    .node("split", () => ({}), { next: ["quick-branch", "long-branch"] })
    .node("quick-branch", () => ({ n: 1 }), { next: "join" })
    .node("long-branch", (_s, ctx) => new Promise((_resolve, reject) => ctx.signal.addEventListener("abort", () => reject(new Error("aborted")))), { next: "join" })
    .node("join", () => ({}), { next: "END", waitFor: ["quick-branch", "long-branch"] })
    .compile();
}

it("lists as now only the nodes of the step still at work, not a parallel branch that already succeeded", async () => {
  const store = await openStore(`sqlite:${join(dir, "now.db")}`);
  engine = createEngine({ store, worker: { pollMs: 20, killGraceMs: 100 }, workflows: [branches()] });
  const handle = await engine.start("branches", {});
  await until(async () => (await store.listTasks(handle.id)).some((t) => t.node === "quick-branch" && t.status === "succeeded"));
  expect((await store.getRun(handle.id))!.current).toContain("quick-branch"); // what the engine lists until the step commits
  ui = await openConsole({ store, columns: 120 });
  await ui.waitFor(handle.id);
  // The row may first show what the run record lists, until the run's tasks are read beside it.
  const rowOf = (f: string) => f.split("\n").find((l) => l.includes(handle.id)) ?? "";
  const row = await ui.waitFor((f) => /long-branch/.test(rowOf(f)) && !rowOf(f).includes("quick-branch"));
  expect(rowOf(row)).toMatch(/long-branch/);
  await ui.press("enter");
  const frame = await ui.waitFor("1 Graph");
  // The header's second line: what the run does now.
  expect(frame.split("\n")[2]).toMatch(/^ long-branch\s*$/);
  expect(frame).toContain("▶● long-branch");
  expect(frame).not.toContain("▶✓");
  expect(frame).toContain("✓ quick-branch");
});
