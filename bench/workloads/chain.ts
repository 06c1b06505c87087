import { ratio, scratchDir, table } from "../support/harness.js";
import { footprint, rawInsertBaseline, runOnMemory, runOnSqlite, type Durability } from "../support/sqlite.js";
import { chainWorkflow } from "../support/workflows.js";

export const description = "200 runs × 10 nodes; each node appends 200 bytes to a list and bumps a counter (target: engine ≤ 3× raw per step)";

const RUNS = 200;
const NODES = 10;
const STEPS = RUNS * NODES;

export default async function chain(): Promise<void> {
  const memoryUs = ((await runOnMemory(chainWorkflow(NODES), RUNS)).ms / STEPS) * 1000;
  const rows: (string | number)[][] = [];
  for (const durability of ["process", "os"] as Durability[]) {
    const scratch = scratchDir();
    try {
      const measure = await runOnSqlite(scratch.file("chain.db"), chainWorkflow(NODES), RUNS, durability);
      const bytesPerStep = footprint(scratch.file("chain.db")).rowBytes / STEPS;
      const engineUs = (measure.ms / STEPS) * 1000;
      const rawUs = rawInsertBaseline(scratch.file("raw.db"), durability, STEPS, bytesPerStep);
      rows.push([durability, engineUs, rawUs, ratio(engineUs, rawUs), memoryUs, measure.transactions / STEPS, bytesPerStep]);
    } finally {
      scratch.cleanup();
    }
  }
  table(["durability", "engine µs/step", "raw µs/step", "engine/raw", "same on memory store µs/step", "transactions/step", "row bytes/step"], rows);
}
