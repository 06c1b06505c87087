import { describe, expect, it } from "vitest";
import { z } from "zod";
import { loadWorkflowText, renderGraph, workflow, type TaskRecord } from "../../engine/index.js";
import { engineHarness } from "../support/engine.js";
import { storeFactories } from "../support/stores.js";
import { checkActions, problemsOf } from "../support/workflow-checks.js";
import { describeEvent } from "../../source/text/event-text.js";

const failure = z.object({ node: z.string(), index: z.number().optional(), code: z.string().optional(), name: z.string(), message: z.string(), attempts: z.number() });
const state = z.object({
  log: z.array(z.string()).default([]),
  error: failure.nullable().default(null),
  errors: z.array(failure).default([]),
  why: z.string().default(""),
  items: z.array(z.number()).default([]),
});
const reducers = { log: "append", errors: "append" } as const;

class CodedError extends Error {
  constructor(
    message: string,
    readonly code: string,
  ) {
    super(message);
    this.name = "CodedError";
  }
}

const boom = () => {
  throw new CodedError("card declined", "DECLINED");
};
const logs = (word: string) => () => ({ log: [word] });

describe.each(storeFactories)("a node's catch ($name store)", (factory) => {
  const harness = engineHarness(factory);

  it("takes a failure once its retries are spent: the failure goes to the output key and the run goes on to the catch's target", async () => {
    const wf = workflow("catch-basic", { state, reducers })
      .node("charge", boom, { next: "ship", retry: { maxAttempts: 2, backoffMs: 1, jitter: 0 }, catch: { next: "refund", output: "error" } })
      .node("ship", logs("shipped"), { next: "END" })
      .node("refund", logs("refunded"), { next: "END" })
      .compile();
    const engine = await harness.engine([wf]);
    const run = await engine.start(wf);
    const settled = await run.wait({ timeoutMs: 10_000 });
    expect(settled.status).toBe("succeeded");
    const final = await run.state();
    expect(final.log).toEqual(["refunded"]);
    expect(final.error).toEqual({ node: "charge", code: "DECLINED", name: "CodedError", message: "card declined", attempts: 2 });
    const [charge] = (await engine.store.listTasks(run.id)).filter((t: TaskRecord) => t.node === "charge");
    expect([charge!.status, charge!.caught, charge!.attempts.length]).toEqual(["failed", true, 2]);
    const failed = await engine.store.readEvents({ runId: run.id, types: ["task.failed"] });
    expect(failed.map((e) => (e.payload as { caught?: string[] }).caught)).toEqual([undefined, ["refund"]]);
    const [first] = await engine.store.readEvents({ runId: run.id, types: ["step.completed"] });
    expect((first!.payload as { next: string[] }).next).toEqual(["refund"]);
  });

  it("catches only the errors it names: another one pauses the run for an operator as before, and an operator's retry may still succeed", async () => {
    let calls = 0;
    const wf = workflow("catch-named", { state, reducers })
      .node("charge", () => {
        calls++;
        if (calls === 1) throw new Error("network down");
        return { log: ["charged"] };
      }, { next: "END", catch: { next: "refund", on: ["DECLINED", "TIMEOUT"] } })
      .node("refund", logs("refunded"), { next: "END" })
      .compile();
    const engine = await harness.engine([wf]);
    const run = await engine.start(wf);
    const paused = await run.wait({ timeoutMs: 10_000 });
    expect([paused.status, paused.reason]).toEqual(["paused", "retries-exhausted"]);
    const [task] = await engine.store.listTasks(run.id, { step: 1 });
    expect(task!.caught).toBeUndefined();
    await engine.operator().retry(run.id, task!.id);
    expect((await run.wait({ until: "end", timeoutMs: 10_000 })).status).toBe("succeeded");
    expect((await run.state()).log).toEqual(["charged"]);
  });

  it("catches a timeout by its code, and a sub-workflow whose child run failed (CHILD_FAILED)", async () => {
    const child = workflow("catch-child", { state, reducers })
      .node("inner", boom, { next: "END", retry: { maxAttempts: 1, onExhausted: "fail" } })
      .compile();
    const wf = workflow("catch-parent", { state, reducers })
      .node("slow", (_s, ctx) => new Promise((resolve) => ctx.signal.addEventListener("abort", () => resolve({}), { once: true })), {
        next: "sub",
        timeoutMs: 100,
        catch: { next: "sub", on: ["TIMEOUT"], output: "why" },
      })
      .subgraph("sub", child, { next: "END", catch: { next: "cleanup", output: "error" } })
      .node("cleanup", logs("cleaned up"), { next: "END" })
      .compile();
    const engine = await harness.engine([wf, child]);
    const run = await engine.start(wf);
    expect((await run.wait({ timeoutMs: 15_000 })).status).toBe("succeeded");
    const final = await run.state();
    expect(final.why).toMatch(/^node "slow" failed after 1 attempt: node "slow" timed out after 100 ms/);
    expect(final.error).toMatchObject({ node: "sub", code: "CHILD_FAILED", attempts: 1 });
    expect(final.error!.message).toMatch(/^child run .* \(catch-child\) failed: node "inner" failed after 1 attempt: card declined$/);
    expect(final.log).toEqual(["cleaned up"]);
    const [childRun] = (await engine.store.listRuns({ parentRunId: run.id })).runs;
    expect(childRun!.status).toBe("failed");
  });

  it("on a mapped node, each failed item appends its failure (with its index); the items that succeeded keep their writes", async () => {
    const wf = workflow("catch-mapped", { state, reducers })
      .node("load", () => ({ items: [1, 2, 3] }), { next: "each" })
      .node("each", (_s, ctx) => {
        if (ctx.item === 2) throw new Error("two is bad");
        return { log: [`item ${String(ctx.item)}`] };
      }, { map: { over: "items" }, next: "done", catch: { next: "report", output: "errors" } })
      .node("done", logs("done"), { next: "END" })
      .node("report", logs("reported"), { next: "END" })
      .compile();
    const engine = await harness.engine([wf]);
    const run = await engine.start(wf);
    expect((await run.wait({ timeoutMs: 10_000 })).status).toBe("succeeded");
    const final = await run.state();
    expect(final.log).toEqual(["item 1", "item 3", "reported"]);
    expect(final.errors).toEqual([{ node: "each", index: 1, name: "Error", message: "two is bad", attempts: 1 }]);
  });

  it("a mapped node goes on along its own edges while its failed items stay within what its catch tolerates, and to its catch past it", async () => {
    const mapped = (name: string, tolerate: number | `${number}%`, bad: readonly number[]) =>
      workflow(name, { state, reducers })
        .node("load", () => ({ items: [1, 2, 3, 4, 5] }), { next: "each" })
        .node("each", (_s, ctx) => {
          if (bad.includes(ctx.item as number)) throw new CodedError(`${String(ctx.item)} is bad`, "BAD");
          return { log: [`item ${String(ctx.item)}`] };
        }, { map: { over: "items" }, next: "done", catch: { next: "report", output: "errors", tolerate } })
        .node("done", logs("done"), { next: "END" })
        .node("report", logs("reported"), { next: "END" })
        .compile();
    const cases: [ReturnType<typeof mapped>, string[], number][] = [
      [mapped("tolerate-two", 2, [2, 4]), ["item 1", "item 3", "item 5", "done"], 2],
      [mapped("tolerate-one", 1, [2, 4]), ["item 1", "item 3", "item 5", "reported"], 2],
      [mapped("tolerate-share", "20%", [3]), ["item 1", "item 2", "item 4", "item 5", "done"], 1],
      [mapped("tolerate-share-past", "20%", [1, 3]), ["item 2", "item 4", "item 5", "reported"], 2],
    ];
    const engine = await harness.engine(cases.map(([wf]) => wf));
    for (const [wf, log, failed] of cases) {
      const run = await engine.start(wf);
      expect((await run.wait({ timeoutMs: 10_000 })).status, wf.definition.name).toBe("succeeded");
      const final = await run.state();
      expect(final.log, wf.definition.name).toEqual(log);
      expect(final.errors, wf.definition.name).toHaveLength(failed);
    }
    const [first] = await engine.store.readEvents({ types: ["task.failed"], limit: 1 });
    expect(describeEvent(first!)).toMatch(/: [24] is bad \(caught; → report only if more than 2 of its items fail\)$/);
    // Routed by its items' results, with every item failed within the tolerance, it has no route of its own: its catch takes it.
    const routed = workflow("tolerate-routed", { state, reducers })
      .node("load", () => ({ items: [1, 2] }), { next: "each" })
      .node("each", () => {
        throw new Error("bad");
      }, { map: { over: "items" }, routes: { big: "done", small: "done" }, catch: { next: "report", output: "errors", tolerate: "100%" } })
      .node("done", logs("done"), { next: "END" })
      .node("report", logs("reported"), { next: "END" })
      .compile();
    const routedEngine = await harness.engine([routed]);
    const run = await routedEngine.start(routed);
    expect((await run.wait({ timeoutMs: 10_000 })).status).toBe("succeeded");
    expect((await run.state()).log).toEqual(["reported"]);
    expect(renderGraph(cases[0]![0].definition)).toContain("catches any failure → errors (tolerates 2 failed)");
  });

  it("a caught branch arrives at a join like a finished one", async () => {
    const wf = workflow("catch-join", { state, reducers })
      .node("fork", () => ({}), { next: ["a", "b"] })
      .node("a", boom, { next: "join", catch: { next: "join" } })
      .node("b", logs("b"), { next: "join" })
      .node("join", logs("joined"), { next: "END", waitFor: ["a", "b"] })
      .compile();
    const engine = await harness.engine([wf]);
    const run = await engine.start(wf);
    expect((await run.wait({ timeoutMs: 10_000 })).status).toBe("succeeded");
    expect((await run.state()).log).toEqual(["b", "joined"]);
  });
});

