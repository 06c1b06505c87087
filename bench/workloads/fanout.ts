import { fastest, perUnit, ratios, table } from "../support/harness.js";
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
  const rows: string[][] = [];
  for (const durability of ["process", "os"] as Durability[]) {
    const { engine, raw } = await compareWithRaw(fanoutWorkflow(WIDTH), RUNS, STEPS, durability, REPEAT);
    rows.push([durability, perUnit(engine, RUNS * 1000), perUnit(engine, TASKS), perUnit(engine, STEPS), perUnit(raw, STEPS), ratios(engine, raw), perUnit(memory, RUNS * 1000), (engine.writes / STEPS).toFixed(2)]);
  }
  table(["durability", "ms/run", "µs/task", "engine µs/step", "raw µs/step", "engine/raw", "on memory store ms/run", "store writes/step"], rows);
  console.log(`wall (cpu) time; fastest of ${REPEAT} tries each`);
}
