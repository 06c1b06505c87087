import { execFileSync } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, afterEach, expect, it } from "vitest";
import { createEngine, openStore } from "../../engine/index.js";
import { ConsoleData } from "../../source/console/data.js";
import { LiveFeed } from "../../source/console/live.js";
import { BIN } from "../support/cli.js";
import { until } from "../support/engine.js";
import { settle, taskQueueWorkflow } from "./fixtures.js";
import { openConsole, type ConsoleHarness } from "./harness.js";

const dir = mkdtempSync(join(tmpdir(), "pitwall-console-deleted-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
let ui: ConsoleHarness | undefined;
afterEach(() => {
  ui?.unmount();
  ui = undefined;
});

it("drops the runs that another process deleted (pitwall prune), although deleting writes no event", async () => {
  const file = join(dir, "pitwall.db");
  const store = await openStore(`sqlite:${file}`);
  const engine = createEngine({ store, workflows: [taskQueueWorkflow()], worker: { pollMs: 20 } });
  const feed = new LiveFeed(store);
  const data = new ConsoleData(store, feed, 20_000, 50);
  try {
    const ended = [await settle(engine, "task-queue"), await settle(engine, "task-queue")];
    const queued = await engine.start("task-queue", {}, { interruptBefore: ["work"] });
    feed.start(await store.lastEventSeq());
    await data.start();
    await until(() => data.snapshot().runs.size === 3, 5_000, "three runs shown");
    execFileSync(process.execPath, [BIN, "prune", "--ended-before", "0s", "--store", `sqlite:${file}`], { encoding: "utf8" });
    await until(() => data.snapshot().runs.size === 1, 5_000, "the deleted runs to go");
    expect([...data.snapshot().runs.keys()]).toEqual([queued.id]);
    expect(ended.every((r) => !data.snapshot().runs.has(r.id))).toBe(true);
  } finally {
    data.stop();
    await feed.stop();
    await engine.close();
    await store.close();
  }
});

it("leaves the view of a run another process deleted, saying so, for the runs list; also one it comes back to", async () => {
  const file = join(dir, "open-run.db");
  const store = await openStore(`sqlite:${file}`);
  const engine = createEngine({ store, workflows: [taskQueueWorkflow()], worker: { pollMs: 20 } });
  const remove = (runId: string) => execFileSync(process.execPath, [BIN, "delete", runId, "--store", `sqlite:${file}`], { encoding: "utf8" });
  try {
    const [first, second, kept] = [await settle(engine, "task-queue"), await settle(engine, "task-queue"), await settle(engine, "task-queue")];
    ui = await openConsole({ store, columns: 100, recountMs: 50, initial: { kind: "run", runId: first.id } });
    await ui.press("4");
    await ui.waitFor(/\d+ checkpoints/);
    remove(first.id);
    const list = await ui.waitFor(`run ${first.id} was deleted by another process`);
    expect(list).toContain(" Runs ");
    expect(list).not.toContain("checkpoints");
    await ui.waitFor(kept.id);
    expect(ui.lines().filter((l) => l.includes(first.id))).toEqual([expect.stringContaining("was deleted")]);

    // A page stacked on the run view when the run goes: esc comes back to the runs list, not to what it showed.
    while (!(ui.lines().find((l) => l.startsWith("›")) ?? "").includes(second.id)) await ui.press("j");
    await ui.press("enter");
    await ui.waitFor("1 Graph");
    await ui.press("4");
    await ui.waitFor(/\d+ checkpoints/);
    await ui.press("enter");
    await ui.waitFor("against its parent");
    remove(second.id);
    await ui.press("esc");
    const back = await ui.waitFor(`run ${second.id} was deleted by another process`);
    expect(back).toContain(" Runs ");
    expect(back).not.toContain("1 Graph");
  } finally {
    ui?.unmount();
    ui = undefined;
    await engine.close();
    await store.close();
  }
});
