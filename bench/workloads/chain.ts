import { fastest, perUnit, ratios, scratchDir, table } from "../support/harness.js";
import { compareWithRaw, rawInsertBaseline, runOnMemory, type Comparison, type Durability } from "../support/sqlite.js";
import { stepRowFloor, type FloorPacking } from "../support/step-row-floor.js";
import { chainWorkflow } from "../support/workflows.js";
import type { WalPages } from "../support/wal-pages.js";

export const description = "200 runs × 10 nodes; each node appends 200 bytes to a list and bumps a counter (target: engine ≤ 3× raw per step)";

const RUNS = 200;
const NODES = 10;
const STEPS = RUNS * NODES;
const REPEAT = 3;

export default async function chain(): Promise<void> {
  // SQLite first, the memory store after: a worker's process runs one store, and the runtime's
  // code, optimised by V8 for the memory store's records and calls first, ran `chain` on SQLite
  // 10-15% slower than it does in a worker (measured: 77-84 µs a step against 69-74).
  const durabilities: Durability[] = ["process", "os"];
  const compared: Comparison[] = [];
  for (const durability of durabilities) {
    compared.push(await compareWithRaw(chainWorkflow(NODES), RUNS, STEPS, durability, REPEAT, { pages: durability === "process", warmUp: 3 }));
  }
  // Once untimed first, so that the memory store's figure is not a cold process's.
  await runOnMemory(chainWorkflow(NODES), RUNS);
  const memory = await fastest(REPEAT, () => runOnMemory(chainWorkflow(NODES), RUNS));
  const rows = compared.map(({ engine, raw, bytesPerStep }, i) => [
    durabilities[i]!,
    perUnit(engine, STEPS),
    perUnit(raw, STEPS),
    ratios(engine, raw),
    perUnit(memory, STEPS),
    (engine.writes / STEPS).toFixed(2),
    bytesPerStep.toFixed(0),
  ]);
  const pages = compared[0]!.pages;
  table(["durability", "engine µs/step", "raw µs/step", "engine/raw", "on memory store µs/step", "store writes/step", "row bytes/step"], rows);
  console.log(`wall (cpu) time; fastest of ${REPEAT} tries each`);
  printPages(pages!);
  await floor(Math.round(STEPS / pages!.commits));
}

/**
 * The pages the engine's transactions wrote: unlike the times, a count the machine's load does
 * not move, so what a change of layout saves shows on any machine.
 */
function printPages({ frames, commits, byName }: WalPages): void {
  const share = byName
    .slice(0, 8)
    .map(({ name, frames: n }) => `${name} ${(n / commits).toFixed(2)}`)
    .join(", ");
  console.log(`pages written (WAL frames): ${(frames / STEPS).toFixed(2)} a step, ${(frames / commits).toFixed(1)} a transaction in ${commits} transactions (the raw baseline: one transaction a step, of about one page)`);
  console.log(`a transaction's pages by table and index: ${share}`);
}

/**
 * Where a store layout could get at best: each step one row beside the run row (see
 * step-row-floor.ts), in groups of as many steps per transaction as the engine's group commit
 * made (`group`, counted in its WAL), its document deflated on its own, deflated with the
 * transaction's other steps, or not at all.
 */
const FLOOR_LABELS: Record<FloorPacking, string> = { step: "deflated per step", group: "deflated per transaction", none: "as JSON" };

async function floor(group: number): Promise<void> {
  const scratch = scratchDir();
  try {
    const rows: string[][] = [];
    for (const pack of ["step", "group", "none"] as const) {
      const written = await fastest(REPEAT, () => stepRowFloor(scratch.file(`floor-${Math.random()}.db`), "process", RUNS, NODES, { group, pack }));
      const raw = await fastest(REPEAT, () => rawInsertBaseline(scratch.file(`raw-${Math.random()}.db`), "process", STEPS, written.bytesPerStep));
      rows.push([FLOOR_LABELS[pack], perUnit(written, STEPS), perUnit(raw, STEPS), ratios(written, raw), written.bytesPerStep.toFixed(0)]);
    }
    console.log(`\nnot the engine — a step written as one row beside the run row, ${group} steps per transaction (the floor of any store layout):`);
    table(["step document", "µs/step", "raw µs/step", "floor/raw", "row bytes/step"], rows);
  } finally {
    scratch.cleanup();
  }
}
