import { execFileSync } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, expect, it } from "vitest";
import { createEngine, openStore } from "../../engine/index.js";
import { ConsoleData } from "../../source/console/data.js";
import { LiveFeed } from "../../source/console/live.js";
import { BIN } from "../support/cli.js";
import { until } from "../support/engine.js";
import { settle, taskQueueWorkflow } from "./fixtures.js";

const dir = mkdtempSync(join(tmpdir(), "pitwall-console-deleted-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

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
  }
});
