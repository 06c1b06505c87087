import { z } from "zod";
import { MemoryStore, createEngine, workflow, type Engine, type RunRecord, type Store } from "../../engine/index.js";
import { NoticeLog } from "../support/notices.js";

const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Travel planning: a fan-out to three sub-agents (hotels fails once), a join, an approval, a booking. */
export function travelWorkflow() {
  return workflow("travel-planner", {
    state: z.object({
      city: z.string().default("Lisbon"),
      budget: z.number().default(1200),
      notes: z.array(z.string()).default([]),
      booked: z.boolean().default(false),
    }),
    reducers: { notes: "append" },
  })
    .node("plan", () => ({ notes: ["planned"] }), { next: ["flights", "hotels", "weather"] })
    .node("flights", async () => (await pause(5), { notes: ["flight TP123"] }), { next: "join" })
    .node(
      "hotels",
      async (_s, ctx) => {
        await pause(5);
        if (ctx.attempt === 1) throw new Error("hotel API timed out");
        return { notes: ["hotel Alfama"] };
      },
      { next: "join", retry: { maxAttempts: 3, backoffMs: 5, jitter: 0 } },
    )
    .node("weather", () => ({ notes: ["sunny"] }), { next: "join" })
    .node("join", () => ({ notes: ["itinerary ready"] }), { next: "approve", waitFor: ["flights", "hotels", "weather"] })
    .approval("approve", { question: "Book this trip?", show: ["city", "budget"], routes: { approve: "book", reject: "END" } })
    .node("book", () => ({ booked: true }), { next: "END" })
    .compile();
}

/** A run whose sub-workflow is the travel planner (the same one, which an engine takes once), which pauses at its approval. */
export function tripParentWorkflow(travel = travelWorkflow()) {
  return workflow("trip-parent", {
    state: z.object({ city: z.string().default("Oslo"), notes: z.array(z.string()).default([]), booked: z.boolean().default(false) }),
    reducers: { notes: "append" },
  })
    .subgraph("trip", travel, { next: "END" })
    .compile();
}

/** SuperAGI-style task queue: process until the check says YES; NO loops back. */
export function taskQueueWorkflow() {
  return workflow("task-queue", {
    state: z.object({ tasks: z.array(z.string()).default([]), done: z.number().default(0) }),
    reducers: { tasks: "append" },
  })
    .node("init", () => ({ tasks: ["draft"] }), { next: "work" })
    .node("work", (s) => ({ done: s.done + 1 }), { next: "check" })
    .node("check", (s) => ({ route: s.done >= 3 ? "YES" : "NO" }), { routes: { YES: "summary", NO: "work" }, default: "work" })
    .node("summary", () => ({ tasks: ["summary"] }), { next: "END" })
    .compile();
}

/** Five parallel researchers; the third needs an approval mid-way; a join waits for all. */
export function researchWorkflow() {
  const researcher = (topic: string) => async () => (await pause(2), { findings: [topic] });
  return workflow("research-fanout", {
    state: z.object({ question: z.string().default("Why is the sky blue?"), findings: z.array(z.string()).default([]) }),
    reducers: { findings: "append" },
  })
    .node("plan", () => ({}), { next: ["researcher-1", "researcher-2", "researcher-3", "researcher-4", "researcher-5"] })
    .node("researcher-1", researcher("optics"), { next: "join" })
    .node("researcher-2", researcher("history"), { next: "join" })
    .node("researcher-3", researcher("physics"), { next: "review" })
    .approval("review", { question: "Use the physics findings?", show: ["findings"], decisions: ["approve", "edit"], next: "join" })
    .node("researcher-4", researcher("biology"), { next: "join" })
    .node("researcher-5", researcher("art"), { next: "join" })
    .node("join", () => ({}), { next: "END", waitFor: ["researcher-1", "researcher-2", "review", "researcher-4", "researcher-5"] })
    .compile();
}

/** A node that asks the operator a question in the middle of its work and uses the answer. */
export function askWorkflow() {
  return workflow("ask", { state: z.object({ branch: z.string().default(""), question: z.string().default("Which branch should I deploy?") }) })
    .node(
      "choose",
      async (s, ctx) => {
        const answer = await ctx.interrupt({ question: s.question, show: { default: "main" }, decisions: ["respond", "reject"] });
        return { branch: String(answer.response ?? "") };
      },
      { next: "END" },
    )
    .compile();
}

/** A tool call waiting for approval, whose arguments the operator may edit (as agents ask). */
export function refundWorkflow() {
  return workflow("refund", { state: z.object({ refunded: z.number().default(0) }) })
    .node(
      "refund",
      async (_s, ctx) => {
        const proposed = { orderId: "A-1001", amount: 18 };
        const answer = await ctx.interrupt({
          question: "Run issueRefund?",
          decisions: ["approve", "reject", "edit"],
          data: { tool: "issueRefund", arguments: proposed },
          responseSchema: z.object({ orderId: z.string(), amount: z.number().positive().max(100) }),
        });
        const args = (answer.decision === "edit" ? answer.response : proposed) as { amount: number };
        return { refunded: answer.decision === "reject" ? 0 : args.amount };
      },
      { next: "END" },
    )
    .compile();
}

