import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { openStore, type EventRecord } from "../../engine/index.js";
import { newRun } from "../../engine/runtime/new-run.js";
import { kill, spawnScript } from "../support/processes.js";

const dir = mkdtempSync(join(tmpdir(), "pitwall-subscribe-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe("SQLite store: live subscription", () => {
  it("delivers events that another process commits, as they are committed", async () => {
    const file = join(dir, "subscribe.db");
    const store = await openStore(`sqlite:${file}`);
    const claimer = spawnScript("claim-once", [file, "run-watched"]);
    const controller = new AbortController();
    try {
      await store.createRun(newRun({ id: "run-watched", workflow: { name: "wf", version: "v1" }, state: {}, actor: "test" }));
      await claimer.line((l) => l.ready === true);
      const seen: EventRecord[] = [];
      const following = (async () => {
        for await (const event of store.subscribe({ runId: "run-watched", signal: controller.signal })) {
          seen.push(event);
          controller.abort();
        }
      })();
      await new Promise((resolve) => setTimeout(resolve, 100)); // the subscriber is waiting now
      const sent = Date.now();
      claimer.process.kill("SIGUSR1");
      await following;
      expect(seen.map((e) => [e.type, e.actor])).toEqual([["run.claimed", `worker:claimer-${claimer.process.pid}`]]);
      expect(Date.now() - sent).toBeLessThan(3000);
    } finally {
      controller.abort();
      await kill(claimer);
      await store.close();
    }
  });

  it("a worker whose store is closed under it reports the lost subscription and leaves its process responsive", async () => {
    const child = spawnScript("closed-under-worker", [join(dir, "closed-under.db")]);
    try {
      const { errors } = await child.line((l) => Array.isArray(l.errors), 15_000);
      expect(errors).toContain("event subscription interrupted: the store ended it (was the store closed?)");
      expect(await child.exited).toBe(0);
    } finally {
      await kill(child);
    }
  });
});
