import { expect, it } from "vitest";
import { newRun } from "../../engine/runtime/new-run.js";
import type { RunRecord } from "../../engine/index.js";
import { runActivity, runDuration } from "../../source/console/views/runs-view.js";

const base = newRun({ id: "run-1", workflow: { name: "wf", version: "v1" }, state: {}, actor: "test" }).run;
const run = (patch: Partial<RunRecord>): RunRecord => ({ ...base, ...patch });

it("says what a run waits on in a few words: the failure it paused on, when its timer wakes, its paused child's reason", () => {
  const now = Date.now();
  const failed = run({ status: "paused", reason: "retries-exhausted", current: ["charge"], error: { code: "TASK_FAILED", node: "charge", message: 'node "charge" failed after 2 attempts: upstream 503' } });
  expect(runActivity(failed, now)).toBe('retries-exhausted: charge — node "charge" failed after 2 attempts: upstream 503');
  expect(runActivity(run({ status: "queued", wakeAt: now + 9 * 60_000 + 30_000 }), now)).toBe("timer, wakes in 9m");
  expect(runActivity(run({ status: "queued", waitingOn: "run-child" }), now, [], false, { ...failed, id: "run-child" })).toBe(
    'waiting for run-child, paused (retries-exhausted: charge — node "charge" failed after 2 attempts: upstream 503)',
  );
});

it("counts a paused run's time up to its pause: waiting for a person is not running, nor is an operator's edit since", () => {
  const now = Date.now();
  const paused = run({ status: "paused", reason: "interrupt", startedAt: now - 600_000, updatedAt: now - 1_000 });
  expect(runDuration(paused, now, now - 599_000)).toBe(runDuration(run({ status: "succeeded", startedAt: now - 600_000, endedAt: now - 599_000 }), now, undefined));
  expect(runDuration(run({ status: "running", startedAt: now - 5_000 }), now, undefined)).toBe(
    runDuration(run({ status: "succeeded", startedAt: now - 5_000, endedAt: now }), now, undefined),
  );
});
