import { statSync } from "node:fs";
import Database from "better-sqlite3";
import { MemoryStore, STORE_WRITES, WorkflowRegistry, Worker, actionRegistry, openStore, storeWorkflow, type CompiledWorkflow, type Store } from "./engine.js";
import { newId } from "../../engine/ids.js";
import { fastest, scratchDir, stopwatch, type Timing } from "./harness.js";
import { readWalPages, resetWal, type WalPages } from "./wal-pages.js";
import { newRun } from "../../engine/runtime/new-run.js";

export type Durability = "process" | "os";

export interface EngineMeasure extends Timing {
  /** Store writes the engine made (run creations, claims, commits, lease renewals); SQLite may group several in one transaction. */
  writes: number;
  runIds: string[];
}

/**
 * Creates `runs` runs of `workflow` in a SQLite store at `file`, then times one in-process worker
 * executing all of them to the end. `pages`: also counts the pages the execution wrote (reading
 * the WAL, outside the time taken).
 */
export async function runOnSqlite(file: string, workflow: CompiledWorkflow, runs: number, durability: Durability, options: { pages?: boolean } = {}): Promise<EngineMeasure & { pages?: WalPages }> {
  const store = await openStore(`sqlite:${file}`, { durability });
  const side = options.pages ? new Database(file) : undefined;
  try {
    let pages: WalPages | undefined;
    const measure = await runAll(store, workflow, runs, side && { before: () => resetWal(side), after: () => (pages = readWalPages(side, file)) });
    return { ...measure, ...(pages ? { pages } : {}) };
  } finally {
    side?.close();
    await store.close();
  }
}

/** The same with the in-memory store: the runtime's own cost, without any storage. */
export async function runOnMemory(workflow: CompiledWorkflow, runs: number): Promise<EngineMeasure> {
  const store = new MemoryStore();
  try {
    return await runAll(store, workflow, runs);
  } finally {
    await store.close();
  }
}

/** `around`: called just before the worker starts and just after it is done, outside the time taken. */
async function runAll(store: Store, workflow: CompiledWorkflow, runs: number, around?: { before(): void; after(): void }): Promise<EngineMeasure> {
  await storeWorkflow(store, workflow);
  const runIds: string[] = [];
  for (let i = 0; i < runs; i++) {
    const init = newRun({ id: newId("run"), workflow, state: workflow.initialState({}), actor: "bench" });
    await store.createRun(init);
    runIds.push(init.run.id);
  }
  const counted = countTransactions(store);
  const worker = new Worker(counted.store, new WorkflowRegistry(counted.store, actionRegistry({}), [workflow]), { concurrency: 16 });
  around?.before();
  const stop = stopwatch();
  await worker.drain();
  const timing = stop();
  around?.after();
  const unfinished = (await store.listRuns({ status: ["queued", "running", "paused", "failed", "canceled"] })).runs;
  if (unfinished.length > 0) throw new Error(`bench run ${unfinished[0]!.id} ended ${unfinished[0]!.status}, not succeeded`);
  return { ...timing, writes: runs + counted.count(), runIds };
}

export interface Comparison {
  engine: EngineMeasure;
  raw: Timing;
  store: Footprint;
  /** Row bytes the engine stored per step: what the raw baseline inserts per transaction. */
  bytesPerStep: number;
  /** With `pages`: the pages the engine's execution wrote (counted in its untimed first run). */
  pages?: WalPages;
}

/**
 * The engine executing `runs` runs of `workflow` (`steps` super-steps in all) on a fresh SQLite
 * file, and the raw baseline writing the same bytes in one transaction per step; each the fastest
 * of `repeat` tries after `warmUp` untimed runs of the engine (1 by default). Many short runs
 * (`chain`'s 200 runs of 10 steps) need more: V8 is still optimising the engine through their
 * second and third drains in a process (10-40% slower than the fourth and later), where one run
 * of thousands of steps is optimised within its first; there, more runs first only leave the
 * collector more to do in the runs timed (`loop`'s 4,000 steps 5% slower after three).
 */
