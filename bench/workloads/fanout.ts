import { fastest, ratio, table } from "../support/harness.js";
import { compareWithRaw, runOnMemory, type Durability } from "../support/sqlite.js";
import { fanoutWorkflow } from "../support/workflows.js";

export const description = "100 runs of split → 8 parallel branches → join (3 steps, 10 tasks per run)";

const RUNS = 100;
const WIDTH = 8;
const STEPS = RUNS * 3;
const TASKS = RUNS * (WIDTH + 2);
const REPEAT = 3;

export default async function fanout(): Promise<void> {
  const memory = await fastest(REPEAT, () => runOnMemory(fanoutWorkflow(WIDTH), RUNS));
  const rows: (string | number)[][] = [];
  for (const durability of ["process", "os"] as Durability[]) {
    const { engine, raw } = await compareWithRaw(fanoutWorkflow(WIDTH), RUNS, STEPS, durability, REPEAT);
    const engineUs = (engine.ms / STEPS) * 1000;
    rows.push([durability, engine.ms / RUNS, (engine.ms / TASKS) * 1000, engineUs, raw.usPerStep, ratio(engineUs, raw.usPerStep), memory.ms / RUNS, engine.transactions / STEPS]);
  }
  table(["durability", "ms/run", "µs/task", "engine µs/step", "raw µs/step", "engine/raw", "same on memory store ms/run", "transactions/step"], rows);
  console.log(`fastest of ${REPEAT} runs each`);
}
