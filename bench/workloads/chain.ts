import { fastest, perUnit, ratios, table } from "../support/harness.js";
import { compareWithRaw, runOnMemory, type Durability } from "../support/sqlite.js";
import { chainWorkflow } from "../support/workflows.js";

export const description = "200 runs × 10 nodes; each node appends 200 bytes to a list and bumps a counter (target: engine ≤ 3× raw per step)";

const RUNS = 200;
const NODES = 10;
const STEPS = RUNS * NODES;
const REPEAT = 3;

export default async function chain(): Promise<void> {
  const memory = await fastest(REPEAT, () => runOnMemory(chainWorkflow(NODES), RUNS));
  const rows: string[][] = [];
  for (const durability of ["process", "os"] as Durability[]) {
    const { engine, raw, bytesPerStep } = await compareWithRaw(chainWorkflow(NODES), RUNS, STEPS, durability, REPEAT);
    rows.push([durability, perUnit(engine, STEPS), perUnit(raw, STEPS), ratios(engine, raw), perUnit(memory, STEPS), (engine.writes / STEPS).toFixed(2), bytesPerStep.toFixed(0)]);
  }
  table(["durability", "engine µs/step", "raw µs/step", "engine/raw", "on memory store µs/step", "store writes/step", "row bytes/step"], rows);
  console.log(`wall (cpu) time; fastest of ${REPEAT} tries each`);
}
