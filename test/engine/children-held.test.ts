import { describe, expect, it } from "vitest";
import { actionRegistry, loadWorkflowValue } from "../../engine/index.js";
import { engineHarness } from "../support/engine.js";
import { storeFactories } from "../support/stores.js";

const actions = actionRegistry({ t: { start: () => ({}) } });
const asks = { name: "asks", state: {}, start: "ok", nodes: { ok: { kind: "approval", question: "Go?", next: "END" } } };

/** A parent that fans out to a long timer and a sub-workflow whose first node asks a person. */
const timerBesideChild = loadWorkflowValue(
  {
    name: "timer-beside-child",
    state: {},
    start: "fan",
    nodes: { fan: { action: "t.start", next: ["nap", "sub"] }, nap: { kind: "wait", seconds: 600, next: "END" }, sub: { kind: "subgraph", workflow: asks, next: "END" } },
  },
  actions,
);

/** A parent whose mapped sub-workflow's first child sleeps and second asks a person. */
const mappedChildren = loadWorkflowValue(
  {
    name: "mapped-children",
    state: { which: { type: "array", items: { type: "string" }, default: [] } },
    start: "each",
    nodes: { each: { kind: "subgraph", workflow: { name: "either", state: { item: { type: "string" } }, start: "pick", nodes: {
      pick: { action: "t.start", routes: { sleep: "nap", ask: "ok" }, routeOn: "item" },
      nap: { kind: "wait", seconds: 600, next: "END" },
      ok: { kind: "approval", question: "Go?", next: "END" },
    } }, map: { over: "which" }, output: {}, next: "END" } },
  },
  actions,
);

describe.each(storeFactories)("a run held up by more than one thing ($name store)", (factory) => {
  const harness = engineHarness(factory);

  it("settles when a sub-workflow beside a parallel branch's timer asks a person, and notices at once when that child is canceled", async () => {
    const engine = await harness.engine([timerBesideChild]);
    const run = await engine.start(timerBesideChild);
    const settled = await run.wait({ timeoutMs: 10_000 });
    expect(settled.status).toBe("queued");
    const [asked] = await run.pendingInterrupts();
    expect(asked).toMatchObject({ node: "ok", kind: "approval" });

    await engine.operator("ann").cancel(asked!.runId, { reason: "not needed" });
    // Not 600 s later, when the timer would have woken it: the canceled child is the parent's failure now.
    expect(await run.wait({ timeoutMs: 10_000 })).toMatchObject({ status: "paused", reason: "retries-exhausted", current: expect.arrayContaining(["sub"]) });
  });

  it("settles when the second child of a mapped sub-workflow asks a person while the first sleeps", async () => {
    const engine = await harness.engine([mappedChildren]);
    const run = await engine.start(mappedChildren, { which: ["sleep", "ask"] });
    expect((await run.wait({ timeoutMs: 10_000 })).status).toBe("queued");
    expect((await run.pendingInterrupts()).map((i) => i.node)).toEqual(["ok"]);
  });
});
