import { describe, expect, it } from "vitest";
import { z } from "zod";
import { workflow, type CallOptions } from "../../engine/index.js";
import { approveWhenAsked, engineHarness, sleep, until } from "../support/engine.js";
import { storeFactories } from "../support/stores.js";

const state = z.object({ results: z.array(z.string()).default([]) });

describe.each(storeFactories)("durable calls inside a node ($name store)", (factory) => {
  const harness = engineHarness(factory);

  it("records each call as a child task, retries it by its own policy, and never repeats a finished call", async () => {
    const calls: Record<string, number> = {};
    const tool = (name: string, failFirst = false) => () => {
      calls[name] = (calls[name] ?? 0) + 1;
      if (failFirst && calls[name] === 1) throw new Error(`${name} flaked`);
      return `${name} ok`;
    };
    const wf = workflow("agent", { state, reducers: { results: "append" } })
      .node("agent", async (_s, ctx) => {
        const a = await ctx.call("search", tool("search"));
        const b = await ctx.call("lookup", tool("lookup", true), { retry: { maxAttempts: 2, backoffMs: 1 } });
        const answer = await ctx.interrupt({ question: `Send using ${a} and ${b}?` });
        const c = await ctx.call("send", tool("send"));
        return { results: [a, b, c, answer.decision] };
      }, { next: "END" })
      .compile();
    const engine = await harness.engine([wf]);
    const run = await engine.start(wf);
    await run.wait();
    const [pending] = await engine.store.listInterrupts({ runId: run.id, status: "pending" });
    expect(pending!.request.question).toBe("Send using search ok and lookup ok?");
    await engine.operator("ann").resolve(pending!.id, { decision: "approve" });
    expect((await run.wait()).status).toBe("succeeded");
    expect((await run.state()).results).toEqual(["search ok", "lookup ok", "send ok", "approve"]);
    expect(calls).toEqual({ search: 1, lookup: 2, send: 1 });

    const tasks = await engine.store.listTasks(run.id);
    const children = tasks.filter((t) => t.parent !== null).sort((a, b) => a.startedAt! - b.startedAt! || (a.call! < b.call! ? 1 : -1));
    expect(children.map((t) => [t.call, t.status, t.attempts.length, t.output])).toEqual([
      ["search", "succeeded", 1, "search ok"],
      ["lookup", "succeeded", 2, "lookup ok"],
      ["send", "succeeded", 1, "send ok"],
    ]);
    expect(children.every((t) => t.parent === `${run.id}:1:agent` && t.idempotencyKey === t.id)).toBe(true);
    const failed = await engine.store.readEvents({ runId: run.id, types: ["task.failed"] });
    expect(failed.map((e) => e.payload)).toEqual([{ node: "agent", attempt: 1, error: "lookup flaked", willRetry: true, retryInMs: 1, call: "lookup" }]);
  });

  it("resumes after the last finished call when the worker stops in the middle of the node", async () => {
    const calls: string[] = [];
    let release: () => void = () => {};
    const wf = workflow("long-agent", { state, reducers: { results: "append" } })
      .node("agent", async (_s, ctx) => {
        const out: string[] = [];
        for (const name of ["one", "two", "three"]) {
          out.push(
            await ctx.call(name, async ({ signal }) => {
              calls.push(name);
              if (name === "three" && calls.filter((c) => c === "three").length === 1) {
                await new Promise<void>((resolve, reject) => {
                  release = resolve;
                  signal.addEventListener("abort", () => reject(new Error("stopped")));
                });
              }
              return name.toUpperCase();
            }),
          );
        }
        return { results: out };
      }, { next: "END" })
      .compile();
    const first = await harness.engine([wf]);
    const run = await first.start(wf);
    await until(() => calls.includes("three"), 5000, "third call");
    await first.worker!.stop();
    expect((await run.get()).status).toBe("queued");
    const second = await harness.engine([wf], { store: first.store });
    release();
    expect((await run.wait()).status).toBe("succeeded");
    expect(calls).toEqual(["one", "two", "three", "three"]);
    expect((await run.state()).results).toEqual(["ONE", "TWO", "THREE"]);
    void second;
  });

  it("counts a node's failed call as part of the node, not as a sibling still to retry", async () => {
    let attempt = 0;
    const wf = workflow("failed-call", { state })
      .node("agent", async (_s, ctx) => {
        attempt++;
        await ctx.call(`lookup-${attempt}`, () => {
          if (attempt === 1) throw new Error("lookup failed");
          return 1;
        });
        return {};
      }, { retry: { maxAttempts: 1 }, next: "END" })
      .compile();
    const engine = await harness.engine([wf]);
    const run = await engine.start(wf);
    expect(await run.wait()).toMatchObject({ status: "paused", reason: "retries-exhausted" });
    expect((await engine.store.listTasks(run.id)).some((t) => t.parent !== null && t.status === "failed")).toBe(true);
    const outcome = await engine.operator("ann").retry(run.id, "agent");
    expect(outcome.result.willRun).toEqual(["agent"]);
    expect(outcome.effect).not.toContain("still to retry");
    expect((await run.wait()).status).toBe("succeeded");
  });

  it("names a node's task, not its calls, when an operator kills or retries the node by name", async () => {
    const wf = workflow("kill-by-name", { state })
      .node("agent", async (_s, ctx) => {
        await ctx.call("a", () => 1);
        await ctx.call("b", () => new Promise((resolve) => setTimeout(resolve, 10_000)));
        return {};
      }, { next: "END" })
      .compile();
    const engine = await harness.engine([wf]);
    const run = await engine.start(wf);
    await until(async () => (await engine.store.listTasks(run.id)).some((t) => t.call === "b" && t.status === "running"), 5000, "call b running");
    await engine.operator("ann").kill(run.id, { task: "agent" });
    expect(await run.wait()).toMatchObject({ status: "paused", reason: "killed" });
    expect(harness.notices.of("abandoned")).toMatchObject([
      { runId: run.id, node: "agent", message: expect.stringContaining(`node agent (task ${run.id}:1:agent) ignored its abort signal (a kill)`) },
    ]);
    // The call its node was killed in (and that ignored the signal) ended with it.
    const b = (await engine.store.listTasks(run.id)).find((t) => t.call === "b")!;
    expect([b.status, b.attempts.map((a) => [a.outcome, a.error])]).toEqual(["canceled", [["canceled", "its node was killed by operator"]]]);
    const outcome = await engine.operator("ann").retry(run.id, "agent");
    expect(outcome.result.willRun).toEqual(["agent"]);
  });

  it("tells a node that outlived its killed execution that its call's late result was not recorded, instead of leaving it waiting", async () => {
    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    const told: string[] = [];
    const wf = workflow("outlived", { state })
      .node("agent", async (_s, ctx) => {
        try {
          // Ignores its abort signal: finishes only when the gate opens, after the kill.
          await ctx.call("slow", () => gate.then(() => "late"));
          told.push("recorded");
        } catch (error) {
          told.push((error as Error).message);
        }
        return {};
      }, { next: "END" })
      .compile();
    const engine = await harness.engine([wf]);
    const run = await engine.start(wf);
    await until(async () => (await engine.store.listTasks(run.id)).some((t) => t.call === "slow" && t.status === "running"), 5000, "the call running");
    await engine.operator("ann").kill(run.id, { task: "agent" });
    expect(await run.wait()).toMatchObject({ status: "paused", reason: "killed" });
    release();
    await until(() => told.length > 0, 5000, "the node's call to settle");
    expect(told).toEqual([expect.stringMatching(new RegExp(`^run ${run.id}'s execution on this worker has ended \\(.*\\): this call's outcome was not recorded$`))]);
    const slow = (await engine.store.listTasks(run.id)).find((t) => t.call === "slow")!;
    expect(slow.status).toBe("canceled");
  });

  it("does not count attempts that paused for a person against the retry policy", async () => {
    let failures = 0;
    const wf = workflow("ask-then-fail", { state, reducers: { results: "append" } })
      .node("agent", async (_s, ctx) => {
        await ctx.interrupt({ question: "one?" });
        await ctx.interrupt({ question: "two?" });
        if (failures++ === 0) throw new Error("transient");
        return { results: ["done"] };
      }, { retry: { maxAttempts: 2, backoffMs: 1 }, next: "END" })
      .compile();
    const engine = await harness.engine([wf]);
    const run = await engine.start(wf);
    for (let i = 0; i < 2; i++) {
      const pending = await until(
        async () => ((await run.get()).status === "paused" ? (await engine.store.listInterrupts({ runId: run.id, status: "pending" }))[0] : undefined),
        5000,
        "interrupt",
      );
      await engine.operator("ann").resolve(pending.id, { decision: "approve" });
    }
    expect((await run.wait()).status).toBe("succeeded");
    expect(failures).toBe(2);
  });

  it("makes a call again when what it depends on changed (an operator edited the state), and after a failed attempt only when marked again", async () => {
    const made: string[] = [];
    let failures = 1;
    const wf = workflow("depends", { state: z.object({ topic: z.string().default("cats"), results: z.array(z.string()).default([]) }), reducers: { results: "append" } })
      .node("agent", async (s, ctx) => {
        const draft = await ctx.call("draft", () => (made.push(`draft ${s.topic}`), `about ${s.topic}`), { dependsOn: s.topic, afterFailure: "again" });
        const charge = await ctx.call("charge", () => (made.push("charge"), "charged"), { dependsOn: { amount: 5 } });
        await ctx.interrupt({ question: `Publish ${draft}?` });
        if (failures-- > 0) throw new Error("publisher down");
        return { results: [draft, charge] };
      }, { retry: { maxAttempts: 2, backoffMs: 1 }, next: "END" })
      .compile();
    const engine = await harness.engine([wf]);
    const op = engine.operator("ann");
    const run = await engine.start(wf);
    expect(await run.wait()).toMatchObject({ status: "paused", reason: "interrupt" });
    await op.updateState(run.id, { topic: "dogs" });
    for (let i = 0; i < 2; i++) {
      const pending = await until(
        async () => ((await run.get()).status === "paused" ? (await engine.store.listInterrupts({ runId: run.id, status: "pending" }))[0] : undefined),
        5000,
        "interrupt",
      );
      await op.resolve(pending.id, { decision: "approve" });
    }
    expect((await run.wait()).status).toBe("succeeded");
    // The edit made the draft again; the failure made it once more (marked `again`), but never the charge (kept, by default).
    expect(made).toEqual(["draft cats", "charge", "draft dogs", "draft dogs"]);
    expect((await run.state()).results).toEqual(["about dogs", "charged"]);
    const started = await engine.store.readEvents({ runId: run.id, types: ["task.started"] });
    expect(started.filter((e) => (e.payload as { inputChanged?: boolean }).inputChanged).map((e) => (e.payload as { call?: string }).call)).toEqual(["draft"]);
  });

  it("makes a kept call asked with another dependsOn after a failed attempt a new call, with its own idempotency key, beside the kept one", async () => {
    const keys: string[] = [];
    const wf = workflow("recharge", { state, reducers: { results: "append" } })
      .node("agent", async (_s, ctx) => {
        const amount = ctx.attempt === 1 ? 5 : 7;
        const charged = await ctx.call("charge", (call) => (keys.push(call.idempotencyKey), `charged ${amount}`), { dependsOn: { amount } });
        if (ctx.attempt === 1) throw new Error("publisher down");
        return { results: [charged] };
      }, { retry: { maxAttempts: 2, backoffMs: 1 }, next: "END" })
      .compile();
    const engine = await harness.engine([wf]);
    const run = await engine.start(wf);
    expect((await run.wait()).status).toBe("succeeded");
    expect((await run.state()).results).toEqual(["charged 7"]);
    const tasks = await engine.store.listTasks(run.id);
    const node = tasks.find((t) => t.parent === null)!;
    expect(keys).toEqual([`${node.id}/charge`, `${node.id}/charge@2`]);
    expect(tasks.filter((t) => t.call === "charge").map((t) => [t.idempotencyKey, t.output])).toEqual([
      [`${node.id}/charge`, "charged 5"],
      [`${node.id}/charge@2`, "charged 7"],
    ]);
  });

  it("hands a node that runs again the error of a call that failed past its retries in an attempt that went on, without making it again", async () => {
    let made = 0;
    const wf = workflow("caught", { state, reducers: { results: "append" } })
      .node("agent", async (_s, ctx) => {
        let outcome: string;
        try {
          outcome = await ctx.call("flaky", () => {
            made++;
            throw Object.assign(new Error("service down"), { code: "DOWN" });
          }, { retry: { maxAttempts: 2, backoffMs: 1 } });
        } catch (error) {
          outcome = `${(error as { code?: string }).code}: ${(error as Error).message}`;
        }
        await ctx.interrupt({ question: `Go on after "${outcome}"?` });
        return { results: [outcome] };
      }, { next: "END" })
      .compile();
    const engine = await harness.engine([wf]);
    const run = await engine.start(wf);
    await approveWhenAsked(engine, run);
    expect((await run.wait()).status).toBe("succeeded");
    expect((await run.state()).results).toEqual(["DOWN: service down"]);
    expect(made).toBe(2);
  });

  it("refuses a call's afterFailure that is neither keep nor again, and a dependsOn that is not JSON, naming the call", async () => {
    const wf = workflow("bad-options", { state })
      .node("agent", async (_s, ctx) => {
        const refused: string[] = [];
        for (const options of [{ afterFailure: "sometimes" }, { dependsOn: { n: 1n } }] as CallOptions[]) {
          await ctx.call(`c${refused.length}`, () => 1, options).catch((error: Error) => refused.push(error.message));
        }
        return { results: refused };
      }, { next: "END" })
      .compile();
    const engine = await harness.engine([wf]);
    const run = await engine.start(wf);
    expect((await run.wait()).status).toBe("succeeded");
    expect((await run.state()).results).toEqual([
      'call "c0": afterFailure "sometimes" is neither "keep" nor "again"',
      'call "c1": its dependsOn cannot be written as JSON (Do not know how to serialize a BigInt); give the JSON values the call\'s result depends on',
    ]);
  });

  it("refuses a call key used twice in one run of a node", async () => {
    const wf = workflow("dup-key", { state })
      .node("agent", async (_s, ctx) => {
        await ctx.call("x", () => 1);
        await ctx.call("x", () => 2);
        return {};
      }, { next: "END" })
      .compile();
    const engine = await harness.engine([wf]);
    const run = await engine.start(wf);
    await run.wait();
    const [task] = (await engine.store.listTasks(run.id)).filter((t) => t.parent === null);
    expect(task!.error?.message).toBe('call key "x" is used twice in one run of node "agent"; keys must be unique');
    await sleep(0);
  });
});
