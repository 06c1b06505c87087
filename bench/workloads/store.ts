import { WorkflowRegistry, Worker, actionRegistry, openStore, storeWorkflow } from "../support/engine.js";
import { newId } from "../../engine/ids.js";
import { newRun } from "../../engine/runtime/new-run.js";
import { fastest, perUnit, scratchDir, table } from "../support/harness.js";
import { recording, replayOnSqlite, type RecordedCall } from "../support/store-replay.js";
import { chainWorkflow } from "../support/workflows.js";

export const description = "the SQLite store alone: the store calls of `chain` (200 runs × 10 nodes), recorded once and made again on a fresh store, without the runtime";

const RUNS = 200;
const NODES = 10;
const STEPS = RUNS * NODES;
const REPEAT = 5;

export default async function store(): Promise<void> {
  const scratch = scratchDir();
  try {
    const { setup, calls } = await record(scratch.file("recorded.db"));
    const replayed = await fastest(REPEAT, () => replayOnSqlite(scratch.file(`replay-${Math.random()}.db`), setup, calls));
    const writes = calls.filter((c) => c.write).length;
    const turns = new Set(calls.filter((c) => c.write).map((c) => c.turn)).size;
    table(
      ["store µs/step", "calls/step", "writes/step", "write groups"],
      [[perUnit(replayed, STEPS), (calls.length / STEPS).toFixed(2), (writes / STEPS).toFixed(2), String(turns)]],
    );
    console.log(`wall (cpu) time; fastest of ${REPEAT} replays`);
  } finally {
    scratch.cleanup();
  }
}

/** The calls of one `chain` run on SQLite: the runs' creation (not timed), then the worker's. */
async function record(file: string): Promise<{ setup: RecordedCall[]; calls: RecordedCall[] }> {
  const store = await openStore(`sqlite:${file}`, { durability: "process" });
  const recorder = recording(store);
  try {
    const workflow = chainWorkflow(NODES);
    await storeWorkflow(recorder.store, workflow);
    for (let i = 0; i < RUNS; i++) await recorder.store.createRun(newRun({ id: newId("run"), workflow, state: workflow.initialState({}), actor: "bench" }));
    const created = recorder.calls.length;
    const worker = new Worker(recorder.store, new WorkflowRegistry(recorder.store, actionRegistry({}), [workflow]), { concurrency: 16 });
    await worker.drain();
    return { setup: recorder.calls.slice(0, created), calls: recorder.calls.slice(created) };
  } finally {
    recorder.stop();
    await store.close();
  }
}
