import Database from "better-sqlite3";
import { openStore, readState } from "../support/engine.js";
import { fmt, median, percentile, ratio, scratchDir, table } from "../support/harness.js";
import { runOnSqlite } from "../support/sqlite.js";
import { loopWorkflow } from "../support/workflows.js";

export const description = "state at a random checkpoint of a 10,000-step run appending 200 bytes per step (target: ≤ 5 ms median)";

const STEPS = 10_000;
const SAMPLES = 200;

export default async function read(): Promise<void> {
  const scratch = scratchDir();
  try {
    const file = scratch.file("read.db");
    const { runIds } = await runOnSqlite(file, loopWorkflow(STEPS), 1, "process");
    const runId = runIds[0]!;
    const ns = Array.from({ length: SAMPLES }, () => 1 + Math.floor(Math.random() * STEPS));

    const store = await openStore(`sqlite:${file}`);
    const states = new Map<number, string>();
    const engineMs: number[] = [];
    try {
      for (const n of ns) {
        const started = performance.now();
        const state = await readState(store, runId, n);
        engineMs.push(performance.now() - started);
        states.set(n, JSON.stringify(state));
      }
    } finally {
      await store.close();
    }

    // The physical limit: the same state stored whole in one row, read back and parsed.
    const raw = new Database(scratch.file("raw.db"));
    const rawMs: number[] = [];
    try {
      raw.exec("CREATE TABLE states (n INTEGER PRIMARY KEY, data TEXT NOT NULL)");
      const insert = raw.prepare("INSERT OR REPLACE INTO states (n, data) VALUES (?, ?)");
      for (const [n, data] of states) insert.run(n, data);
      const select = raw.prepare("SELECT data FROM states WHERE n = ?").pluck();
      for (const n of ns) {
        const started = performance.now();
        JSON.parse(select.get(n) as string);
        rawMs.push(performance.now() - started);
      }
    } finally {
      raw.close();
    }
    const meanKb = [...states.values()].reduce((sum, s) => sum + s.length, 0) / states.size / 1024;
    table(
      ["", "median ms", "p95 ms", "max ms"],
      [
        ["engine readState", median(engineMs), percentile(engineMs, 0.95), Math.max(...engineMs)],
        ["raw: one row, JSON.parse", median(rawMs), percentile(rawMs, 0.95), Math.max(...rawMs)],
      ],
    );
    console.log(`median engine/raw ${ratio(median(engineMs), median(rawMs))}; mean state read ${fmt(meanKb)} KB`);
  } finally {
    scratch.cleanup();
  }
}