/** A node that reports progress and runs until it is aborted (to kill it). */
export function slowWorkflow() {
  return workflow("slow", { state: z.object({ n: z.number().default(0) }) })
    .node(
      "crunch",
      (_s, ctx) =>
        new Promise((resolve, reject) => {
          const timer = setTimeout(() => resolve({ n: 1 }), 60_000);
          const progress = setInterval(() => ctx.progress(0.42, "crunching"), 100);
          ctx.signal.addEventListener("abort", () => (clearTimeout(timer), clearInterval(progress), reject(new Error("aborted"))));
        }),
      { next: "END" },
    )
    .compile();
}

/** A node that reports its progress once, then works quietly until it is aborted. */
export function quietWorkflow() {
  return workflow("quiet", { state: z.object({ n: z.number().default(0) }) })
    .node(
      "warm",
      (_s, ctx) =>
        new Promise((_resolve, reject) => {
          ctx.progress(0.37, "warming up");
          ctx.signal.addEventListener("abort", () => reject(new Error("aborted")));
        }),
      { next: "END" },
    )
    .compile();
}

/** A node whose output is hostile terminal text, as an LLM's might be. */
export const HOSTILE = "before\u001b]0;pwned title\u0007\u001b[2J\u001b[10;10Hmoved\u009b31mred\u001b[?1049l\rafter\u202e";

export function hostileWorkflow() {
  return workflow("hostile", { state: z.object({ output: z.string().default("") }) })
    .node(
      "generate",
      (_s, ctx) => {
        ctx.log.info(HOSTILE);
        return { output: HOSTILE };
      },
      { next: "END" },
    )
    .compile();
}

/** A node that fails for good with a message in Japanese and an emoji (or English); another language succeeds. */
export function failingWorkflow() {
  return workflow("failing", { state: z.object({ lang: z.string().default("ja") }) })
    .node(
      "call",
      (s) => {
        if (s.lang !== "ja" && s.lang !== "en") return { lang: `${s.lang} (answered)` };
        throw new Error(s.lang === "ja" ? "接続に失敗しました 🚀 再試行" : "connection refused, retry later");
      },
      { next: "END", retry: { maxAttempts: 1, onExhausted: "fail" } },
    )
    .compile();
}

/**
 * The failing workflow (in English) as a sub-workflow of `failing-parent`, itself one of
 * `failing-grandparent`: a failure two child runs down. Give it the engine's failing workflow (it takes one).
 */
export function failingParentWorkflows(failing = failingWorkflow()) {
  const once = { retry: { maxAttempts: 1, onExhausted: "fail" as const } };
  const parent = workflow("failing-parent", { state: z.object({ lang: z.string().default("en") }) })
    .subgraph("ask", failing, { next: "END", ...once })
    .compile();
  const grandparent = workflow("failing-grandparent", { state: z.object({ lang: z.string().default("en") }) })
    .subgraph("delegate", parent, { next: "END", ...once })
    .compile();
  return [parent, grandparent];
}

export interface Fixture<S extends Store = MemoryStore> {
  store: S;
  engine: Engine;
  close(): Promise<void>;
}

/** A memory store with an in-process worker running the fixture workflows. */
export function fixture(): Fixture {
  return fixtureOn(new MemoryStore());
}

/**
 * `store` (a SQLite file other processes can open too) with an in-process worker running the
 * fixture workflows. `notices` is what that worker says; those of a kind the test did not ask
 * about are written to stderr on `close`.
 */
export function fixtureOn<S extends Store>(store: S): Fixture<S> & { notices: NoticeLog } {
  const travel = travelWorkflow();
  const failing = failingWorkflow();
  const notices = new NoticeLog();
  const workflows = [travel, taskQueueWorkflow(), researchWorkflow(), askWorkflow(), slowWorkflow(), quietWorkflow(), hostileWorkflow(), failing, refundWorkflow(), tripParentWorkflow(travel), ...failingParentWorkflows(failing)];
  const engine = createEngine({ store, worker: { pollMs: 50, killGraceMs: 200, onNotice: notices.listen }, workflows });
  return {
    store,
    engine,
    notices,
    close: async () => {
      await engine.close();
      await store.close();
      notices.end();
    },
  };
}

/** Starts a run and waits until it ends or pauses. */
export async function settle(engine: Engine, name: string, input: unknown = {}): Promise<RunRecord> {
  const handle = await engine.start(name, input);
  return handle.wait({ timeoutMs: 10_000 });
}
