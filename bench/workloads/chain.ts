import { fastest, perUnit, ratios, scratchDir, table } from "../support/harness.js";
import { compareWithRaw, rawInsertBaseline, runOnMemory, type Durability } from "../support/sqlite.js";
import { stepRowFloor, type FloorPacking } from "../support/step-row-floor.js";
import { chainWorkflow } from "../support/workflows.js";

export const description = "200 runs × 10 nodes; each node appends 200 bytes to a list and bumps a counter (target: engine ≤ 3× raw per step)";

const RUNS = 200;
const NODES = 10;
const STEPS = RUNS * NODES;
const REPEAT = 3;

export default async function chain(): Promise<void> {
  // Once untimed first: the runtime's code is compiled by the time any figure is taken (the
  // SQLite runs after these find it so), and the memory store's figure is not a cold process's.
  await runOnMemory(chainWorkflow(NODES), RUNS);
  const memory = await fastest(REPEAT, () => runOnMemory(chainWorkflow(NODES), RUNS));
  const rows: string[][] = [];
  for (const durability of ["process", "os"] as Durability[]) {
    const { engine, raw, bytesPerStep } = await compareWithRaw(chainWorkflow(NODES), RUNS, STEPS, durability, REPEAT);
    rows.push([durability, perUnit(engine, STEPS), perUnit(raw, STEPS), ratios(engine, raw), perUnit(memory, STEPS), (engine.writes / STEPS).toFixed(2), bytesPerStep.toFixed(0)]);
  }
  table(["durability", "engine µs/step", "raw µs/step", "engine/raw", "on memory store µs/step", "store writes/step", "row bytes/step"], rows);
  console.log(`wall (cpu) time; fastest of ${REPEAT} tries each`);
  await floor();
}

/**
 * Where a store layout could get at best: each step one row beside the run row (see
 * step-row-floor.ts), in groups of 11 steps per transaction (what the engine's group commit
 * averages here: 2,401 writes in 212 transactions), its document deflated on its own, deflated
 * with the transaction's other steps, or not at all.
 */
const FLOOR_LABELS: Record<FloorPacking, string> = { step: "deflated per step", group: "deflated per transaction", none: "as JSON" };

async function floor(): Promise<void> {
  const scratch = scratchDir();
  try {
    const rows: string[][] = [];
    for (const pack of ["step", "group", "none"] as const) {
      const written = await fastest(REPEAT, () => stepRowFloor(scratch.file(`floor-${Math.random()}.db`), "process", RUNS, NODES, { group: 11, pack }));
      const raw = await fastest(REPEAT, () => rawInsertBaseline(scratch.file(`raw-${Math.random()}.db`), "process", STEPS, written.bytesPerStep));
      rows.push([FLOOR_LABELS[pack], perUnit(written, STEPS), perUnit(raw, STEPS), ratios(written, raw), written.bytesPerStep.toFixed(0)]);
    }
    console.log("\nnot the engine — a step written as one row beside the run row, 11 steps per transaction (the floor of any store layout):");
    table(["step document", "µs/step", "raw µs/step", "floor/raw", "row bytes/step"], rows);
  } finally {
    scratch.cleanup();
  }
}
