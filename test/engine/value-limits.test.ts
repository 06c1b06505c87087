import { describe, expect, it } from "vitest";
import { z } from "zod";
import { MAX_DEPTH, ValidationError, editPatch, workflow, type Commit, type Engine, type Store } from "../../engine/index.js";
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

  it("any other error while saving a step (the store's write refuses it) is recorded as the step's failure, not left for a 'lost' worker to run again", async () => {
    const ran = { big: 0, slow: 0 };
    const wf = workflow("unsaveable", { state: anyState })
      .node("start", () => ({}), { next: ["big", "slow"] })
      .node("big", () => {
        ran.big++;
        return { v: "x" };
      })
      .node("slow", async () => {
        ran.slow++;
        await sleep(300);
        return { w: 1 };
      })
      .compile();
    // Saved while its sibling still runs, big's step meets a store that cannot write it (not a
    // failure to reach the store, which is tried again).
    const opened = await factory.open();
    const store = new Proxy(opened, {
      get(target, key, receiver) {
        const value = Reflect.get(target, key, receiver) as unknown;
        if (key === "commit") {
          return async (commit: Commit) => {
            if (commit.tasks?.some((t) => t.node === "big" && t.status === "succeeded")) throw new RangeError("string or blob too big");
            return target.commit(commit);
          };
        }
        return typeof value === "function" ? value.bind(target) : value;
      },
    }) as Store;
    const engine = await harness.engine([wf], { store, worker: { leaseMs: 600, maxRecoveries: 2 } });
    try {
      const run = await engine.start(wf, {});
      const settled = await run.wait({ timeoutMs: 10_000 });
      expect([settled.status, settled.reason]).toEqual(["paused", "retries-exhausted"]);
      // Past a few leases nothing runs it again (a lost worker's recovery would have).
      await sleep(1_500);
      expect(ran).toEqual({ big: 1, slow: 1 });
      const tasks = await engine.store.listTasks(run.id, { step: 2 });
      const big = tasks.find((t) => t.node === "big")!;
      expect(big.status).toBe("failed");
      expect(big.error).toMatchObject({ code: "NOT_SAVED", message: expect.stringMatching(/^the step could not be saved: .*string or blob too big/) });
      expect(big.attempts.map((a) => a.code)).toEqual(["NOT_SAVED"]);
      expect((await engine.store.getRun(run.id))!.recoveries).toBe(0);
    } finally {
      await engine.close();
      await opened.close();
    }
  });

  it("a node's value JSON would not keep as it is (a Date, a Map, NaN, a BigInt) fails the attempt, naming where, before anything is saved", async () => {
    const returned: Record<string, unknown>[] = [{ v: { at: new Date(0) } }, { v: [new Map([["a", 1]])] }, { v: { n: NaN } }, { v: 10n }];
    const said = [
      "holds a Date (JSON would make it a string: give date.toISOString()) at $.v.at",
      "holds a Map (JSON would make it {}: give an object, or an array of [key, value] pairs) at $.v[0]",
      "holds the number NaN (JSON has none: it would become null) at $.v.n",
      "holds a bigint (JSON has none: give a number or a string) at $.v",
    ];
    for (const [i, value] of returned.entries()) {
      const wf = workflow(`odd-${i}`, { state: anyState }).node("make", () => value, { next: "END" }).compile();
      const engine = await harness.engine([wf]);
      const run = await engine.start(wf, {});
      expect((await run.wait({ timeoutMs: 10_000 })).reason).toBe("retries-exhausted");
      const [task] = await engine.store.listTasks(run.id);
      expect(task!.error).toMatchObject({ code: "BAD_OUTPUT", message: `node "make" returned a value that ${said[i]}: state is stored as JSON and read back as it` });
      expect(await run.state()).toEqual({ v: null, w: null });
    }
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
    // A value JSON would change: refused where the key's schema takes anything, the key's schema speaking first otherwise.
    await expect(engine.start(wf, { v: { since: new Date(0) } })).rejects.toThrow("run input holds a Date (JSON would make it a string: give date.toISOString()) at $.v.since");
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