describe("what a catch cannot take (memory store)", () => {
  const harness = engineHarness(storeFactories[0]!);

  it("leaves uncaught a failure its output key cannot hold when it comes (validation tries a short one), saying why", async () => {
    // Short enough for "node failed" (what validation tries), too short for this failure's message.
    const strict = z.object({ error: z.string().max(30).default(""), log: z.array(z.string()).default([]) });
    const wf = workflow("catch-strict", { state: strict })
      .node("charge", boom, { next: "END", catch: { next: "END", output: "error" } })
      .compile();
    const engine = await harness.engine([wf]);
    const run = await engine.start(wf);
    expect(await run.wait({ timeoutMs: 10_000 })).toMatchObject({ status: "paused", reason: "retries-exhausted" });
    const [failed] = await engine.store.readEvents({ runId: run.id, types: ["task.failed"] });
    expect(describeEvent(failed!)).toMatch(/attempt 1: card declined \(its catch could not write the failure to "error": \$\.error: must be at most 30 characters long, got 51\)/);
  });

  it("leaves a failure of the deployment (no model configured) to an operator unless its on names it", async () => {
    const asks = (on?: string[]) =>
      workflow(`catch-no-model-${on ? "named" : "any"}`, { state: z.object({ answer: z.string().default(""), why: z.string().default("") }) })
        .llm("ask", { prompt: "Hello?", output: "answer", next: "END", catch: { next: "END", output: "why", ...(on ? { on } : {}) } })
        .compile();
    const [any, named] = [asks(), asks(["NO_MODEL"])];
    const engine = await harness.engine([any, named]);
    const paused = await engine.start(any);
    expect(await paused.wait({ timeoutMs: 10_000 })).toMatchObject({ status: "paused", reason: "retries-exhausted", error: { message: expect.stringContaining("model") } });
    const caught = await engine.start(named);
    expect((await caught.wait({ timeoutMs: 10_000 })).status).toBe("succeeded");
    expect((await caught.state()).why).toMatch(/^node "ask" failed after 1 attempt: /);
  });

  it("says where a caught failure went, and refuses a fork onto a version without that catch", async () => {
    const make = (withCatch: boolean) =>
      workflow("catch-fork", { state, reducers })
        .node("charge", boom, withCatch ? { next: "END", catch: { next: "refund" } } : { next: "refund" })
        .node("refund", logs("refunded"), { next: "END" })
        .compile();
    const [caught, plain] = [make(true), make(false)];
    const engine = await harness.engine([caught, plain]);
    const run = await engine.start(caught);
    expect((await run.wait({ timeoutMs: 10_000 })).status).toBe("succeeded");
    const [failed] = await engine.store.readEvents({ runId: run.id, types: ["task.failed"] });
    expect(describeEvent(failed!)).toContain("attempt 1: card declined (caught → refund)");
    await expect(engine.operator("ann").fork(run.id, 1, { workflow: plain })).rejects.toThrow(
      `at checkpoint 1 of run ${run.id}, node "charge" failed and its catch took it, but version ${plain.version.slice(0, 12)} has no catch on "charge": a fork from there would fail at once; fork from checkpoint 0 to run "charge" again, or fork onto a version with that catch`,
    );
  });
});

