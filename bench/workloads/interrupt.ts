import { z } from "zod";
import { Operator, WorkflowRegistry, Worker, actionRegistry, openStore, storeWorkflow, workflow, type CompiledWorkflow, type Store } from "../support/engine.js";
import { newId } from "../../engine/ids.js";
import { newRun } from "../../engine/runtime/new-run.js";
import { fastest, fmt, scratchDir, stopwatch, table, type Timing } from "../support/harness.js";
import { footprint, rawInsertBaseline } from "../support/sqlite.js";
import { ITEM } from "../support/workflows.js";

export const description =
  "100 runs, each pausing at an approval that an operator resolves (target: ≤ 2 ms per pause-and-resume cycle beyond the raw baseline)";

const RUNS = 100;
const REPEAT = 3;
const state = z.object({ items: z.array(z.string()).default([]), sent: z.boolean().default(false) });

function flow(approval: boolean): CompiledWorkflow {
  const builder = workflow(`bench-approval-${approval}`, { state, reducers: { items: "append" } }).node("prepare", () => ({ items: [ITEM] }), {
    next: approval ? "review" : "send",
  });
  const withReview = approval ? builder.approval("review", { question: "Send?", show: ["items"], routes: { approve: "send", reject: "END" } }) : builder;
  return withReview.node("send", () => ({ sent: true }), { next: "END" }).compile();
}

interface Measure extends Timing {
  writes: number;
  rowBytes: number;
}

/** Runs RUNS runs of `wf` to their end on a fresh SQLite file, an operator approving each pause at once. */
async function measure(file: string, wf: CompiledWorkflow): Promise<Measure> {
  const store = await openStore(`sqlite:${file}`);
  let writes = 0;
  const counted = countWrites(store, () => writes++);
  try {
    await storeWorkflow(store, wf);
    for (let i = 0; i < RUNS; i++) await store.createRun(newRun({ id: newId("run"), workflow: wf, state: wf.initialState({}), actor: "bench" }));
    const operator = new Operator(counted, { actor: "operator:bench" });
    const stop = new AbortController();
    const approving = (async () => {
      for await (const event of counted.subscribe({ types: ["run.paused"], signal: stop.signal })) {
        const [pending] = await counted.listInterrupts({ runId: event.runId, status: "pending" });
        if (pending) await operator.resolve(pending.id, { decision: "approve" });
      }
    })();
    const worker = new Worker(counted, new WorkflowRegistry(counted, actionRegistry({}), [wf]), { concurrency: 16, pollMs: 20 });
    const clock = stopwatch();
    worker.start();
    for await (const _ of counted.subscribe({ after: 0, types: ["run.succeeded"] })) {
      if ((await store.countRuns()).succeeded === RUNS) break;
    }
    const timing = clock();
    stop.abort();
    await approving;
    await worker.stop();
    await store.close();
    return { ...timing, writes, rowBytes: footprint(file).rowBytes };
  } catch (error) {
    await store.close();
    throw error;
  }
}

function countWrites(store: Store, count: () => void): Store {
  const writes = new Set(["claimRun", "commit", "renewLease", "createRun", "submitCommand", "answerCommand"]);
  return new Proxy(store, {
    get(target, key, receiver) {
      const value = Reflect.get(target, key, receiver) as unknown;
      if (typeof value !== "function") return value;
      return (...args: unknown[]) => {
        if (writes.has(String(key))) count();
        return (value as (...a: unknown[]) => unknown).apply(target, args);
      };
    },
  });
}

export default async function interrupt(): Promise<void> {
  const scratch = scratchDir();
  try {
    const plain = await fastest(REPEAT, () => measure(scratch.file(`plain-${Math.random()}.db`), flow(false)));
    const paused = await fastest(REPEAT, () => measure(scratch.file(`paused-${Math.random()}.db`), flow(true)));
    // What a pause-and-resume adds: its writes (pause, resolve, claim again, resume), each
    // at the raw cost of writing the same bytes.
    const extraWrites = (paused.writes - plain.writes) / RUNS;
    const bytesPerWrite = paused.rowBytes / paused.writes;
    const raw = await fastest(REPEAT, () => rawInsertBaseline(scratch.file(`raw-${Math.random()}.db`), "process", Math.round(extraWrites * RUNS), bytesPerWrite));
    const cycle = { ms: (paused.ms - plain.ms) / RUNS, cpuMs: (paused.cpuMs - plain.cpuMs) / RUNS };
    const rawCycle = { ms: raw.ms / RUNS, cpuMs: raw.cpuMs / RUNS };
    table(
      ["", "ms per run", "store writes per run"],
      [
        ["without approval", `${fmt(plain.ms / RUNS)} (${fmt(plain.cpuMs / RUNS)})`, fmt(plain.writes / RUNS)],
        ["with approval", `${fmt(paused.ms / RUNS)} (${fmt(paused.cpuMs / RUNS)})`, fmt(paused.writes / RUNS)],
        ["pause-and-resume cycle", `${fmt(cycle.ms)} (${fmt(cycle.cpuMs)})`, fmt(extraWrites)],
        ["raw baseline: those writes, one transaction each", `${fmt(rawCycle.ms)} (${fmt(rawCycle.cpuMs)})`, fmt(extraWrites)],
        ["cycle beyond raw (target ≤ 2 ms)", `${fmt(cycle.ms - rawCycle.ms)} (${fmt(cycle.cpuMs - rawCycle.cpuMs)})`, ""],
      ],
    );
    console.log(`wall (cpu) ms; fastest of ${REPEAT} tries each; SQLite, durability process`);
  } finally {
    scratch.cleanup();
  }
}
