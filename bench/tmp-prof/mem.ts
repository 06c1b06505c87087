import { runOnMemory } from "../support/sqlite.js";
import { chainWorkflow } from "../support/workflows.js";
const wf = chainWorkflow(10);
await runOnMemory(wf, 200);
const t0 = performance.now();
for (let i = 0; i < 10; i++) await runOnMemory(wf, 200);
console.log(((performance.now() - t0) * 1000 / 20000).toFixed(1), "µs/step");
