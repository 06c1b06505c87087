import { describe, expect, it } from "vitest";
import { z } from "zod";
import { NotFoundError, ValidationError, workflow, type EventRecord, type NodeContext } from "../../engine/index.js";
import { approveWhenAsked, engineHarness, sleep } from "../support/engine.js";
import { storeFactories } from "../support/stores.js";

const state = z.object({ out: z.string().default(""), tries: z.number().default(0) });

class Flaky extends Error {
  override name = "FlakyError";
}

describe.each(storeFactories)("execution: retries, timeouts, cancellation, context and events ($name store)", (factory) => {
  const harness = engineHarness(factory);

  it("retries with backoff, then succeeds; every attempt sees the same idempotency key", async () => {
    const seen: Pick<NodeContext, "attempt" | "idempotencyKey" | "taskId">[] = [];
    const wf = workflow("flaky", { state })
      .node(
        "call",
        (_s, ctx) => {
          seen.push({ attempt: ctx.attempt, idempotencyKey: ctx.idempotencyKey, taskId: ctx.taskId });
          if (ctx.attempt < 3) throw new Flaky(`boom ${ctx.attempt}`);
          return { out: "ok" };
        },
        { retry: { maxAttempts: 3, backoffMs: 40, factor: 2, jitter: 0 }, next: "END" },
      )
      .compile();
    const engine = await harness.engine([wf]);
    const run = await engine.start(wf);
    expect((await run.wait()).status).toBe("succeeded");
    expect(seen.map((s) => s.attempt)).toEqual([1, 2, 3]);
    expect(new Set(seen.map((s) => s.idempotencyKey)).size).toBe(1);
    const [task] = await engine.store.listTasks(run.id);
    expect(task!.attempts.map((a) => [a.n, a.outcome, a.error ?? null])).toEqual([
      [1, "failed", "boom 1"],
      [2, "failed", "boom 2"],
      [3, "succeeded", null],
    ]);
    expect(task!.error).toBeNull();
    const gap = task!.attempts[2]!.startedAt - task!.attempts[1]!.endedAt!;
    expect(gap).toBeGreaterThanOrEqual(75);
    const failures = await engine.store.readEvents({ runId: run.id, types: ["task.failed"] });
    expect(failures.map((e) => e.payload)).toEqual([
      { node: "call", attempt: 1, error: "boom 1", willRetry: true, retryInMs: 40 },
      { node: "call", attempt: 2, error: "boom 2", willRetry: true, retryInMs: 80 },
    ]);
  });

  it("pauses the run for an operator when retries are exhausted, or fails it when the policy says so", async () => {
    const always = () => {
      throw new Flaky("always");
    };
    let calls = 0;
    const twice = () => {
      if (++calls <= 2) throw new Flaky("always");
      return {};
    };
    const pausing = workflow("exhaust-pause", { state }).node("call", twice, { retry: { maxAttempts: 2, backoffMs: 1 }, next: "END" }).compile();
    const failing = workflow("exhaust-fail", { state }).node("call", always, { retry: { maxAttempts: 2, backoffMs: 1, onExhausted: "fail" }, next: "END" }).compile();
    const engine = await harness.engine([pausing, failing]);
    const pausedRun = await engine.start(pausing);
    const paused = await pausedRun.wait();
    // Why it waits is on the run, as wait() returns it; it is cleared when the run goes on.
    expect(paused).toMatchObject({ status: "paused", reason: "retries-exhausted", current: ["call"], error: { code: "TASK_FAILED", node: "call", message: 'node "call" failed after 2 attempts: always' } });
    await engine.operator("ann").retry(pausedRun.id, "call");
    expect(await pausedRun.wait()).toMatchObject({ status: "succeeded", error: null });
    const failed = await (await engine.start(failing)).wait();
    expect(failed).toMatchObject({ status: "failed", error: { code: "TASK_FAILED", node: "call", message: 'node "call" failed after 2 attempts: always' } });
  });

  it("counts a resume after a question as part of a try, not as an attempt the retry policy allows", async () => {
    const wf = workflow("ask-then-fail", { state })
      .node(
        "call",
        async (_s, ctx) => {
          await ctx.interrupt({ question: "Go on?", decisions: ["approve"] });
          throw new Flaky("always");
        },
        { retry: { maxAttempts: 2, backoffMs: 1 }, next: "END" },
      )
      .compile();
    const engine = await harness.engine([wf]);
    const run = await engine.start(wf);
    await approveWhenAsked(engine, run);
    // Two failures, as maxAttempts allows: the asking attempt is not one of them.
    expect(await run.wait()).toMatchObject({ status: "paused", reason: "retries-exhausted", error: { message: 'node "call" failed after 2 attempts (+1 resume): always' } });
    const [task] = await engine.store.listTasks(run.id);
    expect(task!.attempts.map((a) => a.outcome)).toEqual(["interrupted", "failed", "failed"]);
  });

  it("retries only the errors the policy names", async () => {
    let calls = 0;
    const wf = workflow("retry-on", { state })
      .node("call", () => {
        calls++;
        throw new TypeError("not transient");
      }, { retry: { maxAttempts: 5, backoffMs: 1, retryOn: ["FlakyError"] }, next: "END" })
      .compile();
    const engine = await harness.engine([wf]);
    await (await engine.start(wf)).wait();
    expect(calls).toBe(1);
  });

  it("refuses a run's interrupt list naming a node the workflow lacks, and a wait it cannot time", async () => {
    const wf = workflow("checked-start", { state }).node("a", () => ({ out: "a" })).compile();
    const engine = await harness.engine([wf]);
    await expect(engine.start(wf, {}, { interruptBefore: ["nope"] })).rejects.toThrow(new ValidationError('workflow checked-start has no node "nope" to interrupt at'));
    expect((await engine.store.listRuns({})).runs).toEqual([]);
    const run = await engine.start(wf);
    await expect(run.wait({ timeoutMs: -1 })).rejects.toBeInstanceOf(ValidationError);
    expect((await run.wait({ timeoutMs: 5_000 })).status).toBe("succeeded");
  });

  it("keeps the message and code of a thrown value that is not an Error: retryOn matches its code", async () => {
    let calls = 0;
    const wf = workflow("thrown-object", { state })
      .node("call", () => {
        calls++;
        if (calls === 1) throw { code: "E_FLAKY", message: "the service hiccuped" };
        if (calls === 2) throw "plain text thrown";
        return { out: "third time" };
      }, { retry: { maxAttempts: 3, backoffMs: 1, retryOn: ["E_FLAKY", "Error"] }, next: "END" })
      .compile();
    const engine = await harness.engine([wf]);
    const run = await engine.start(wf);
    expect((await run.wait()).status).toBe("succeeded");
    const [task] = await engine.store.listTasks(run.id);
    expect(task!.attempts.map((a) => [a.outcome, a.error, a.code])).toEqual([
      ["failed", "the service hiccuped", "E_FLAKY"],
      ["failed", "plain text thrown", undefined],
      ["succeeded", undefined, undefined],
    ]);
  });

  it("times a node out through its signal and retries it", async () => {
    const wf = workflow("timeout", { state })
      .node(
        "slow",
        async (_s, ctx) => {
          if (ctx.attempt === 1) {
            await new Promise((_resolve, reject) => ctx.signal.addEventListener("abort", () => reject(ctx.signal.reason)));
          }
          return { out: `attempt ${ctx.attempt}` };
        },
        { timeoutMs: 50, retry: { maxAttempts: 2, backoffMs: 1 }, next: "END" },
      )
      .compile();
    const engine = await harness.engine([wf]);
    const run = await engine.start(wf);
    expect((await run.wait()).status).toBe("succeeded");
    expect((await run.state()).out).toBe("attempt 2");
    const [task] = await engine.store.listTasks(run.id);
    expect(task!.attempts[0]).toMatchObject({ outcome: "failed", code: "TIMEOUT", error: 'node "slow" timed out after 50 ms' });
  });

  it("gives a node that first looks at its signal after it timed out a signal aborted with the timeout", async () => {
    let seen: unknown[] = [];
    const wf = workflow("late-look", { state })
      .node(
        "slow",
        async (_s, ctx) => {
          await sleep(150);
          seen = [ctx.signal.aborted, (ctx.signal.reason as Error | undefined)?.message];
          return { out: "late" };
        },
        { timeoutMs: 50, retry: { maxAttempts: 1 }, next: "END" },
      )
      .compile();
    const engine = await harness.engine([wf]);
    const run = await engine.start(wf);
    expect(await run.wait({ timeoutMs: 5_000 })).toMatchObject({ status: "paused", reason: "retries-exhausted" });
    expect(seen).toEqual([true, 'node "slow" timed out after 50 ms']);
    expect((await run.state()).out).toBe("");
  });

  it("asks an operator, not its retry policy, about an at-most-once node that ran out of time (it may have done part of its work)", async () => {
    let charges = 0;
    const wf = workflow("charge-once", { state })
      .node(
        "charge",
        async (_s, ctx) => {
          charges++;
          if (ctx.attempt === 1) await new Promise((_resolve, reject) => ctx.signal.addEventListener("abort", () => reject(ctx.signal.reason)));
          return { out: `charged on attempt ${ctx.attempt}` };
        },
        { atMostOnce: true, timeoutMs: 50, retry: { maxAttempts: 3, backoffMs: 1 }, next: "END" },
      )
      .compile();
    const engine = await harness.engine([wf]);
    const run = await engine.start(wf);
    expect(await run.wait({ timeoutMs: 5_000 })).toMatchObject({ status: "paused", reason: "interrupt" });
    expect(charges).toBe(1);
    const [ask, ...more] = await run.pendingInterrupts();
    expect([ask?.kind, ask?.request.decisions, more]).toEqual(["recovery", ["retry", "skip"], []]);
    expect(ask!.request.question).toBe('Node "charge" runs at most once, and its attempt 1 ran out of time (node "charge" timed out after 50 ms). It may have done part of its work. Run it again, or skip it?');
    await engine.operator("ann").resolve(ask!.id, { decision: "retry" });
    expect((await run.wait({ until: "end", timeoutMs: 5_000 })).status).toBe("succeeded");
    expect([charges, (await run.state()).out]).toEqual([2, "charged on attempt 2"]);
  });

  it("abandons a node that ignores its signal after the grace period and discards its late result", async () => {
    let finishedLate = false;
    const wf = workflow("stubborn", { state })
      .node(
        "stubborn",
        async () => {
          await sleep(600);
          finishedLate = true;
          return { out: "late" };
        },
        { timeoutMs: 50, next: "END" },
      )
      .compile();
    const engine = await harness.engine([wf]);
    const run = await engine.start(wf);
    const end = await run.wait();
    expect(end).toMatchObject({ status: "paused", reason: "retries-exhausted" });
    const [task] = await engine.store.listTasks(run.id);
    const attempt = task!.attempts[0]!;
    expect(attempt.endedAt! - attempt.startedAt).toBeLessThan(500);
    await sleep(700);
    expect(finishedLate).toBe(true);
    expect(await run.state()).toEqual({ out: "", tries: 0 });
    expect((await engine.store.listTasks(run.id))[0]!.status).toBe("failed");
  });

  it("gives nodes their context: ids, progress and log lines as events, artifacts", async () => {
    let seen: Record<string, unknown> = {};
    const wf = workflow("ctx", { state })
      .node(
        "work",
        async (_s, ctx) => {
          seen = { runId: ctx.runId, taskId: ctx.taskId, node: ctx.node, step: ctx.step, attempt: ctx.attempt };
          ctx.progress(0.5, "half way");
          ctx.progress(1, "done");
          ctx.log.info("called the api", { apiKey: "sk-123", url: "https://x", nested: { Authorization: "Bearer t", tokens: 12 } });
          ctx.log.debug("raw response", { body: "x".repeat(20_000), password: "hunter2" });
          const ref = await ctx.artifact("the report");
          return { out: ref.sha256 };
        },
        { next: "END" },
      )
      .compile();
    const engine = await harness.engine([wf]);
    const run = await engine.start(wf);
    await run.wait();
    expect(seen).toEqual({ runId: run.id, taskId: `${run.id}:1:work`, node: "work", step: 1, attempt: 1 });
    const events = await engine.store.readEvents({ runId: run.id });
    const progress = events.filter((e) => e.type === "node.progress").map((e) => e.payload);
    expect(progress).toEqual([
      { node: "work", fraction: 0.5, message: "half way" },
      { node: "work", fraction: 1, message: "done" },
    ]);
    const log = events.find((e) => e.type === "node.log")!;
    expect(log.payload).toEqual({
      node: "work",
      level: "info",
      message: "called the api",
      data: { apiKey: "[redacted]", url: "https://x", nested: { Authorization: "[redacted]", tokens: 12 } },
    });
    const big = events.filter((e) => e.type === "node.log")[1]!.payload as { data: { artifact: { sha256: string; size: number } } };
    expect(big.data.artifact.size).toBeGreaterThan(20_000);
    const stored = new TextDecoder().decode((await engine.store.getArtifact(big.data.artifact.sha256))!.data);
    expect(JSON.parse(stored)).toEqual({ body: "x".repeat(20_000), password: "[redacted]" });
    const sha = (await run.state()).out as string;
    expect(new TextDecoder().decode((await engine.store.getArtifact(sha))!.data)).toBe("the report");
    expect((await engine.store.runStorage(run.id)).artifacts).toBe(10 + big.data.artifact.size);
  });

  it("keeps secrets out of the events of operator commands and state edits", async () => {
    const wf = workflow("secrets", { state: z.object({ config: z.object({ apiKey: z.string() }).default({ apiKey: "" }), note: z.string().default("") }), interruptBefore: ["use"] })
      .node("use", () => ({}), { next: "END" })
      .compile();
    const engine = await harness.engine([wf]);
    const run = await engine.start(wf);
    await run.wait();
    await engine.operator("ann").updateState(run.id, [{ op: "replace", path: "/config/apiKey", value: "sk-live-123" }]);
    await engine.operator("ann").updateState(run.id, { config: { apiKey: "sk-live-456" }, note: "rotated" });
    const text = JSON.stringify(await engine.store.readEvents({ runId: run.id }));
    expect(text).not.toContain("sk-live");
    const edits = await engine.store.readEvents({ runId: run.id, types: ["state.edited"] });
    expect(edits[0]!.payload).toMatchObject({ diff: [{ op: "change", path: "$.config.apiKey", old: "[redacted]", value: "[redacted]" }] });
    expect(edits[1]!.payload).toMatchObject({ diff: expect.arrayContaining([{ op: "change", path: "$.note", old: "", value: "rotated" }]) });
    expect((await run.state()).config).toEqual({ apiKey: "sk-live-456" });
  });

  it("after the store's close(), a pending wait() and a new start() fail saying the store is closed, on every store", async () => {
    const wf = workflow("closing", { state }).node("a", () => ({ out: "a" }), { next: "END" }).compile();
    const engine = await harness.engine([wf], { worker: false });
    const run = await engine.start(wf);
    const waiting = run.wait();
    await engine.close();
    await engine.store.close();
    await expect(waiting).rejects.toThrow(/closed/);
    await expect(engine.start(wf)).rejects.toThrow(/closed/);
  });

  it("a run handle lists its checkpoints, cancels its run, and stops waiting when its signal aborts", async () => {
    const wf = workflow("handled", { state }).node("a", () => ({ out: "a" }), { next: "b" }).node("b", () => ({ out: "b" }), { next: "END" }).compile();
    const engine = await harness.engine([wf]);
    const done = await engine.start(wf);
    await done.wait();
    const history = await done.checkpoints();
    expect(history.map((c) => [c.n, c.source, c.nodes])).toEqual([[0, "input", []], [1, "loop", ["a"]], [2, "loop", ["b"]]]);
    expect(await done.state(history[1]!.n)).toMatchObject({ out: "a" });

    const paused = await engine.start(wf, {}, { interruptBefore: ["b"] });
    await paused.wait();
    const controller = new AbortController();
    const waiting = paused.wait({ until: "end", signal: controller.signal });
    controller.abort(new Error("gave up waiting"));
    await expect(waiting).rejects.toThrow("gave up waiting");
    expect((await paused.cancel("not needed", "ann")).effect).toBe(`run ${paused.id} canceled`);
    expect(await paused.get()).toMatchObject({ status: "canceled" });
  });

  it("says which checkpoints a run has when asked for the state at one it lacks", async () => {
    const wf = workflow("numbered", { state }).node("a", () => ({ out: "a" }), { next: "END" }).compile();
    const engine = await harness.engine([wf]);
    const run = await engine.start(wf);
    const { headN } = await run.wait();
    await expect(run.state(99)).rejects.toThrow(new NotFoundError("checkpoint", `99 of run ${run.id} (its checkpoints are 0 to ${headN})`));
    expect(await run.state(0)).toEqual({ out: "", tries: 0 });
  });

  it("a handle on a run that does not exist says so from every method, its events included", async () => {
    const engine = await harness.engine([]);
    const ghost = engine.run("run-typo");
    const iterate = async () => {
      for await (const _event of ghost.events()) break;
    };
    for (const call of [() => ghost.get(), () => ghost.wait(), () => ghost.state(), iterate, () => ghost.pendingInterrupts()]) {
      await expect(call()).rejects.toThrow(new NotFoundError("run", "run-typo"));
    }
  });

  it("a wait for a run's end that times out says the run did not end, and how it is", async () => {
    const wf = workflow("ending", { state }).node("a", () => ({ out: "a" }), { next: "END" }).compile();
    const engine = await harness.engine([wf], { worker: false });
    const run = await engine.start(wf);
    await expect(run.wait({ until: "end", timeoutMs: 50 })).rejects.toThrow(`run ${run.id} did not end within 50 ms (it is queued)`);
    await expect(run.wait({ timeoutMs: 50 })).rejects.toThrow(`run ${run.id} did not settle within 50 ms (it is queued)`);
  });

  it("ends a run's event iteration when it pauses for an operator, as wait() settles, or only at its end when told", async () => {
    const wf = workflow("events-pause", { state }).node("a", () => ({ out: "a" }), { next: "b" }).node("b", () => ({ out: "b" }), { next: "END" }).compile();
    const engine = await harness.engine([wf]);
    const run = await engine.start(wf, {}, { interruptBefore: ["b"] });
    const types: string[] = [];
    for await (const event of run.events()) types.push(event.type);
    expect(types.at(-1)).toBe("run.paused");
    const toEnd: string[] = [];
    const after = await engine.store.lastEventSeq();
    const following = (async () => {
      for await (const event of run.events({ after, until: "end" })) toEnd.push(event.type);
    })();
    const [pending] = await engine.store.listInterrupts({ runId: run.id, status: "pending" });
    await engine.operator("ann").resolve(pending!.id, { decision: "approve" });
    await following;
    expect(toEnd.at(-1)).toBe("run.succeeded");
  });

  it("streams the state at each checkpoint, live: the input, each step's, an operator's edit", async () => {
    const wf = workflow("values", { state }).node("a", () => ({ out: "a" }), { next: "b" }).node("b", (s) => ({ out: `${s.out}b` }), { next: "END" }).compile();
    const engine = await harness.engine([wf]);
    const run = await engine.start(wf, {}, { interruptBefore: ["b"] });
    const seen: string[] = [];
    for await (const at of run.values()) seen.push(`${at.n} [${at.nodes.join(",")}] ${at.state.out}`);
    expect(seen).toEqual(["0 [] ", "1 [a] a"]);
    const after = await engine.store.lastEventSeq();
    const later: string[] = [];
    const following = (async () => {
      for await (const at of run.values({ after, until: "end" })) later.push(`${at.n} [${at.nodes.join(",")}] ${at.state.out}`);
    })();
    const op = engine.operator("ann");
    await op.updateState(run.id, { out: "edited " });
    const [pending] = await run.pendingInterrupts();
    await op.resolve(pending!.id, { decision: "approve" });
    await following;
    expect(later).toEqual(["2 [] edited ", "3 [b] edited b"]);
    // A client that lost its stream goes on from the last one it got: its seq is the `after` to give.
    const all: { n: number; seq: number }[] = [];
    for await (const at of run.values({ until: "end" })) all.push({ n: at.n, seq: at.seq });
    expect(all.map((a) => a.n)).toEqual([0, 1, 2, 3]);
    const resumed: number[] = [];
    for await (const at of run.values({ after: all[1]!.seq, until: "end" })) resumed.push(at.n);
    expect(resumed).toEqual([2, 3]);
  });

  it("streams what each step and edit wrote, live: each node's writes as its reducers applied them", async () => {
    const listed = z.object({ out: z.string().default(""), items: z.array(z.string()).default([]) });
    const wf = workflow("updates", { state: listed, reducers: { items: "append" } })
      .node("a", () => ({ out: "a", items: ["x"] }), { next: ["b", "c"] })
      .node("b", () => ({ items: ["y"] }), { next: "END" })
      .node("c", () => ({ out: "c" }), { next: "END" })
      .compile();
    const engine = await harness.engine([wf]);
    const run = await engine.start(wf, {}, { interruptBefore: ["b"] });
    const seen: unknown[] = [];
    for await (const at of run.updates()) seen.push([at.n, at.nodes, at.writes]);
    expect(seen).toEqual([[1, ["a"], [["out", "set", "a"], ["items", "append", ["x"]]]]]);
    const after = await engine.store.lastEventSeq();
    const later: unknown[] = [];
    const following = (async () => {
      for await (const at of run.updates({ after, until: "end" })) later.push([at.n, [...at.nodes].sort(), at.writes]);
    })();
    const op = engine.operator("ann");
    await op.updateState(run.id, { out: "edited" });
    const [pending] = await run.pendingInterrupts();
    await op.resolve(pending!.id, { decision: "approve" });
    await following;
    expect(later).toEqual([
      [2, [], [["out", "set", "edited"]]],
      [3, ["b", "c"], expect.arrayContaining([["items", "append", ["y"]], ["out", "set", "c"]])],
    ]);
  });

  it("emits typed events with one trace id per run and a span id per task attempt, live", async () => {
    const wf = workflow("events", { state })
      .node("a", () => ({ out: "a" }), { next: "b" })
      .node("b", async () => {
        await sleep(50);
        return { out: "b" };
      }, { next: "END" })
      .compile();
    const engine = await harness.engine([wf], { worker: false });
    const run = await engine.start(wf);
    const live: EventRecord[] = [];
    const following = (async () => {
      // The iteration ends by itself when the run ends.
      for await (const event of run.events()) live.push(event);
    })();
    const worker = await harness.engine([wf], { store: engine.store });
    await following;
    void worker;
    // Following a run that has ended ends at once: its past events, or none after its last.
    const collect = async (events: AsyncIterable<EventRecord>) => {
      const out: EventRecord[] = [];
      for await (const event of events) out.push(event);
      return out;
    };
    expect((await collect(run.events())).map((e) => e.type)).toEqual(live.map((e) => e.type));
    // An event's type narrows its payload's type.
    expect(live.flatMap((e) => (e.type === "step.completed" ? [e.payload.nodes] : []))).toEqual([["a"], ["b"]]);
    expect(await collect(run.events({ after: live.at(-1)!.seq }))).toEqual([]);
    // What the history holds after the end (a refused command) is followed to its last event.
    const endedAt = (await run.get()).updatedAt;
    await expect(engine.operator("ann").cancel(run.id, { reason: "too late" })).rejects.toThrow("has already ended");
    // A command refused on an ended run is not activity: the run keeps its place in every list.
    expect((await run.get()).updatedAt).toBe(endedAt);
    expect((await collect(run.events({ after: live.at(-2)!.seq }))).map((e) => e.type)).toEqual(["run.succeeded", "operator.requested", "operator.refused"]);
    expect(live.map((e) => e.type)).toEqual([
      "run.created",
      "run.claimed",
      "task.started",
      "task.succeeded",
      "step.completed",
      "task.started",
      "task.succeeded",
      "step.completed",
      "run.succeeded",
    ]);
    expect(live.map((e) => e.runSeq)).toEqual(live.map((_, i) => i + 1));
    expect(new Set(live.map((e) => e.traceId)).size).toBe(1);
    expect(live[0]!.traceId).toMatch(/^[0-9a-f]{32}$/);
    const spans = live.filter((e) => e.taskId !== null).map((e) => `${e.taskId}:${e.spanId}`);
    expect(new Set(spans).size).toBe(2);
    expect(live.find((e) => e.type === "task.started")!.actor).toMatch(/^worker:/);
  });
});
