// A worker process of the multi-process tests: `node --import tsx fleet-worker.ts <url> <id> <leaseMs>`.
// It prints one JSON line when ready and one per run whose execution ends here.
import { Worker, WorkflowRegistry, actionRegistry, openStore } from "../../engine/index.js";
import { fanout } from "./fanout-workflow.js";

const [url, id, leaseMs] = process.argv.slice(2);
if (!url || !id || !leaseMs) {
  console.error("usage: fleet-worker.ts <store-url> <worker-id> <lease-ms>");
  process.exit(2);
}
const store = await openStore(url);
const worker = new Worker(store, new WorkflowRegistry(store, actionRegistry({}), [fanout]), {
  id,
  leaseMs: Number(leaseMs),
  pollMs: 250,
  onRunEnd: (runId, end) => console.log(JSON.stringify({ runId, ...end })),
});
worker.start();
console.log(JSON.stringify({ ready: id }));
process.once("SIGTERM", () => {
  void worker
    .stop()
    .then(() => store.close())
    .finally(() => process.exit(0));
});
