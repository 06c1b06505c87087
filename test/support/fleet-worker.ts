// A worker process sharing a store with others:
//   node --import tsx fleet-worker.ts <store-url> <worker-id> <workflow-module> <lease-ms> [concurrency]
// The module's default export is the compiled workflow it runs. It prints one JSON line when
// ready and one per run whose execution ends here; problems go to stderr.
import { pathToFileURL } from "node:url";
import { Worker, WorkflowRegistry, actionRegistry, openStore, type CompiledWorkflow } from "../../engine/index.js";

const [url, id, module, leaseMs, concurrency] = process.argv.slice(2);
if (!url || !id || !module || !leaseMs) {
  console.error("usage: fleet-worker.ts <store-url> <worker-id> <workflow-module> <lease-ms> [concurrency]");
  process.exit(2);
}
const workflow = ((await import(pathToFileURL(module).href)) as { default: CompiledWorkflow }).default;
const store = await openStore(url);
const worker = new Worker(store, new WorkflowRegistry(store, actionRegistry({}), [workflow]), {
  id,
  leaseMs: Number(leaseMs),
  pollMs: 250,
  ...(concurrency ? { concurrency: Number(concurrency) } : {}),
  onRunEnd: (runId, end) => console.log(JSON.stringify({ runId, ...end })),
  onError: (message) => console.error(message),
});
worker.start();
console.log(JSON.stringify({ ready: id }));
process.once("SIGTERM", () => {
  void worker
    .stop()
    .then(() => store.close())
    .finally(() => process.exit(0));
});
