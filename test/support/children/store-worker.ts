// A worker process for the tests that kill, stop and restart processes:
//   node store-worker.js <store> <workflow> <lease ms> [serve|drain]
// <store> is a SQLite file, or a store URL (sqlite:…, redis://…).
// `serve` works until the process is killed; `drain` exits 0 once no run is queued or running.
// It prints JSON lines: {"ready":id} once it works, {"end":...} when a run's execution ends here.
import { setTimeout as sleep } from "node:timers/promises";
import { Worker, createEngine, openStore } from "../../../engine/index.js";
import { WORKFLOWS, type WorkflowName } from "../durable-workflows.js";

const [target, name, lease, mode = "serve"] = process.argv.slice(2);
const workflow = WORKFLOWS[name as WorkflowName]?.();
if (!target || !workflow || !lease) {
  console.error("usage: store-worker.ts <store file or URL> <crash|slow|timer|backoff> <lease ms> [serve|drain]");
  process.exit(2);
}

const store = await openStore(/^[a-z][a-z0-9+.-]*:/i.test(target) ? target : `sqlite:${target}`);
const id = `child-${process.pid}`;
const engine = createEngine({ store, workflows: [workflow], worker: false });
const worker = new Worker(store, engine.registry, {
  id,
  leaseMs: Number(lease),
  pollMs: 50,
  maxRecoveries: Number.MAX_SAFE_INTEGER,
  onRunEnd: (runId, end) => console.log(JSON.stringify({ end: { runId, ...end } })),
});

console.log(JSON.stringify({ ready: id }));
if (mode === "serve") {
  worker.start();
} else {
  for (;;) {
    await worker.drain();
    // Runs still leased by a killed process become claimable when their lease runs out.
    if ((await store.listRuns({ status: ["queued", "running"], limit: 1 })).runs.length === 0) break;
    await sleep(50);
  }
  await engine.close();
  await store.close();
}
