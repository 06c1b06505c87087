import { describe, expect, it } from "vitest";
import { z } from "zod";
import { MAX_DEPTH, ValidationError, editPatch, workflow, type Engine } from "../../engine/index.js";
import { engineHarness, sleep } from "../support/engine.js";
import { storeFactories } from "../support/stores.js";

/** An array inside an array ... `depth` times: JSON's stack-hungriest shape. */
function nested(depth: number): unknown {
  let value: unknown = 1;
  for (let i = 0; i < depth; i++) value = [value];
  return value;
}

const anyState = z.object({ v: z.any().default(null), w: z.any().default(null) });

async function eventTypes(engine: Engine, runId: string): Promise<string[]> {
  return (await engine.store.readEvents({ runId })).map((e) => e.type);
}

describe.each(storeFactories.filter((f) => f.name !== "memory"))("a value the store cannot save ($name)", (factory) => {
  const harness = engineHarness(factory);

  it("a node result nested past the limit fails that attempt as the node's error, naming the node and the depth; the node ran once", async () => {
    let runs = 0;
    const wf = workflow("too-deep", { state: anyState })
      .node("build", () => {
        runs++;
        return { v: nested(3_000) };
      }, { next: "END" })
      .compile();
    const engine = await harness.engine([wf]);
    const run = await engine.start(wf, {});
    const settled = await run.wait({ timeoutMs: 10_000 });
    expect([settled.status, settled.reason]).toEqual(["paused", "retries-exhausted"]);
    const [task] = await engine.store.listTasks(run.id);
    expect(task).toMatchObject({ status: "failed", error: { code: "BAD_OUTPUT" } });
    expect(task!.error!.message).toBe(`node "build" returned a value that nests objects and arrays 3000 levels deep (at $.v[0][0][0]…); state holds values at most ${MAX_DEPTH} levels deep`);
    expect(runs).toBe(1);
    expect((await engine.store.getRun(run.id))!.recoveries).toBe(0);
  });

  it("any other error while saving a step (a BigInt JSON cannot write) is recorded as the step's failure, not left for a 'lost' worker to run again", async () => {
    const ran = { big: 0, slow: 0 };
    const wf = workflow("unsaveable", { state: anyState })
      .node("start", () => ({}), { next: ["big", "slow"] })
      // Saved while its sibling still runs: the store's own write meets the BigInt.
      .node("big", () => {
        ran.big++;
        return { v: 10n as unknown };
      })
      .node("slow", async () => {
        ran.slow++;
        await sleep(300);
        return { w: 1 };
      })
      .compile();
    const engine = await harness.engine([wf], { worker: { leaseMs: 600, maxRecoveries: 2 } });
    const run = await engine.start(wf, {});
    const settled = await run.wait({ timeoutMs: 10_000 });
    expect([settled.status, settled.reason]).toEqual(["paused", "retries-exhausted"]);
    // Past a few leases nothing runs it again (a lost worker's recovery would have).
    await sleep(1_500);
    expect(ran).toEqual({ big: 1, slow: 1 });
    const tasks = await engine.store.listTasks(run.id, { step: 2 });
    const big = tasks.find((t) => t.node === "big")!;
    expect(big.status).toBe("failed");
    expect(big.error).toMatchObject({ code: "NOT_SAVED", message: expect.stringMatching(/^the step could not be saved: .*BigInt/) });
    expect(big.attempts.map((a) => a.code)).toEqual(["NOT_SAVED"]);
    expect((await engine.store.getRun(run.id))!.recoveries).toBe(0);
  });
});

describe("values entering state: the depth limit and __proto__ keys", () => {
  const harness = engineHarness(storeFactories[0]!);
  const wf = workflow("edits", { state: anyState, interruptBefore: ["work"] }).node("work", () => ({}), { next: "END" }).compile();

  it("a run's input nested past the limit, or holding a __proto__ key, is refused before anything is written", async () => {
    const engine = await harness.engine([wf]);
    const deep = engine.start(wf, { v: nested(5_000) });
    await expect(deep).rejects.toThrow(ValidationError);
    await expect(deep).rejects.toThrow(`run input nests objects and arrays 5000 levels deep (at $.v[0][0][0]…); state holds values at most ${MAX_DEPTH} levels deep`);
    await expect(engine.start(wf, JSON.parse('{"v":{"cfg":{"__proto__":{"admin":true}}}}'))).rejects.toThrow(
      'run input has a key "__proto__" at $.v.cfg: a JavaScript object cannot keep it as data',
    );
    // At the limit a value is fine.
    const ok = await engine.start(wf, { v: nested(MAX_DEPTH - 1) });
    expect((await ok.wait({ timeoutMs: 5_000 })).status).toBe("paused");
    expect((await engine.store.listRuns({})).runs).toHaveLength(1);
  });

  it("an operator's patch or fork nested past the limit is refused, and no command is recorded", async () => {
    const engine = await harness.engine([wf]);
    const run = await engine.start(wf, {});
    await run.wait({ timeoutMs: 5_000 });
    const op = engine.operator("ann");
    const before = await eventTypes(engine, run.id);
    await expect(op.updateState(run.id, { v: nested(3_000) })).rejects.toThrow(/^the patch nests objects and arrays 3000 levels deep/);
    await expect(op.updateState(run.id, [{ op: "add", path: "/w", value: nested(3_000) }])).rejects.toThrow(ValidationError);
    await expect(op.fork(run.id, 0, { patch: { v: nested(3_000) } })).rejects.toThrow(ValidationError);
    await expect(op.updateState(run.id, { v: nested(MAX_DEPTH + 1) })).rejects.toThrow(/^edited state nests objects and arrays 257 levels deep/);
    expect(await eventTypes(engine, run.id)).toEqual([...before, "operator.requested", "operator.refused"]);
  });

  it("a JSON Patch through constructor, prototype or __proto__ is refused naming it; an edit made as a whole state replaces what holds the key", async () => {
    const engine = await harness.engine([wf]);
    const run = await engine.start(wf, { v: { cfg: { constructor: { prototype: {} }, keep: 1 } } });
    await run.wait({ timeoutMs: 5_000 });
    const op = engine.operator("ann");
    await expect(op.updateState(run.id, [{ op: "add", path: "/v/cfg/constructor/prototype/x", value: 1 }])).rejects.toThrow(
      'patch operation 0 (add /v/cfg/constructor/prototype/x) has a path through "constructor", which rfc6902 steps over (the value would land elsewhere): replace the value that holds it whole, at /v/cfg',
    );
    await expect(op.updateState(run.id, [{ op: "add", path: "/v/cfg/__proto__", value: { admin: true } }])).rejects.toThrow('has a path through "__proto__", a key state cannot hold');
    await expect(op.updateState(run.id, JSON.parse('{"v":{"cfg":{"__proto__":{"admin":true}}}}'))).rejects.toThrow('the patch has a key "__proto__" at $.v.cfg');
    expect(await run.state()).toEqual({ v: { cfg: { constructor: { prototype: {} }, keep: 1 } }, w: null });

    const before = await run.state();
    const after = { ...before, v: { cfg: { constructor: { prototype: { x: 1 } }, keep: 1 } } };
    await op.updateState(run.id, editPatch(before, after));
    expect(await run.state()).toEqual(after);
  });
});
