import { describe, expect, it } from "vitest";
import { IllegalTransitionError, newTaskRecord, runTransition, transitionTask } from "../../engine/runtime/transitions.js";

describe("the task and run state machines", () => {
  const task = newTaskRecord({ id: "run-x:1:a", runId: "run-x", step: 1, node: "a", index: null });

  it("allows the transitions of DESIGN.md §2 and refuses every other one", () => {
    const running = transitionTask(task, "running");
    const failed = transitionTask(running, "failed");
    expect(transitionTask(failed, "pending").status).toBe("pending");
    expect(transitionTask(transitionTask(running, "interrupted"), "pending").status).toBe("pending");
    expect(transitionTask(transitionTask(running, "canceled"), "pending").status).toBe("pending");
    const succeeded = transitionTask(running, "succeeded");
    for (const to of ["pending", "running", "failed", "canceled"] as const) {
      expect(() => transitionTask(succeeded, to)).toThrow(IllegalTransitionError);
    }
    expect(() => transitionTask(task, "succeeded")).toThrow("illegal task run-x:1:a transition pending → succeeded");
    expect(() => transitionTask(failed, "running")).toThrow(IllegalTransitionError);
  });

  it("ends runs only from where they may end, and resets what a status change resets", () => {
    expect(runTransition({ id: "r", status: "paused" }, "queued")).toMatchObject({ status: "queued", reason: null, owner: null, leaseUntil: null });
    expect(runTransition({ id: "r", status: "running" }, "succeeded")).toMatchObject({ status: "succeeded", current: [], endedAt: expect.any(Number) });
    expect(() => runTransition({ id: "r", status: "succeeded" }, "queued")).toThrow(IllegalTransitionError);
    expect(() => runTransition({ id: "r", status: "canceled" }, "running")).toThrow(IllegalTransitionError);
    expect(() => runTransition({ id: "r", status: "queued" }, "paused")).toThrow(IllegalTransitionError);
  });
});
