import { describe, expect, expectTypeOf, it } from "vitest";
import { z } from "zod";
import { NotFoundError, actionRegistry, loadWorkflowText, workflow, type NodeFunction } from "../../engine/index.js";
import { engineHarness, sleep, until } from "../support/engine.js";
import { storeFactories } from "../support/stores.js";

const listState = z.object({ log: z.array(z.string()).default([]), n: z.number().default(0), verdict: z.string().default("") });

/** A node that appends its name to the log, after an optional delay. */
const mark =
  (name: string, delayMs = 0): NodeFunction =>
  async () => {
    if (delayMs) await sleep(delayMs);
    return { log: [name] };
  };

describe.each(storeFactories)("graphs run as written ($name store)", (factory) => {
  const harness = engineHarness(factory);

  it("follows static edges to END", async () => {
    const wf = workflow("static", { state: listState, reducers: { log: "append" } })
      .node("a", mark("a"), { next: "b" })
      .node("b", mark("b"), { next: "END" })
      .compile();
    const engine = await harness.engine([wf]);
    const run = await engine.start(wf);
    expect(await run.wait()).toMatchObject({ status: "succeeded", step: 2 });
    expect((await run.state()).log).toEqual(["a", "b"]);
  });

  it("fans out to branches that run in the same step and joins when all of them finished", async () => {
    const wf = workflow("fan", { state: listState, reducers: { log: "append" } })
      .node("start", mark("start"), { next: ["quick", "slow"] })
      .node("quick", mark("quick", 0), { next: "quick2" })
      .node("quick2", mark("quick2", 0), { next: "join" })
      .node("slow", mark("slow", 120), { next: "join" })
      .node("join", mark("join"), { waitFor: ["quick2", "slow"], next: "END" })
      .compile();
    const engine = await harness.engine([wf]);
    const run = await engine.start(wf);
    expect((await run.wait()).status).toBe("succeeded");
    // The join ran once, after both branches; writes of one step land in node-name order.
    expect((await run.state()).log).toEqual(["start", "quick", "slow", "quick2", "join"]);
    const checkpoints = await engine.store.listCheckpoints(run.id);
    expect(checkpoints.map((c) => c.nodes)).toEqual([[], ["start"], ["quick", "slow"], ["quick2"], ["join"]]);
    const tasks = await engine.store.listTasks(run.id);
    const started = (node: string) => tasks.find((t) => t.node === node)!.startedAt!;
    expect(Math.abs(started("quick") - started("slow"))).toBeLessThan(100);
    // "quick" finished (and was stored with its writes) while "slow" still ran; once the step's
    // checkpoint holds the writes, no task keeps a copy.
    expect(tasks.filter((t) => t.writes !== null).map((t) => t.node)).toEqual([]);
  });

  it("fans out conditionally: a route may lead to several nodes, which run in parallel in the next step", async () => {
    const wf = workflow("route-fanout", { state: listState, reducers: { log: "append" } })
      .node("triage", (s) => ({ route: s.verdict }), { routes: { both: ["a", "b"], one: "a" } })
      .node("a", mark("a"), { next: "END" })
      .node("b", mark("b"), { next: "END" })
      .compile();
    const engine = await harness.engine([wf]);
    const both = await engine.start(wf, { verdict: "both" });
    expect((await both.wait()).status).toBe("succeeded");
    expect(((await both.state()).log as string[]).sort()).toEqual(["a", "b"]);
    const tasks = await engine.store.listTasks(both.id);
    expect(tasks.filter((t) => t.node !== "triage").map((t) => [t.node, t.step]).sort()).toEqual([["a", 2], ["b", 2]]);
    const one = await engine.start(wf, { verdict: "one" });
    await one.wait();
    expect((await one.state()).log).toEqual(["a"]);
  });

  it("loops SuperAGI-style: check answers NO and loops back until it answers YES", async () => {
    const wf = workflow("yes-no", { state: listState, reducers: { log: "append" } })
      .node("work", (s) => ({ n: s.n + 1, log: [`work${s.n + 1}`] }), { next: "check" })
      .node("check", (s) => ({ route: s.n >= 3 ? "YES" : "NO" }), { routes: { YES: "summary", NO: "work" }, default: "work" })
      .node("summary", mark("summary"), { next: "END" })
      .compile();
    const engine = await harness.engine([wf]);
    const run = await engine.start(wf);
    expect((await run.wait()).status).toBe("succeeded");
    expect((await run.state()).log).toEqual(["work1", "work2", "work3", "summary"]);
    const head = (await engine.store.listCheckpoints(run.id)).at(-1)!;
    expect(head.control.visits).toEqual({ work: 3, check: 3, summary: 1 });
  });

  it("routes on a state key (routeOn) and with a router function, falling back to the default", async () => {
    const wf = workflow("routing", { state: listState, reducers: { log: "append" } })
      .node("decide", (s) => ({ verdict: s.n > 0 ? "ship" : "unknown" }), { routes: { ship: "ship", hold: "hold" }, routeOn: "verdict", default: "hold" })
      .node("ship", mark("ship"), { routes: { twice: "twice", once: "END" }, route: (s) => (s.log.length > 1 ? "twice" : "once") })
      .node("twice", mark("twice"), { next: "END" })
      .node("hold", mark("hold"), { next: "END" })
      .compile();
    const engine = await harness.engine([wf]);
    const shipped = await engine.start(wf, { n: 1, log: ["x"] });
    expect((await shipped.wait()).status).toBe("succeeded");
    expect((await shipped.state()).log).toEqual(["x", "ship", "twice"]);
    const held = await engine.start(wf, { n: 0 });
    await held.wait();
    expect((await held.state()).log).toEqual(["hold"]);
  });

  it("fails the run, naming the node and the key, when a route key matches nothing and there is no default", async () => {
    const wf = workflow("no-match", { state: listState })
      .node("check", () => ({ route: "MAYBE" }), { routes: { YES: "END", NO: "check" } })
      .compile();
    const engine = await harness.engine([wf]);
    const run = await engine.start(wf);
    const end = await run.wait();
    expect(end.status).toBe("failed");
    expect(end.error).toEqual({ code: "ROUTE_NO_MATCH", node: "check", message: 'node "check" chose route "MAYBE", which matches none of YES, NO, and it has no default' });
    const failed = await engine.store.readEvents({ runId: run.id, types: ["run.failed"] });
    expect(failed).toHaveLength(1);
    // A key every JavaScript object holds (toString) is no route either.
    const odd = workflow("no-match-odd", { state: listState })
      .node("check", () => ({ route: "toString" }), { routes: { YES: "END" } })
      .compile();
    const oddEngine = await harness.engine([odd]);
    const oddEnd = await (await oddEngine.start(odd)).wait();
    expect([oddEnd.status, oddEnd.error?.code]).toEqual(["failed", "ROUTE_NO_MATCH"]);
  });

  it("fails the run, naming the node, when its router function throws", async () => {
    const wf = workflow("bad-router", { state: listState })
      .node("check", () => ({}), {
        routes: { a: "END" },
        route: () => {
          throw new Error("no verdict yet");
        },
      })
      .compile();
    const engine = await harness.engine([wf]);
    const end = await (await engine.start(wf)).wait();
    expect(end).toMatchObject({ status: "failed", error: { code: "ROUTER_FAILED", node: "check", message: 'the router of node "check" threw: no verdict yet' } });
  });

  it("names what a router threw when it is not an Error", async () => {
    const wf = workflow("string-router", { state: listState })
      .node("check", () => ({}), {
        routes: { a: "END" },
        route: () => {
          throw "no verdict yet";
        },
      })
      .compile();
    const engine = await harness.engine([wf]);
    const end = await (await engine.start(wf)).wait();
    expect(end).toMatchObject({ status: "failed", error: { code: "ROUTER_FAILED", message: 'the router of node "check" threw: no verdict yet' } });
  });

  it("fails the run with a clear error when it exceeds maxSteps", async () => {
    const wf = workflow("forever", { state: listState, limits: { maxSteps: 5 } })
      .node("spin", (s) => ({ n: s.n + 1 }), { routes: { done: "END" }, default: "spin", route: (s) => (s.n >= 100 ? "done" : undefined) })
      .compile();
    const engine = await harness.engine([wf]);
    const run = await engine.start(wf);
    const end = await run.wait();
    expect(end).toMatchObject({ status: "failed", step: 5, error: { code: "MAX_STEPS", node: "spin" } });
    expect(end.error!.message).toBe(
      "run exceeded its step limit (maxSteps 5) before step 6 (spin): a loop whose way out was never taken; check the route that should leave it, or raise limits.maxSteps if the loop is expected to run this long",
    );
    expect((await run.state()).n).toBe(5);
  });

  it("says a higher step limit would not help a loop with no path to END", async () => {
    const wf = workflow("no-way-out", { state: listState, limits: { maxSteps: 3 } })
      .node("spin", (s) => ({ n: s.n + 1 }), { routes: { again: "spin" }, default: "spin", route: () => "again" })
      .compile();
    expect(wf.warnings.map((w) => w.code)).toEqual(["NO_PATH_TO_END"]);
    const engine = await harness.engine([wf]);
    const end = await (await engine.start(wf)).wait();
    expect(end.error?.message).toBe(
      'run exceeded its step limit (maxSteps 3) before step 4 (spin); no path from "spin" leads to END, so a higher limit would not end it either: give the loop a route to END',
    );
  });

  it("fans out dynamically over a list in state, bounded by the map's concurrency, each task's item typed as one of the list's", async () => {
    let running = 0;
    let peak = 0;
    const wf = workflow("map", { state: z.object({ items: z.array(z.number()).default([]), out: z.array(z.number()).default([]) }), reducers: { out: "append" } })
      .node("square", async (_s, ctx) => {
        running++;
        peak = Math.max(peak, running);
        await sleep(30);
        running--;
        expectTypeOf(ctx.item).toEqualTypeOf<number>();
        return { out: [ctx.item ** 2] };
      }, { map: { over: "items", concurrency: 2 }, next: "END" })
      .compile();
    const engine = await harness.engine([wf]);
    const run = await engine.start(wf, { items: [1, 2, 3, 4, 5] });
    expect((await run.wait()).status).toBe("succeeded");
    expect((await run.state()).out).toEqual([1, 4, 9, 16, 25]);
    expect(peak).toBe(2);
    const tasks = await engine.store.listTasks(run.id);
    expect(tasks.map((t) => [t.index, t.input])).toEqual([[0, 1], [1, 2], [2, 3], [3, 4], [4, 5]]);
  });

  it("lets a node write what its key's reducer takes (typed): one item of an append list, a custom reducer's update", async () => {
    const wf = workflow("writes", {
      state: z.object({ log: z.array(z.string()).default([]), total: z.number().default(0) }),
      reducers: { log: "append", total: (sum: number, add: { by: number }) => sum + add.by },
    })
      .node("a", () => ({ log: "one", total: { by: 2 } }), { next: "b" })
      .node("b", () => ({ log: ["two", "three"], total: { by: 3 } }), { next: "END" })
      .compile();
    const engine = await harness.engine([wf]);
    const run = await engine.start(wf);
    expect((await run.wait({ timeoutMs: 5_000 })).status).toBe("succeeded");
    expect(await run.state()).toEqual({ log: ["one", "two", "three"], total: 5 });
  });

  it("goes on from an ended run with new input: its final state, the input through the reducers, from the start node (a conversation's next turn)", async () => {
    const chat = workflow("chat", { state: z.object({ messages: z.array(z.string()).default([]), turns: z.number().default(0) }), reducers: { messages: "append" } })
      .node("reply", (s) => ({ messages: [`echo: ${s.messages.at(-1)}`], turns: s.turns + 1 }), { next: "END" })
      .compile();
    const engine = await harness.engine([chat]);
    const first = await engine.start(chat, { messages: ["hi"] });
    await first.wait({ timeoutMs: 5_000 });
    const second = await engine.start(chat, { messages: ["how are you?"] }, { from: first.id });
    expect((await second.wait({ timeoutMs: 5_000 })).status).toBe("succeeded");
    expect(await second.state()).toEqual({ messages: ["hi", "echo: hi", "how are you?", "echo: how are you?"], turns: 2 });
    expect(await second.get()).toMatchObject({ forkOf: { runId: first.id, checkpointId: `${first.id}:1` } });
    // Its checkpoint 0 holds the input applied; its log says where it came from and what the input changed.
    expect((await second.state(0)).messages).toEqual(["hi", "echo: hi", "how are you?"]);
    const created = (await engine.store.readEvents({ runId: second.id, types: ["run.created"] }))[0]!;
    expect(created.payload).toMatchObject({ reason: `continues run ${first.id} with new input` });
    expect((await engine.store.listCommands({ runId: first.id }))[0]).toMatchObject({ type: "fork", status: "accepted", args: { restart: true } });

    // Only a run that has ended goes on, and the input is checked as an edit is.
    const paused = await engine.start(chat, {}, { interruptBefore: ["reply"] });
    await paused.wait({ timeoutMs: 5_000 });
    await expect(engine.start(chat, { messages: ["x"] }, { from: paused.id })).rejects.toThrow(
      `run ${paused.id} has not ended (it is paused): a run goes on from another once that has ended; answer, retry or cancel it first`,
    );
    await expect(engine.start(chat, { turns: "many" as unknown as number }, { from: second.id })).rejects.toThrow(/\$\.turns: expected number, got string/);
    await expect(engine.start(chat, {}, { from: "run-nope" })).rejects.toThrow(new NotFoundError("run", "run-nope"));
    const other = workflow("other", { state: z.object({ messages: z.array(z.string()).default([]) }) }).node("x", () => ({}), { next: "END" }).compile();
    await expect(engine.start(other, {}, { from: second.id })).rejects.toThrow(
      `run ${second.id} is a run of workflow chat: a run goes on only from a run of the same workflow, not of other`,
    );
    await expect(engine.start(chat, {}, { from: second.id, id: "turn-3" })).rejects.toThrow(/give `from` without id or ifExists/);
    // It keeps the ended run's interrupt lists unless given others; a node the workflow lacks is refused.
    const third = await engine.start(chat, { messages: ["check first"] }, { from: second.id, interruptBefore: ["reply"] });
    expect(await third.wait({ timeoutMs: 5_000 })).toMatchObject({ status: "paused", interruptBefore: ["reply"] });
    await expect(engine.start(chat, {}, { from: second.id, interruptAfter: ["nope"] })).rejects.toThrow('workflow chat has no node "nope" to interrupt at');
  });

  it("runs a sub-workflow as a child run with a parent link and maps its result back", async () => {
    const child = workflow("child", { state: z.object({ topic: z.string().default(""), notes: z.array(z.string()).default([]) }), reducers: { notes: "append" } })
      .node("research", (s) => ({ notes: [`about ${s.topic}`] }), { next: "END" })
      .compile();
    const parent = workflow("parent", { state: z.object({ topic: z.string(), notes: z.array(z.string()).default([]) }), reducers: { notes: "append" } })
      .node("intro", () => ({ notes: ["intro"] }), { next: "dig" })
      .subgraph("dig", child, { next: "END" })
      .compile();
    const engine = await harness.engine([parent]);
    const run = await engine.start(parent, { topic: "owls" });
    expect((await run.wait({ timeoutMs: 10_000 })).status).toBe("succeeded");
    expect((await run.state()).notes).toEqual(["intro", "about owls"]);
    const children = (await engine.store.listRuns({ parentRunId: run.id })).runs;
    expect(children).toHaveLength(1);
    expect(children[0]).toMatchObject({ workflow: "child", status: "succeeded", parentRunId: run.id, parentTaskId: `${run.id}:2:dig` });
  });

  it("settles a parent's wait when its sub-workflow pauses for an operator, and goes on once that is answered", async () => {
    const child = workflow("asking-child", { state: z.object({ topic: z.string().default(""), notes: z.array(z.string()).default([]) }), reducers: { notes: "append" }, interruptBefore: ["research"] })
      .node("research", (s) => ({ notes: [`about ${s.topic}`] }), { next: "END" })
      .compile();
    const parent = workflow("asking-parent", { state: z.object({ topic: z.string(), notes: z.array(z.string()).default([]) }), reducers: { notes: "append" } })
      .node("intro", () => ({ notes: ["intro"] }), { next: "dig" })
      .subgraph("dig", child, { next: "END" })
      .compile();
    const engine = await harness.engine([parent]);
    const run = await engine.start(parent, { topic: "owls" });
    // Its events end there too, as its wait settles: the pause is in the child's history.
    const types: string[] = [];
    for await (const event of run.events()) types.push(event.type);
    expect(types.at(-1)).toBe("run.released");
    const settled = await run.wait({ timeoutMs: 10_000 });
    expect(settled.status).toBe("queued");
    const childRun = await engine.store.getRun(settled.waitingOn!);
    expect(childRun).toMatchObject({ status: "paused", parentRunId: run.id });
    const [pending, ...more] = await run.pendingInterrupts();
    expect([pending?.runId, pending?.node, more]).toEqual([childRun!.id, "research", []]);
    await engine.operator("ann").resolve(pending!.id, { decision: "approve" });
    expect((await run.wait({ until: "end", timeoutMs: 10_000 })).status).toBe("succeeded");
    expect((await run.state()).notes).toEqual(["intro", "about owls"]);

    // Canceling a parent that waits on its child (nobody holds the parent) cancels the child too.
    const canceled = await engine.start(parent, { topic: "bats" });
    const waiting = await canceled.wait({ timeoutMs: 10_000 });
    await engine.operator("ann").cancel(canceled.id, { reason: "not needed" });
    expect(await engine.store.getRun(waiting.waitingOn!)).toMatchObject({ status: "canceled" });
    const [childCancel] = await engine.store.listCommands({ runId: waiting.waitingOn!, status: "accepted" });
    expect(childCancel).toMatchObject({ type: "cancel", reason: `parent run ${canceled.id} canceled: not needed` });
  });

  it("an explicit mapping of an append key there and back adds only what the child added", async () => {
    const child = workflow("log-child", { state: z.object({ entries: z.array(z.string()).default([]) }), reducers: { entries: "append" } })
      .node("note", (s) => ({ entries: [`child saw ${s.entries.length}`] }), { next: "END" })
      .compile();
    const parent = workflow("log-parent", { state: z.object({ log: z.array(z.string()).default([]) }), reducers: { log: "append" } })
      .node("first", () => ({ log: ["p1"] }), { next: "sub" })
      .subgraph("sub", child, { input: { entries: "log" }, output: { log: "entries" }, next: "END" })
      .compile();
    const engine = await harness.engine([parent]);
    const run = await engine.start(parent);
    expect((await run.wait({ timeoutMs: 10_000 })).status).toBe("succeeded");
    expect((await run.state()).log).toEqual(["p1", "child saw 1"]);
  });

  it("maps a sub-workflow over a list: one child run per item", async () => {
    const child = workflow("each", { state: z.object({ item: z.string().default(""), found: z.array(z.string()).default([]) }), reducers: { found: "append" } })
      .node("look", (s) => ({ found: [s.item.toUpperCase()] }), { next: "END" })
      .compile();
    const parent = workflow("each-parent", { state: z.object({ topics: z.array(z.string()), found: z.array(z.string()).default([]) }), reducers: { found: "append" } })
      .subgraph("each", child, { map: { over: "topics", as: "item" }, next: "END" })
      .compile();
    const engine = await harness.engine([parent]);
    const run = await engine.start(parent, { topics: ["a", "b", "c"] });
    expect((await run.wait({ timeoutMs: 10_000 })).status).toBe("succeeded");
    expect((await run.state()).found).toEqual(["A", "B", "C"]);
    expect((await engine.store.listRuns({ parentRunId: run.id })).runs).toHaveLength(3);
  });

  it("runs the same workflow as JSON with an actions module and gets the same result as in code", async () => {
    const actions = {
      init: () => ({ tasks: ["t1"] }),
      work: (s: { tasks: string[] }) => ({ tasks: [`t${s.tasks.length + 1}`] }),
      check: (s: { tasks: string[] }) => ({ route: s.tasks.length >= 3 ? "YES" : "NO" }),
    };
    const json = {
      name: "same",
      state: { tasks: { type: "array", items: { type: "string" }, reducer: "append", default: [] } },
      start: "init",
      nodes: {
        init: { action: "q.init", next: "work" },
        work: { action: "q.work", next: "check" },
        check: { action: "q.check", routes: { YES: "END", NO: "work" }, default: "work" },
      },
    };
    const fromJson = loadWorkflowText(JSON.stringify(json), actionRegistry({ q: actions }));
    const fromCode = workflow("same", { state: z.object({ tasks: z.array(z.string()).default([]) }), reducers: { tasks: "append" } })
      .node("init", actions.init, { action: "q.init", next: "work" })
      .node("work", actions.work, { action: "q.work", next: "check" })
      .node("check", actions.check, { action: "q.check", routes: { YES: "END", NO: "work" }, default: "work" })
      .compile();
    expect(fromCode.version).toBe(fromJson.version);
    const engine = await harness.engine([fromJson]);
    const a = await engine.start(fromJson);
    const b = await engine.start(fromCode);
    await Promise.all([a.wait(), b.wait()]);
    expect(await a.state()).toEqual(await b.state());
    expect(await a.state()).toEqual({ tasks: ["t1", "t2", "t3"] });
  });

  it("parks a run on a durable timer and wakes it when the time has come", async () => {
    const wf = workflow("timer", { state: listState, reducers: { log: "append" } })
      .node("before", mark("before"), { next: "pause" })
      .wait("pause", { seconds: 0.3, next: "after" })
      .node("after", mark("after"), { next: "END" })
      .compile();
    const engine = await harness.engine([wf]);
    const run = await engine.start(wf);
    const parked = await until(async () => {
      const r = await run.get();
      return r.status === "queued" && r.wakeAt !== null ? r : undefined;
    }, 5000, "parked");
    expect(parked.owner).toBeNull();
    const [task] = await engine.store.listTasks(run.id, { step: 2 });
    expect(task).toMatchObject({ node: "pause", status: "interrupted", waitingFor: { kind: "time", until: parked.wakeAt } });
    const end = await run.wait({ timeoutMs: 5000 });
    expect(end.status).toBe("succeeded");
    expect(Date.now()).toBeGreaterThanOrEqual(parked.wakeAt!);
    expect((await run.state()).log).toEqual(["before", "after"]);
  });

  it("validates run input against the state schema before writing anything", async () => {
    const wf = workflow("typed", { state: z.object({ count: z.number().int(), name: z.string().default("x") }) })
      .node("a", () => ({}), { next: "END" })
      .compile();
    const engine = await harness.engine([wf]);
    // What tsc refuses (the input is typed by the schema) is refused at run time too, from JavaScript or JSON.
    await expect(engine.start(wf, { count: "three" } as never)).rejects.toThrow("run input is invalid at $.count: expected integer, got string \"three\"");
    await expect(engine.start(wf, { count: 1, extra: true } as never)).rejects.toThrow("run input is invalid at $: unknown key extra");
    expect((await engine.store.listRuns()).runs).toEqual([]);
  });
});
