import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { MemoryStore, ValidationError, Worker, WorkflowRegistry, actionRegistry, workflow } from "../../engine/index.js";
import { applyOps, reduceWrites, type ChannelOp, type Reducer, type State } from "../../engine/state/ops.js";
import { StateChain, decodeSnapshot, jsonBytes, type Snapshot } from "../../engine/state/snapshot.js";
import { engineHarness } from "../support/engine.js";
import { storeFactories } from "../support/stores.js";

describe("the fold of deltas and snapshots (property)", () => {
  const reducers: Record<string, Reducer> = { list: "append", text: "replace", obj: "merge", total: (a, b) => (a as number) + (b as number) };
  /** The reference: each write applied directly, the way a reader of DESIGN.md expects. */
  const naive = (state: State, key: string, value: unknown): State => {
    const reducer = reducers[key]!;
    if (reducer === "append") return { ...state, [key]: [...(state[key] as unknown[]), ...(value as unknown[])] };
    if (reducer === "merge") return { ...state, [key]: { ...(state[key] as object), ...(value as object) } };
    if (reducer === "replace") return { ...state, [key]: value };
    return { ...state, [key]: reducer(state[key], value) };
  };
  const write = fc.oneof(
    fc.record({ key: fc.constant("list"), value: fc.array(fc.string({ maxLength: 5 }), { maxLength: 3 }) }),
    fc.record({ key: fc.constant("text"), value: fc.string({ maxLength: 10 }) }),
    fc.record({ key: fc.constant("obj"), value: fc.dictionary(fc.constantFrom("a", "b", "c"), fc.integer()) }),
    fc.record({ key: fc.constant("total"), value: fc.integer({ min: -100, max: 100 }) }),
  );

  it("folding any sequence of writes through snapshots and deltas equals applying them one by one", () => {
    fc.assert(
      fc.property(fc.array(fc.array(write, { maxLength: 4 }), { maxLength: 60 }), fc.integer({ min: 1, max: 8 }), (steps, every) => {
        const initial: State = { list: [], text: "", obj: {}, total: 0 };
        const { chain, snapshot: first } = StateChain.start({ every, minBytes: 128 }, initial);
        const snapshots = new Map<number, Snapshot>([[0, first]]);
        const deltas = new Map<number, ChannelOp[]>();
        let expected = initial;
        let current = initial;
        steps.forEach((writes, i) => {
          const n = i + 1;
          // One writer per key per step, as the runtime guarantees for replace keys.
          const seen = new Set<string>();
          const unique = writes.filter((w) => (reducers[w.key] === "replace" ? !seen.has(w.key) && seen.add(w.key) : true));
          for (const w of unique) expected = naive(expected, w.key, w.value);
          const { state, ops } = reduceWrites(current, unique.map((w, k) => ({ ...w, writer: `n${k}` })), (key) => reducers[key]!);
          current = state;
          deltas.set(n, ops);
          const snapshot = chain.advance(n, ops, state);
          if (snapshot) snapshots.set(n, snapshot);
          expect(state).toEqual(expected);
          // Read it back the way a store does: nearest snapshot, its segments, then the deltas.
          const base = Math.max(...[...snapshots.keys()].filter((k) => k <= n));
          let read = decodeSnapshot(snapshots.get(base)!, snapshots);
          for (let k = base + 1; k <= n; k++) read = applyOps(read, deltas.get(k)!);
          expect(read).toEqual(expected);
          expect(n - base).toBeLessThanOrEqual(every);
        });
      }),
      { numRuns: 200 },
    );
  });

  it("refuses a snapshot interval a worker could not keep, naming it on one line", () => {
    const store = new MemoryStore();
    const registry = new WorkflowRegistry(store, actionRegistry({}));
    for (const every of [0, -3, 2.5, Number.NaN]) {
      const make = () => new Worker(store, registry, { snapshotPolicy: { every } });
      expect(make).toThrow(ValidationError);
      expect(make).toThrow(`snapshot interval must be a whole number of checkpoints of at least 1, not ${every}`);
    }
    expect(() => new Worker(store, registry, { snapshotPolicy: { minBytes: -1 } })).toThrow(/^snapshot size threshold must be a number of bytes of at least 0, not -1$/);
    expect(() => new Worker(store, registry, { snapshotPolicy: { every: 8 } })).not.toThrow();
  });
});

describe("a written value's size, as a step measures it (property)", () => {
  it("is the bytes of the value's JSON: text of any characters, numbers, lists, objects, what JSON has no form for", () => {
    const item = fc.oneof(fc.string({ unit: "binary" }), fc.string({ unit: "binary-ascii" }), fc.double(), fc.integer(), fc.boolean(), fc.constant(null), fc.constant(undefined));
    const value = fc.oneof(item, fc.array(item), fc.array(fc.array(item, { maxLength: 3 })), fc.jsonValue(), fc.constant([1, () => 2]), fc.constant(new Date(0)));
    fc.assert(
      fc.property(value, (v) => jsonBytes(v) === Buffer.byteLength(JSON.stringify(v) ?? "null")),
      { numRuns: 3000 },
    );
  });
});

