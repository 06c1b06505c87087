import { fmt, ratio, scratchDir, table } from "../support/harness.js";
import { biggest, footprint, kb, rawInsertBaseline, runOnSqlite, type Footprint } from "../support/sqlite.js";
import { loopWorkflow } from "../support/workflows.js";

export const description = "one run of 2,000 steps appending 200 bytes each, then 4,000 (targets: store ≤ 2 MB at 2,000 steps; 4,000 steps ≤ 2.2× the time and bytes of 2,000)";

interface Result {
  steps: number;
  ms: number;
  rawMs: number;
  store: Footprint;
}

async function measure(steps: number): Promise<Result> {
  const scratch = scratchDir();
  try {
    const { ms } = await runOnSqlite(scratch.file("loop.db"), loopWorkflow(steps), 1, "process");
    const store = footprint(scratch.file("loop.db"));
    const rawUs = rawInsertBaseline(scratch.file("raw.db"), "process", steps, store.rowBytes / steps);
    return { steps, ms, rawMs: (rawUs * steps) / 1000, store };
  } finally {
    scratch.cleanup();
  }
}

export default async function loop(): Promise<void> {
  await measure(300); // warms the JIT up, so that the first figure is not the slowest for that reason
  const small = await measure(2000);
  const large = await measure(4000);
  table(
    ["steps", "engine ms", "raw ms", "engine/raw", "store file", "bytes/step"],
    [small, large].map((r) => [fmt(r.steps), r.ms, r.rawMs, ratio(r.ms, r.rawMs), kb(r.store.fileBytes), r.store.fileBytes / r.steps]),
  );
  console.log(`4,000 vs 2,000 steps: time ${ratio(large.ms, small.ms)}, bytes ${ratio(large.store.fileBytes, small.store.fileBytes)} (linear is 2×)`);
  console.log(`where the bytes are at 2,000 steps: ${biggest(small.store.tables, 8)}`);
}
