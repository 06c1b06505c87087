import { ratio, scratchDir, table } from "../support/harness.js";
import { footprint, rawInsertBaseline, runOnMemory, runOnSqlite, type Durability } from "../support/sqlite.js";
import { fanoutWorkflow } from "../support/workflows.js";

export const description = "100 runs of split → 8 parallel branches → join (3 steps, 10 tasks per run)";

const RUNS = 100;
const WIDTH = 8;
const STEPS_PER_RUN = 3;

export default async function fanout(): Promise<void> {
  const memoryMs = (await runOnMemory(fanoutWorkflow(WIDTH), RUNS)).ms;
  const rows: (string | number)[][] = [];
  for (const durability of ["process", "os"] as Durability[]) {
    const scratch = scratchDir();
    try {
      const measure = await runOnSqlite(scratch.file("fanout.db"), fanoutWorkflow(WIDTH), RUNS, durability);
      const steps = RUNS * STEPS_PER_RUN;
      const bytesPerStep = footprint(scratch.file("fanout.db")).rowBytes / steps;
      const rawUs = rawInsertBaseline(scratch.file("raw.db"), durability, steps, bytesPerStep);
      const engineUs = (measure.ms / steps) * 1000;
      rows.push([durability, measure.ms / RUNS, (measure.ms / (RUNS * (WIDTH + 2))) * 1000, engineUs, rawUs, ratio(engineUs, rawUs), memoryMs / RUNS, measure.transactions / steps]);
    } finally {
      scratch.cleanup();
    }
  }
  table(["durability", "ms/run", "µs/task", "engine µs/step", "raw µs/step", "engine/raw", "same on memory store ms/run", "transactions/step"], rows);
}