export async function compareWithRaw(
  workflow: CompiledWorkflow,
  runs: number,
  steps: number,
  durability: Durability,
  repeat: number,
  options: { pages?: boolean; warmUp?: number } = {},
): Promise<Comparison> {
  const scratch = scratchDir();
  try {
    // Untimed first, as the raw baseline's first transactions are: the engine's code is compiled
    // and optimised by the time a figure is taken, which is what a worker that runs for hours
    // pays. The pages the first run writes are counted, when asked (the runs after write about
    // as many).
    const { pages } = await runOnSqlite(scratch.file("warm-up.db"), workflow, runs, durability, options);
    for (let i = 1; i < (options.warmUp ?? 1); i++) await runOnSqlite(scratch.file(`warm-up-${i}.db`), workflow, runs, durability);
    let store: Footprint | undefined;
    const engine = await fastest(repeat, async () => {
      const file = scratch.file(`engine-${Math.random()}.db`);
      const measure = await runOnSqlite(file, workflow, runs, durability);
      store = footprint(file);
      return measure;
    });
    const bytesPerStep = store!.rowBytes / steps;
    const raw = await fastest(repeat, () => rawInsertBaseline(scratch.file(`raw-${Math.random()}.db`), durability, steps, bytesPerStep));
    return { engine, raw, store: store!, bytesPerStep, ...(pages ? { pages } : {}) };
  } finally {
    scratch.cleanup();
  }
}

/**
 * Counts the store's writes by giving `store` its own wrapper of each write method (a Proxy in
 * front of it would sit in every call the engine makes, the count's cost in the engine's figure).
 */
function countTransactions(store: Store): { store: Store; count(): number } {
  let n = 0;
  const methods = store as unknown as Record<string, (...args: unknown[]) => unknown>;
  for (const key of STORE_WRITES) {
    const method = methods[key]!.bind(store);
    methods[key] = (...args: unknown[]) => {
      n++;
      return method(...args);
    };
  }
  return { store, count: () => n };
}

/**
 * The physical limit: raw better-sqlite3, same journal and sync settings, one transaction per
 * step inserting `bytes` bytes.
 */
export function rawInsertBaseline(file: string, durability: Durability, steps: number, bytes: number): Timing {
  const db = new Database(file);
  try {
    db.pragma("journal_mode = WAL");
    db.pragma(`synchronous = ${durability === "os" ? "FULL" : "NORMAL"}`);
    db.exec("CREATE TABLE steps (id INTEGER PRIMARY KEY, run TEXT NOT NULL, data BLOB NOT NULL)");
    const insert = db.prepare("INSERT INTO steps (run, data) VALUES (?, ?)");
    const step = db.transaction((data: Buffer) => insert.run("run-0123456789", data)).immediate;
    const data = Buffer.alloc(Math.max(1, Math.round(bytes)), 120);
    for (let i = 0; i < Math.min(100, steps); i++) step(data);
    const stop = stopwatch();
    for (let i = 0; i < steps; i++) step(data);
    return stop();
  } finally {
    db.close();
  }
}

export interface Footprint {
  /** The store file after its WAL was checkpointed into it. */
  fileBytes: number;
  /** Bytes of row contents in tables (without indexes): what a step "writes". */
  rowBytes: number;
  /** Pages per table and index, largest first. */
  tables: { name: string; bytes: number }[];
}

/** Where a store file's bytes are (SQLite's dbstat), after folding the WAL into the file. */
export function footprint(file: string): Footprint {
  const db = new Database(file);
  try {
    db.pragma("wal_checkpoint(TRUNCATE)");
    const rows = db
      .prepare(
        `SELECT d.name AS name, sum(d.pgsize) AS bytes, sum(d.payload) AS payload, s.type AS type
         FROM dbstat d JOIN sqlite_schema s ON s.name = d.name GROUP BY d.name ORDER BY bytes DESC`,
      )
      .all() as { name: string; bytes: number; payload: number; type: string }[];
    return {
      fileBytes: statSync(file).size,
      rowBytes: rows.filter((r) => r.type === "table").reduce((sum, r) => sum + r.payload, 0),
      tables: rows.map((r) => ({ name: r.name, bytes: r.bytes })),
    };
  } finally {
    db.close();
  }
}

/** The tables and indexes holding most of the bytes, as `name size` pairs. */
export function biggest(tables: Footprint["tables"], count = 6): string {
  return tables
    .slice(0, count)
    .map((t) => `${t.name} ${kb(t.bytes)}`)
    .join(", ");
}

/** Binary units, named as such (a target of "2 MB" is met by both readings only below 2,000,000 bytes). */
export function kb(bytes: number): string {
  return bytes >= 1024 * 1024 ? `${(bytes / 1024 / 1024).toFixed(2)} MiB` : `${Math.round(bytes / 1024)} KiB`;
}