describe.each(storeFactories)("reducers in runs ($name store)", (factory) => {
  const harness = engineHarness(factory);

  it("applies replace, append, merge and custom reducers", async () => {
    const wf = workflow("reducers", {
      state: z.object({
        last: z.string().default(""),
        items: z.array(z.string()).default([]),
        meta: z.record(z.string(), z.number()).default({}),
        total: z.number().default(0),
      }),
      // A custom reducer is typed by its key: no casts.
      reducers: { items: "append", meta: "merge", total: (a: number, b: number) => a + b },
    })
      .node("one", () => ({ last: "one", items: ["a"], meta: { x: 1 }, total: 5 }), { next: "two" })
      .node("two", () => ({ last: "two", items: ["b", "c"], meta: { y: 2 }, total: 10 }), { next: "END" })
      .compile();
    const engine = await harness.engine([wf]);
    const run = await engine.start(wf, { total: 1 });
    await run.wait();
    expect(await run.state()).toEqual({ last: "two", items: ["a", "b", "c"], meta: { x: 1, y: 2 }, total: 16 });
    const deltas = (await engine.store.listCheckpoints(run.id)).map((c) => c.delta);
    expect(deltas[2]).toEqual([
      ["last", "set", "two"],
      ["items", "append", ["b", "c"]],
      ["meta", "merge", { y: 2 }],
      ["total", "set", 16],
    ]);
  });

  it("gives each step's checkpoint the size its delta (and snapshot) takes as JSON, in UTF-8 bytes", async () => {
    const wf = workflow("sizes", {
      state: z.object({ note: z.string().default(""), items: z.array(z.string()).default([]), meta: z.record(z.string(), z.unknown()).default({}) }),
      reducers: { items: "append", meta: "merge" },
      limits: { maxSteps: 20 },
    })
      .node("one", () => ({ note: "naïve café ☕", items: ["€", 'quote " and \\ back'], meta: { "ключ": [1, { "ü": null }] } }), { next: "two" })
      .node("two", () => ({ items: [] }), { next: "three" })
      .node("three", () => ({}), { next: "END" })
      .compile();
    const engine = await harness.engine([wf]);
    const run = await engine.start(wf, {});
    await run.wait();
    const steps = (await engine.store.listCheckpoints(run.id)).filter((c) => c.source === "loop");
    expect(steps.map((c) => c.delta.length)).toEqual([3, 1, 0]);
    for (const c of steps) expect(c.bytes).toBe(Buffer.byteLength(JSON.stringify(c.delta)) + (c.snapshot ? Buffer.byteLength(JSON.stringify(c.snapshot)) : 0));
  });

  it("fails the step, naming both nodes, when two parallel nodes write one replace key", async () => {
    const wf = workflow("conflict", { state: z.object({ answer: z.string().default(""), log: z.array(z.string()).default([]) }), reducers: { log: "append" } })
      .node("fork", () => ({}), { next: ["left", "right"] })
      .node("left", () => ({ answer: "L", log: ["l"] }), { next: "END" })
      .node("right", () => ({ answer: "R", log: ["r"] }), { next: "END" })
      .compile();
    const engine = await harness.engine([wf]);
    const run = await engine.start(wf);
    const end = await run.wait();
    expect(end.status).toBe("failed");
    expect(end.error).toMatchObject({ code: "WRITE_CONFLICT" });
    expect(end.error!.message).toBe('nodes "left" and "right" both wrote state key "answer" in the same step, and its reducer (replace) keeps only one value');
    expect(await run.state()).toEqual({ answer: "", log: [] });
  });

  it("fails a task whose update does not match the state schema, naming the path", async () => {
    const wf = workflow("bad-output", { state: z.object({ count: z.number().default(0), tags: z.array(z.string()).default([]) }), reducers: { tags: "append" } })
      .node("a", () => ({ tags: ["ok", 7] }) as never, { next: "END" })
      .compile();
    const engine = await harness.engine([wf]);
    const run = await engine.start(wf);
    const end = await run.wait();
    expect(end).toMatchObject({ status: "paused", reason: "retries-exhausted" });
    const [task] = await engine.store.listTasks(run.id);
    expect(task!.error).toMatchObject({ code: "BAD_OUTPUT", message: 'node "a" wrote an invalid update: $.tags[+1]: expected string, got number 7' });
  });

  it("gives nodes a read-only state (a change in place would not be stored) and keeps no reference to what a node returned", async () => {
    const returned: { items: string[]; notes: string[] } = { items: ["first"], notes: ["kept"] };
    const wf = workflow("in-place", {
      state: z.object({ items: z.array(z.string()).default([]), notes: z.array(z.string()).default([]), n: z.number().default(0) }),
      reducers: { items: "append" },
    })
      .node("a", () => returned, { next: "b" })
      .node("b", () => {
        // The list a node returned is still its own to change: the state keeps what was returned.
        returned.notes.push("changed afterwards");
        return { n: 1 };
      }, { next: "c" })
      .node("c", (s) => {
        s.items.push("pushed in place");
        return {};
      }, { next: "END" })
      .compile();
    const engine = await harness.engine([wf]);
    const run = await engine.start(wf);
    expect(await run.wait()).toMatchObject({ status: "paused", reason: "retries-exhausted" });
    const tasks = await engine.store.listTasks(run.id);
    expect(tasks.find((t) => t.node === "b")!.status).toBe("succeeded");
    expect(tasks.find((t) => t.node === "c")!.error!.message).toMatch(/object is not extensible: the state a node is given is read-only; return the change instead/);
    expect(await run.state()).toEqual({ items: ["first"], notes: ["kept"], n: 1 });
  });

  it("says how to route and write when a node returns a route beside its update", async () => {
    const wf = workflow("route-and-write", { state: z.object({ n: z.number().default(0) }) })
      .node("a", () => ({ route: "done", n: 7 }) as never, { routes: { done: "END" }, default: "END" })
      .compile();
    const engine = await harness.engine([wf]);
    const run = await engine.start(wf);
    expect(await run.wait()).toMatchObject({ status: "paused", reason: "retries-exhausted" });
    const [task] = await engine.store.listTasks(run.id);
    expect(task!.error!.message).toBe('node "a" returned a route in an update: to choose a route and write state, return { route: "KEY", update: { ... } } (route a string, nothing else beside them)');
  });

  it("writes a state key named route from a node without routes, and says so when a node without routes returns a route", async () => {
    const wf = workflow("route-key", { state: z.object({ route: z.string().default("none"), n: z.number().default(0) }) })
      .node("a", () => ({ route: "via-sea" }), { next: "b" })
      .node("b", (s) => ({ n: s.route === "via-sea" ? 1 : 2 }), { next: "END" })
      .compile();
    const stray = workflow("stray-route", { state: z.object({ n: z.number().default(0) }) })
      .node("a", () => ({ route: "left" }) as never, { next: "END" })
      .compile();
    const engine = await harness.engine([wf, stray]);
    const run = await engine.start(wf);
    expect((await run.wait()).status).toBe("succeeded");
    expect(await run.state()).toEqual({ route: "via-sea", n: 1 });
    const strayRun = await engine.start(stray);
    expect(await strayRun.wait()).toMatchObject({ status: "paused", reason: "retries-exhausted" });
    const [task] = await engine.store.listTasks(strayRun.id);
    expect(task!.error!.message).toBe('node "a" returned a route, but it has no routes (it goes on to END); give it routes, or leave route out');
  });

  it("leaves a key a node writes as undefined as it was (as JSON does), and names an array returned", async () => {
    const wf = workflow("undefined-write", { state: z.object({ n: z.number().default(5), name: z.string() }) })
      .node("a", () => ({ n: undefined as unknown as number, name: "y" }), { next: "b" })
      .node("b", (s) => ({ n: s.n + 1 }), { next: "END" })
      .compile();
    const list = workflow("array-result", { state: z.object({ n: z.number().default(0) }) })
      .node("a", () => [1, 2] as never, { next: "END" })
      .compile();
    const engine = await harness.engine([wf, list]);
    const run = await engine.start(wf, { name: "x" });
    expect((await run.wait()).status).toBe("succeeded");
    expect(await run.state()).toEqual({ n: 6, name: "y" });
    const listRun = await engine.start(list);
    await listRun.wait();
    const [task] = await engine.store.listTasks(listRun.id);
    expect(task!.error!.message).toBe('node "a" returned an array; a node returns an object of state updates');
  });

  it("keeps keys a nested object's schema does not name, unless the schema is strict", async () => {
    const wf = workflow("nested-keys", { state: z.object({ loose: z.object({ a: z.number() }).default({ a: 0 }), strict: z.strictObject({ a: z.number() }).default({ a: 0 }) }) })
      .node("a", () => ({ loose: { a: 1, extra: 2 } as { a: number } }), { next: "b" })
      .node("b", () => ({ strict: { a: 1, extra: 2 } as { a: number } }), { next: "END" })
      .compile();
    const engine = await harness.engine([wf]);
    const run = await engine.start(wf);
    expect(await run.wait()).toMatchObject({ status: "paused", reason: "retries-exhausted", current: ["b"] });
    expect((await run.state()).loose).toEqual({ a: 1, extra: 2 });
    const b = (await engine.store.listTasks(run.id)).find((t) => t.node === "b")!;
    expect(b.error!.message).toMatch(/^node "b" wrote an invalid update: \$\.strict: .*extra/);
  });

  it("checks what a custom reducer makes of a write against the schema", async () => {
    const wf = workflow("custom-reducer", { state: z.object({ total: z.number().default(0) }), reducers: { total: (current: unknown, update: unknown) => `${String(current)}${String(update)}` } })
      .node("a", () => ({ total: 5 }), { next: "END" })
      .compile();
    const engine = await harness.engine([wf]);
    const run = await engine.start(wf);
    expect(await run.wait()).toMatchObject({ status: "paused", reason: "retries-exhausted" });
    const [task] = await engine.store.listTasks(run.id);
    expect(task!.error).toMatchObject({ code: "BAD_OUTPUT", message: 'node "a" wrote an invalid update: $.total: expected number, got string "05"' });
    expect(await run.state()).toEqual({ total: 0 });
  });
});
