import Database from "better-sqlite3";
import { packJson } from "../../engine/store/sqlite/packed-json.js";
import { ITEM } from "./workflows.js";
import { stopwatch, type Timing } from "./harness.js";
import type { Durability } from "./sqlite.js";

/**
 * Not the engine: what the `chain` workload's writes cost if a store wrote each step as one row
 * (the state delta, and one document holding the step's events, checkpoint metadata and task)
 * beside an event index row and the run row, grouped `group` steps to a transaction as the
 * engine's group commit does, with the engine's run documents and words. It bounds what any
 * store layout can reach on this machine before the runtime adds its own cost.
 *
 * `pack`: each step's document deflated on its own (`step`), the documents of a transaction's
 * steps deflated together into one row that the steps point to (`group`), or JSON (`none`).
 */
export type FloorPacking = "step" | "group" | "none";

export function stepRowFloor(file: string, durability: Durability, runs: number, nodes: number, options: { group: number; pack: FloorPacking }): Timing & { bytesPerStep: number } {
  const db = new Database(file);
  try {
    db.pragma("journal_mode = WAL");
    db.pragma(`synchronous = ${durability === "os" ? "FULL" : "NORMAL"}`);
    db.pragma("wal_autocheckpoint = 8192");
    db.exec(`
      CREATE TABLE runs (key INTEGER PRIMARY KEY, id TEXT UNIQUE, doc TEXT, status TEXT, updated_at INTEGER);
      CREATE INDEX runs_by_status ON runs (status, updated_at, id);
      CREATE INDEX runs_by_update ON runs (updated_at, id);
      CREATE TABLE steps (run_key INTEGER, n INTEGER, delta TEXT, doc BLOB, blob INTEGER, PRIMARY KEY (run_key, n)) WITHOUT ROWID;
      CREATE TABLE blobs (id INTEGER PRIMARY KEY, data BLOB);
      CREATE TABLE events (seq INTEGER PRIMARY KEY, run_key INTEGER, n INTEGER);
      CREATE INDEX events_by_run ON events (run_key, seq);`);
    const insertRun = db.prepare("INSERT INTO runs (key, id, doc, status, updated_at) VALUES (?, ?, ?, 'running', 0)");
    const ids = Array.from({ length: runs }, (_, i) => `run-${String(i).padStart(10, "0")}`);
    ids.forEach((id, i) => insertRun.run(i + 1, id, JSON.stringify(runDocument(id))));
    const getRun = db.prepare("SELECT doc FROM runs WHERE key = ?").pluck();
    const insertStep = db.prepare("INSERT INTO steps (run_key, n, delta, doc, blob) VALUES (?, ?, ?, ?, ?)");
    const insertBlob = db.prepare("INSERT INTO blobs (data) VALUES (?)");
    const lastSeq = db.prepare("SELECT max(seq) FROM events").pluck();
    const insertEvent = db.prepare("INSERT INTO events (seq, run_key, n) VALUES (?, ?, ?)");
    const saveRun = db.prepare("UPDATE runs SET doc = ?, status = ?, updated_at = ? WHERE key = ?");
    type Step = { key: number; id: string; n: number };
    const write = db
      .transaction((steps: Step[]) => {
        const docs = steps.map(({ id, n }) => stepDocument(id, n));
        const blob = options.pack === "group" ? insertBlob.run(packJson(docs)).lastInsertRowid : null;
        for (const [i, { key, id, n }] of steps.entries()) {
          const run = JSON.parse(getRun.get(key) as string) as ReturnType<typeof runDocument>;
          if (run.fence !== 1) throw new Error("stale fence");
          const doc = options.pack === "group" ? null : options.pack === "step" ? packJson(docs[i]) : JSON.stringify(docs[i]);
          insertStep.run(key, n, JSON.stringify([["items", "append", [ITEM]], ["count", "set", n]]), doc, blob);
          insertEvent.run(((lastSeq.get() as number | null) ?? 0) + 3, key, n);
          Object.assign(run, { head: `${id}:${n}`, headN: n, step: n, eventCount: run.eventCount + 3, updatedAt: Date.now(), lastCommit: `c1.${n}` });
          saveRun.run(JSON.stringify(run), n === nodes ? "succeeded" : "running", run.updatedAt, key);
        }
      })
      .immediate;
    const stop = stopwatch();
    let group: Step[] = [];
    // Sixteen runs at a time, each a step further per round, as the engine's worker runs them.
    for (let first = 0; first < runs; first += 16) {
      for (let n = 1; n <= nodes; n++) {
        for (let i = first; i < Math.min(runs, first + 16); i++) {
          group.push({ key: i + 1, id: ids[i]!, n });
          if (group.length < options.group) continue;
          write(group);
          group = [];
        }
      }
    }
    if (group.length > 0) write(group);
    const timing = stop();
    const bytes = db.prepare("SELECT (SELECT sum(length(delta) + coalesce(length(doc), 0)) FROM steps) + (SELECT coalesce(sum(length(data)), 0) FROM blobs)").pluck().get() as number;
    return { ...timing, bytesPerStep: bytes / (runs * nodes) };
  } finally {
    db.close();
  }
}

/** A run document as the engine stores it (the fields, at their usual lengths). */
function runDocument(id: string) {
  return {
    id, workflow: "bench-chain-10", version: "7144e9c7d1b7299d", status: "running", reason: null, error: null, parentRunId: null, parentTaskId: null, forkOf: null,
    createdAt: Date.now(), updatedAt: Date.now(), startedAt: Date.now(), endedAt: null, head: `${id}:0`, headN: 0, step: 0, owner: "vm-15474-k5ed",
    leaseUntil: Date.now() + 15_000, fence: 1, wakeAt: null, waitingOn: null, breakpoints: [], interruptBefore: null, interruptAfter: null, current: ["n1"],
    pendingInterrupts: 0, recoveries: 0, eventCount: 3, barriers: {}, lastCommit: "c1.1",
  };
}

/** One step's events, checkpoint metadata and settled task, as the engine writes them. */
function stepDocument(id: string, n: number) {
  const node = `n${n}`;
  const next = `n${n + 1}`;
  return {
    actor: "worker:vm-15474-k5ed",
    time: Date.now(),
    events: [
      ["task.succeeded", { node, attempt: 1, durationMs: 0, keys: ["items", "count"] }, `:${n}:${node}`, "f4151465cbfd9f6c"],
      ["step.completed", { step: n, checkpointId: `${id}:${n}`, nodes: [node], keys: ["items", "count"], next: [next] }],
      ["task.started", { node: next, attempt: 1 }, `:${n + 1}:${next}`, "13b17bcfdec06d29"],
    ],
    checkpoint: { nodes: [node], next: [next], control: { finished: [{ node }], visits: Object.fromEntries(Array.from({ length: n }, (_, i) => [`n${i + 1}`, 1])) }, createdAt: Date.now() },
    task: { status: "succeeded", attempts: [{}], worker: "vm-15474-k5ed", startedAt: Date.now(), endedAt: Date.now() },
  };
}