describe("catch in a workflow file", () => {
  const doc = (node: Record<string, unknown>, stateKeys: Record<string, unknown> = {}) => ({
    name: "w",
    start: "a",
    state: { out: { type: "object" }, n: { type: "number" }, list: { type: "array", reducer: "append" }, plain: { type: "array" }, items: { type: "array" }, ...stateKeys },
    nodes: { a: { action: "tasks.a", next: "END", ...node }, b: { action: "tasks.b", next: "END" } },
  });

  it("loads, draws its edge and says what it catches", () => {
    const wf = loadWorkflowText(JSON.stringify(doc({ catch: { next: "b", on: ["TIMEOUT"], output: "out" } })), checkActions);
    expect(wf.definition.nodes.a!.catch).toEqual({ next: "b", on: ["TIMEOUT"], output: "out" });
    const text = renderGraph(wf.definition);
    expect(text).toContain("catches TIMEOUT → out");
    expect(text).toMatch(/\[catch\] → b/);
  });

  it("refuses a catch that goes nowhere, writes where a failure cannot go, or sits on a node that cannot fail", () => {
    const messages = (d: unknown) => problemsOf(d).filter((p) => p.severity === "error").map((p) => `${p.path.replace(/^\$\./, "")} ${p.message}`);
    expect(messages(doc({ catch: { next: "nope" } }))).toEqual([expect.stringMatching(/^nodes\.a\.catch\.next "nope" is not a node \(nor END\)/)]);
    expect(messages(doc({ catch: { next: "b", output: "missing" } }))).toEqual(['nodes.a.catch.output state has no key "missing"']);
    expect(messages(doc({ catch: { next: "b", output: "n" } }))).toEqual([expect.stringMatching(/^nodes\.a\.catch\.output state key "n" is number: a failure is written as an object/)]);
    expect(messages(doc({ catch: { next: "b", output: "list" } }))).toEqual([]);
    expect(messages(doc({ catch: { next: "b", output: "ticket" } }, { ticket: { type: "object", required: ["id"], properties: { id: { type: "string" } } } }))).toEqual([
      expect.stringMatching(/^nodes\.a\.catch\.output state key "ticket" cannot hold a failure \(\{ node, code, name, message, attempts \}\) nor its message: .*id/),
    ]);
    expect(messages(doc({ catch: { next: "b", tolerate: 2 } }))).toEqual([expect.stringMatching(/^nodes\.a\.catch\.tolerate `tolerate` counts the failed items of a mapped node \(`map`\)/)]);
    expect(messages(doc({ map: { over: "items" }, catch: { next: "b", tolerate: "150%" } }))).toEqual([expect.stringMatching(/^nodes\.a\.catch\.tolerate "150%": give a percentage of the items up to 100%, such as "10%", or a count$/)]);
    expect(messages(doc({ map: { over: "items" }, catch: { next: "b", tolerate: "100.5%" } }))).toHaveLength(1);
    expect(messages(doc({ map: { over: "items" }, catch: { next: "b", tolerate: "12.5%" } }))).toEqual([]);
    expect(messages(doc({ map: { over: "items" }, catch: { next: "b", output: "plain" } }))).toEqual([
      expect.stringMatching(/^nodes\.a\.catch\.output each item of a mapped node writes its own failure: give "plain" the append reducer/),
    ]);
    const joined = {
      ...doc({}),
      start: "fan",
      nodes: {
        fan: { action: "tasks.noop", next: ["a", "b"] },
        a: { action: "tasks.a", next: "join", catch: { next: "b2" } },
        b: { action: "tasks.b", next: "join" },
        b2: { action: "tasks.noop", next: "END" },
        join: { action: "tasks.join", waitFor: ["a", "b"], next: "END" },
      },
    };
    expect(problemsOf(joined).map((p) => `${p.code} ${p.message}`)).toContain(
      'JOIN_MAY_STICK if "a" takes its catch (it failed), "join" gets b but never a and waits forever (the run fails with STUCK_JOIN): lead that catch to "join" too, or let "join" wait for fewer',
    );
    const twin = {
      ...doc({}),
      start: "fan",
      nodes: {
        fan: { action: "tasks.noop", next: ["a", "b"] },
        a: { action: "tasks.a", next: "END", catch: { next: "END", output: "out" } },
        b: { action: "tasks.b", next: "END", catch: { next: "END", output: "out" } },
      },
    };
    expect(problemsOf(twin).map((p) => `${p.severity} ${p.code} ${p.message}`)).toContain(
      'warning WRITE_CONFLICT "a" and "b" run in one step (from "fan") and their catches write to state key "out", whose reducer (replace) keeps one value: should both fail, the run fails (WRITE_CONFLICT) instead of going on by the catches; give "out" the append reducer, or each catch a key of its own',
    );
    const approval = { ...doc({}), nodes: { a: { kind: "approval", question: "ok?", decisions: ["approve"], next: "END", catch: { next: "END" } } } };
    expect(messages(approval)).toEqual([expect.stringMatching(/^nodes\.a\.catch `catch` has no effect on an approval node: an approval only asks a person: there is no failure to catch/)]);
  });
});

describe("a sub-workflow node's catch, as validated", () => {
  it("warns when a node of the child would pause the child instead of failing it, naming the nodes", () => {
    const failing = (onExhausted?: "fail") =>
      workflow(`child-${onExhausted ?? "pause"}`, { state })
        .node("inner", boom, { next: "END", ...(onExhausted ? { retry: { maxAttempts: 1, onExhausted } } : {}) })
        .compile();
    const parent = (child: ReturnType<typeof failing>) =>
      workflow(`parent-of-${child.definition.name}`, { state, reducers })
        .subgraph("sub", child, { next: "END", catch: { next: "END", output: "error" } })
        .compile()
        .warnings.map((p) => `${p.code} ${p.message}`);
    expect(parent(failing()).join("\n")).toContain('CATCH_NEVER_REACHED the catch takes the child run\'s failure, but a node of child-pause that fails for good (inner) pauses the child for an operator, and this run waits: give it retry.onExhausted "fail" (or a catch of its own)');
    expect(parent(failing("fail")).join("\n")).not.toContain("CATCH_NEVER_REACHED");
  });
});
