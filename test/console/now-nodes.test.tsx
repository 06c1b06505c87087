import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, afterEach, expect, it } from "vitest";
import { z } from "zod";
import { execFile } from "node:child_process";
import { promisify } from "node:util";
import { Operator, createEngine, openStore, workflow, type Engine } from "../../engine/index.js";
import { BIN } from "../support/cli.js";
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

/** Two parallel branches: `polite` stops when aborted, `stubborn` ignores its signal (for a while). */
function stubborn() {
  const untilAborted = (_s: unknown, ctx: { signal: AbortSignal }) => new Promise<{ n: number }>((_resolve, reject) => ctx.signal.addEventListener("abort", () => reject(new Error("aborted"))));
  return workflow("stubborn", { state: z.object({ n: z.number().default(0) }) })
    .node("split", () => ({}), { next: ["polite", "stubborn"] })
    .node("polite", untilAborted, { next: "END" })
    .node("stubborn", () => new Promise<{ n: number }>((resolve) => setTimeout(() => resolve({ n: 1 }), 3_000)), { next: "END" })
    .compile();
}

it("shows a killed branch that ignored its signal as stopped, not running, while its sibling goes on", async () => {
  const file = join(dir, "stubborn.db");
  const store = await openStore(`sqlite:${file}`);
  engine = createEngine({ store, worker: { pollMs: 20, killGraceMs: 100 }, workflows: [stubborn()] });
  const handle = await engine.start("stubborn", {});
  await until(async () => (await store.listTasks(handle.id)).filter((t) => t.status === "running").length === 2);
  await new Operator(store, { actor: "alice" }).kill(handle.id, { task: "stubborn" });
  // Abandoned after the grace period: its task is canceled, the run still running polite.
  await until(async () => (await store.listTasks(handle.id)).some((t) => t.node === "stubborn" && t.status === "canceled"));
  expect((await store.getRun(handle.id))!).toMatchObject({ status: "running", current: ["polite", "stubborn"] });
  ui = await openConsole({ store, columns: 120, initial: { kind: "run", runId: handle.id } });
  const frame = await ui.waitFor("⊘ stubborn");
  expect(frame.split("\n")[2]).toMatch(/^ polite\s*$/);
  expect(frame).toContain("▶● polite");
  expect(frame).not.toContain("▶⊘");
  const shown = await promisify(execFile)(process.execPath, [BIN, "show", handle.id, "--store", `sqlite:${file}`]);
  expect(shown.stdout).toMatch(/· running polite \(stopped: stubborn\)$/m);
  await engine.run(handle.id).cancel("done");
});
