import { fmt, ratio, ratios, table } from "../support/harness.js";
import { biggest, compareWithRaw, kb, type Comparison } from "../support/sqlite.js";
import { loopWorkflow } from "../support/workflows.js";

export const description = "one run of 2,000 steps appending 200 bytes each, then 4,000 (targets: store ≤ 2 MB at 2,000 steps; 4,000 steps ≤ 2.2× the time and bytes of 2,000)";

const REPEAT = 3;
const measure = (steps: number) => compareWithRaw(loopWorkflow(steps), 1, steps, "process", REPEAT);

export default async function loop(): Promise<void> {
  const small = await measure(2000);
  const large = await measure(4000);
  const row = (steps: number, { engine, raw, store }: Comparison) => [
    fmt(steps),
    `${fmt(engine.ms)} (${fmt(engine.cpuMs)})`,
    `${fmt(raw.ms)} (${fmt(raw.cpuMs)})`,
    ratios(engine, raw),
    `${kb(store.fileBytes)} (${fmt(store.fileBytes)} bytes)`,
    fmt(store.fileBytes / steps),
  ];
  table(["steps", "engine ms", "raw ms", "engine/raw", "store file", "bytes/step"], [row(2000, small), row(4000, large)]);
  console.log(
    `4,000 vs 2,000 steps: time ${ratios(large.engine, small.engine)}, bytes ${ratio(large.store.fileBytes, small.store.fileBytes)} (linear is 2×)`,
  );
  console.log(`where the bytes are at 2,000 steps: ${biggest(small.store.tables, 8)}`);
  console.log(`wall (cpu) time; fastest of ${REPEAT} tries each`);
}
