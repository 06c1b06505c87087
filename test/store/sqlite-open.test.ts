import { createHash } from "node:crypto";
import { chmodSync, chownSync, existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import Database from "better-sqlite3";
import { afterAll, describe, expect, it } from "vitest";
import { z } from "zod";
import { SqliteStore, StoreError, Worker, WorkflowRegistry, actionRegistry, createEngine, openStore, readState, workflow, type EventRecord, type Store } from "../../engine/index.js";
import { traceIdOf } from "../../engine/ids.js";
import { newRun } from "../../engine/runtime/new-run.js";
import { batchDocs } from "../../engine/store/sqlite/event-rows.js";
import { GroupDocs } from "../../engine/store/sqlite/group-docs.js";
import { groupReference, packJson, packText, readDocReference, readGroupReference, unpackJson } from "../../engine/store/sqlite/packed-json.js";
import type { CheckpointRow } from "../../engine/store/sqlite/rows.js";
import { Statements } from "../../engine/store/sqlite/statements.js";
import { APPLICATION_ID, MIGRATIONS, READABLE_FROM_VERSION, SCHEMA_VERSION, TABLES } from "../../engine/store/sqlite/schema.js";
import type { TaskRow } from "../../engine/store/sqlite/task-rows.js";
import { kill, spawnChild } from "../support/processes.js";

const dir = mkdtempSync(join(tmpdir(), "pitwall-open-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
let files = 0;
const fresh = (name = "store") => join(dir, `${name}-${++files}.db`);

/** The one-line StoreError a promise rejects with. */
async function storeError(promise: Promise<unknown>, file: string): Promise<string> {
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(StoreError);
  const message = (error as Error).message;
  expect(message).toContain(file);
  expect(message).not.toContain("\n");
  return message;
}

/** A file's bytes and modification time, and the files beside it: to check that nothing was written. */
function fingerprint(file: string) {
  const folder = join(file, "..");
  return {
    sha256: createHash("sha256").update(readFileSync(file)).digest("hex"),
    mtimeMs: statSync(file).mtimeMs,
    siblings: readdirSync(folder).filter((f) => f.startsWith(file.slice(folder.length + 1))).sort(),
  };
}

async function storeWithRuns(file: string, runs = 3, workflowName = "wf"): Promise<void> {
  const store = await openStore(`sqlite:${file}`);
  for (let i = 0; i < runs; i++) {
    await store.createRun(newRun({ id: `run-${i}`, workflow: { name: workflowName, version: "v1" }, state: { text: "x".repeat(3000) }, actor: "test" }));
  }
  await store.close();
}

/** An events row's document as JSON text, wherever it is kept: in the row, or in its group's blob. */
function eventsDocument(db: Database.Database, stored: string | Buffer): string {
  return new GroupDocs(new Statements(db)).text(stored);
}

/** A checkpoint's or task's document as a store keeps it: in its row, or with its commit's events. */
function storedDocument(db: Database.Database, stored: string | Buffer): unknown {
  const reference = readDocReference(stored);
  if (!reference) return unpackJson(stored);
  return batchDocs(eventsDocument(db, db.prepare("SELECT events FROM events WHERE seq = ?").pluck().get(reference.seq) as string | Buffer))[reference.index];
}

/** What a store holds of a run: its record, checkpoints (with their states), tasks and events. */
async function runHistory(store: Store, id: string) {
  const checkpoints = await store.listCheckpoints(id);
  return {
    run: await store.getRun(id),
    checkpoints,
    summaries: await store.listCheckpointSummaries(id),
    states: await Promise.all(checkpoints.map((c) => readState(store, id, c.n))),
    tasks: await store.listTasks(id),
    events: await store.readEvents({ runId: id }),
  };
}

/** A store file's schema version and integrity, with what `more` reads of its layout. */
function storeLayout(file: string, more: (db: Database.Database) => Record<string, unknown>): Record<string, unknown> {
  const db = new Database(file, { readonly: true });
  try {
    return { version: db.pragma("user_version", { simple: true }), ...more(db), integrity: db.pragma("integrity_check", { simple: true }) };
  } finally {
    db.close();
  }
}

/** Another process holding the store's lock: `BEGIN IMMEDIATE` (writers wait) or an exclusive lock (everyone waits). */
async function lockHolder(file: string, lock: "write" | "exclusive") {
  const take =
    lock === "write"
      ? `db.exec("BEGIN IMMEDIATE"); db.prepare("DELETE FROM meta WHERE key = 'nothing'").run();`
      : `db.pragma("locking_mode = EXCLUSIVE"); db.exec("BEGIN EXCLUSIVE");`;
  const holder = spawnChild(process.execPath, ["-e", `const db = new (require("better-sqlite3"))(${JSON.stringify(file)}); ${take} console.log('{"locked":true}'); setTimeout(() => {}, 60000);`]);
  await holder.line((l) => l.locked === true);
  return holder;
}

/** Uses a store: whatever is wrong with the file shows up by now. */
async function openAndUse(file: string, options: { busyTimeoutMs?: number } = {}): Promise<void> {
  const store = await openStore(`sqlite:${file}`, options);
  try {
    await store.listRuns();
    await store.readEvents();
  } finally {
    await store.close();
  }
}

describe("SQLite store files", () => {
  it("creates the store private to its user (0600), with its -wal and -shm files", async () => {
    const file = fresh();
    const store = await openStore(`sqlite:${file}`);
    try {
      await store.createRun(newRun({ id: "run-1", workflow: { name: "wf", version: "v1" }, state: {}, actor: "test" }));
      for (const f of [file, `${file}-wal`, `${file}-shm`]) expect((statSync(f).mode & 0o777).toString(8), f).toBe("600");
    } finally {
      await store.close();
    }
  });

  it("applies the durability setting: process is WAL + synchronous=NORMAL, os is WAL + synchronous=FULL", async () => {
    const settings = async (options: Parameters<typeof openStore>[1]) => {
      const store = (await openStore(`sqlite:${fresh()}`, options)) as SqliteStore;
      try {
        return store.settings();
      } finally {
        await store.close();
      }
    };
    expect(await settings({})).toEqual({ journalMode: "wal", synchronous: "NORMAL", busyTimeoutMs: 5000 });
    expect(await settings({ durability: "process" })).toMatchObject({ journalMode: "wal", synchronous: "NORMAL" });
    expect(await settings({ durability: "os", busyTimeoutMs: 250 })).toEqual({ journalMode: "wal", synchronous: "FULL", busyTimeoutMs: 250 });
  });

  it("understands sqlite: URLs with relative and absolute paths, and bare paths", async () => {
    const folder = join(dir, "urls");
    mkdirSync(folder);
    const cwd = process.cwd();
    process.chdir(folder);
    const opened: Store[] = [];
    try {
      for (const url of ["sqlite:./a.db", "sqlite:b.db", "c.db", `sqlite:${join(folder, "d.db")}`, `sqlite://${join(folder, "e.db")}`, join(folder, "f.db")]) {
        const store = await openStore(url);
        opened.push(store);
        expect(store.description).toMatch(/^sqlite:/);
      }
      expect(readdirSync(folder).filter((f) => f.endsWith(".db")).sort()).toEqual(["a.db", "b.db", "c.db", "d.db", "e.db", "f.db"]);
    } finally {
      process.chdir(cwd);
      for (const store of opened) await store.close();
    }
  });

  it("refuses bad URLs and options in one line", async () => {
    await expect(openStore("ftp://host/x")).rejects.toThrow(/^unsupported store URL ftp:\/\/host\/x: use memory:, sqlite:<file> or redis:\/\/host:port$/);
    await expect(openStore("sqlite:")).rejects.toThrow(/names no file/);
    const file = fresh();
    await expect(openStore(`sqlite:${file}`, { durability: "disk" as never })).rejects.toThrow(/unknown durability "disk"/);
    const missing = join(dir, "no-such-folder", "x.db");
    expect(await storeError(openStore(`sqlite:${missing}`), missing)).toMatch(/folder .* does not exist/);
    expect(existsSync(file)).toBe(false);
  });
});

describe("SQLite schema migrations", () => {
  /** A store of schema version 1 holding the rows of `source` (a current store) and its `events`. */
  function versionOneCopy(source: string, events: readonly EventRecord[]): string {
    const file = fresh("v1");
    const db = new Database(file);
    db.pragma("journal_mode = WAL");
    db.exec(MIGRATIONS[0]!);
    db.pragma(`application_id = ${APPLICATION_ID}`);
    db.pragma("user_version = 1");
    db.exec(`ATTACH DATABASE '${source}' AS src`);
    // Version 1 named a row's run by its id where later versions keep the run's key, and held
    // documents as JSON text only.
    const source_ = new Database(source, { readonly: true });
    const text = (stored: string | Buffer) => JSON.stringify(storedDocument(source_, stored));
    db.exec("INSERT INTO runs (id, doc) SELECT id, doc FROM src.runs");
    const checkpoints = db.prepare("SELECT r.id AS run_id, c.* FROM src.checkpoints c JOIN src.runs r ON r.key = c.run_key").all() as (CheckpointRow & { meta: string | Buffer })[];
    const insertCheckpoint = db.prepare("INSERT INTO checkpoints (run_id, n, snapshot_n, bytes, meta, delta, snapshot) VALUES (?, ?, ?, ?, ?, ?, ?)");
    for (const c of checkpoints) insertCheckpoint.run(c.run_id, c.n, c.snapshot_n, c.bytes, text(c.meta), c.delta, c.snapshot);
    const tasks = db.prepare("SELECT r.id AS run_id, t.* FROM src.tasks t JOIN src.runs r ON r.key = t.run_key").all() as TaskRow[];
    const insertTask = db.prepare("INSERT INTO tasks (run_id, step, id, created_at, doc) VALUES (?, ?, ?, ?, ?)");
    for (const t of tasks) insertTask.run(t.run_id, t.step, t.id, t.created_at, text(t.doc));
    for (const table of TABLES.filter((t) => !["runs", "checkpoints", "tasks", "events"].includes(t))) {
      db.exec(`INSERT INTO ${table} SELECT * FROM src.${table} WHERE true ON CONFLICT DO NOTHING`);
    }
    db.exec("DETACH DATABASE src");
    source_.close();
    // Version 1 kept one row per event, with a null trace id for the run's own.
    const insert = db.prepare(`INSERT INTO events (seq, run_id, run_seq, task_id, trace_id, span_id, type, actor, time, payload) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`);
    for (const e of events) insert.run(e.seq, e.runId, e.runSeq, e.taskId, e.traceId === traceIdOf(e.runId) ? null : e.traceId, e.spanId, e.type, e.actor, e.time, JSON.stringify(e.payload));
    db.close();
    return file;
  }

  it("brings a version 1 store up to date on open: its runs keep their records and are listed, counted and claimed", async () => {
    const source = fresh("source");
    await storeWithRuns(source, 3);
    const before = await openStore(`sqlite:${source}`);
    // And one run that has finished, with tasks and checkpoints of several steps.
    const wf = workflow("two-steps", { state: z.object({ n: z.number().default(0) }) })
      .node("one", () => ({ n: 1 }), { next: "two" })
      .node("two", (s) => ({ n: s.n + 1 }))
      .compile();
    const engine = createEngine({ store: before, workflows: [wf] });
    const done = await engine.start(wf, {});
    expect((await done.wait({ timeoutMs: 10_000 })).status).toBe("succeeded");
    await engine.worker!.stop();
    const events = await before.readEvents();
    const runIds = ["run-0", "run-1", "run-2", done.id];
    const history = async (store: Store) => Promise.all(runIds.map(async (id) => ({ checkpoints: await store.listCheckpoints(id), tasks: await store.listTasks(id) })));
    const written = await history(before);
    await before.close();
    expect(written.at(-1)!.tasks).toHaveLength(2);
    const file = versionOneCopy(source, events);

    const store = await openStore(`sqlite:${file}`);
    try {
      expect(await store.readEvents()).toEqual(events);
      expect(await history(store)).toEqual(written);
      expect((await store.countRuns()).queued).toBe(3);
      const { runs } = await store.listRuns({ status: "queued" });
      expect(runs.map((r) => r.id).sort()).toEqual(["run-0", "run-1", "run-2"]);
      const claim = await store.claimRun({ owner: "w1", leaseMs: 1000 });
      expect(claim?.run.status).toBe("running");
      expect((await store.listRuns({ status: "running" })).runs.map((r) => r.id)).toEqual([claim!.run.id]);
    } finally {
      await store.close();
    }
    const raw = new Database(file, { readonly: true });
    expect(raw.pragma("user_version", { simple: true })).toBe(SCHEMA_VERSION);
    raw.close();
  });

  it("reads a version 3 store, whose documents are packed each in its own row, and goes on writing it", async () => {
    const wf = workflow("fan", { state: z.object({ n: z.number().default(0) }), reducers: { n: (a: unknown, b: unknown) => (a as number) + (b as number) } })
      .node("split", () => ({ n: 1 }), { next: ["a", "b"] })
      .node("a", () => ({ n: 10 }), { next: "join" })
      .node("b", () => ({ n: 100 }), { next: "join" })
      .node("join", () => ({ n: 1000 }), { waitFor: ["a", "b"] })
      .compile();
    const file = fresh("v3");
    const before = await openStore(`sqlite:${file}`);
    const engine = createEngine({ store: before, workflows: [wf] });
    const first = await engine.start(wf, {});
    expect((await first.wait({ timeoutMs: 10_000 })).status).toBe("succeeded");
    await engine.worker!.stop();
    const history = async (store: Store, id: string) => ({ checkpoints: await store.listCheckpoints(id), tasks: await store.listTasks(id), events: await store.readEvents({ runId: id }) });
    const written = await history(before, first.id);
    await before.close();
    // As version 3 wrote them: each document packed in its own row, none with the events.
    const raw = new Database(file);
    const ownRow = (stored: string | Buffer) => packJson(storedDocument(raw, stored));
    let references = 0;
    const rewrite = (select: string, update: string) => {
      for (const row of raw.prepare(select).all() as { stored: string | Buffer; k1: number; k2: number; k3?: string }[]) {
        if (readDocReference(row.stored)) references++;
        raw.prepare(update).run(ownRow(row.stored), row.k1, row.k2, ...(row.k3 === undefined ? [] : [row.k3]));
      }
    };
    rewrite("SELECT meta AS stored, run_key AS k1, n AS k2 FROM checkpoints", "UPDATE checkpoints SET meta = ? WHERE run_key = ? AND n = ?");
    rewrite("SELECT doc AS stored, run_key AS k1, step AS k2, id AS k3 FROM tasks", "UPDATE tasks SET doc = ? WHERE run_key = ? AND step = ? AND id = ?");
    // Four checkpoints (the first and three steps') and four settled tasks.
    expect(references).toBe(8);
    const batches = raw.prepare("SELECT seq, events FROM events").all() as { seq: number; events: string | Buffer }[];
    for (const { seq, events } of batches) {
      const { docs: _docs, ...batch } = JSON.parse(eventsDocument(raw, events)) as { docs?: unknown[] };
      raw.prepare("UPDATE events SET events = ? WHERE seq = ?").run(packJson(batch), seq);
    }
    raw.pragma("user_version = 3");
    raw.close();

    const store = await openStore(`sqlite:${file}`);
    try {
      expect(await history(store, first.id)).toEqual(written);
      const again = createEngine({ store, workflows: [wf] });
      const second = await again.start(wf, {});
      const ended = await second.wait({ timeoutMs: 10_000 });
      await again.worker!.stop();
      expect(ended.status).toBe("succeeded");
      expect(await second.state()).toEqual({ n: 1111 });
      expect((await store.listTasks(second.id)).map((t) => t.status)).toEqual(["succeeded", "succeeded", "succeeded", "succeeded"]);
    } finally {
      await store.close();
    }
  });

  it("brings a version 5 store, whose checkpoints are clustered by run, up to date: its history and states read as before, and it goes on writing", async () => {
    const wf = workflow("count", { state: z.object({ n: z.number().default(0), log: z.array(z.string()).default([]) }), reducers: { log: (a: unknown, b: unknown) => [...(a as string[]), ...(b as string[])] } })
      .node("one", (s) => ({ n: s.n + 1, log: ["one"] }), { next: "two" })
      .node("two", (s) => ({ n: s.n + 10, log: ["two"] }), { next: "three" })
      .node("three", (s) => ({ n: s.n + 100, log: ["three"] }))
      .compile();
    const file = fresh("v5");
    const before = await openStore(`sqlite:${file}`);
    const engine = createEngine({ store: before, workflows: [wf] });
    const runs = [await engine.start(wf, {}), await engine.start(wf, { n: 5 })];
    for (const run of runs) expect((await run.wait({ timeoutMs: 10_000 })).status).toBe("succeeded");
    await engine.worker!.stop();
    const history = async (store: Store) => Promise.all(runs.map(async ({ id }) => ({ ...(await runHistory(store, id)), storage: await store.runStorage(id) })));
    const written = await history(before);
    await before.close();
    expect(written.map((h) => h.checkpoints.length)).toEqual([4, 4]);
    // As version 5 kept them: clustered by run and number, without a row id.
    const raw = new Database(file);
    raw.exec(`
      CREATE TABLE checkpoints_v5 (run_key INTEGER NOT NULL, n INTEGER NOT NULL, snapshot_n INTEGER NOT NULL, bytes INTEGER NOT NULL,
        meta BLOB NOT NULL, delta TEXT NOT NULL, snapshot TEXT, PRIMARY KEY (run_key, n)) WITHOUT ROWID;
      INSERT INTO checkpoints_v5 SELECT run_key, n, snapshot_n, bytes, meta, delta, snapshot FROM checkpoints;
      DROP TABLE checkpoints;
      ALTER TABLE checkpoints_v5 RENAME TO checkpoints;`);
    raw.pragma("user_version = 5");
    raw.close();
    const layout = () =>
      storeLayout(file, (db) => ({
        sql: (db.prepare("SELECT sql FROM sqlite_schema WHERE name = 'checkpoints'").pluck().get() as string).includes("WITHOUT ROWID") ? "clustered" : "in writing order",
      }));
    expect(layout()).toEqual({ version: 5, sql: "clustered", integrity: "ok" });

    // Read-only, it is read as it is.
    const reader = await openStore(`sqlite:${file}`, { readOnly: true });
    try {
      expect(await history(reader)).toEqual(written);
    } finally {
      await reader.close();
    }
    expect(layout()).toEqual({ version: 5, sql: "clustered", integrity: "ok" });

    const store = await openStore(`sqlite:${file}`);
    try {
      expect(await history(store)).toEqual(written);
      const again = createEngine({ store, workflows: [wf] });
      const third = await again.start(wf, { n: 1000 });
      const ended = await third.wait({ timeoutMs: 10_000 });
      await again.worker!.stop();
      expect(ended.status).toBe("succeeded");
      expect(await third.state()).toEqual({ n: 1111, log: ["one", "two", "three"] });
      expect(await readState(store, third.id, 2)).toEqual({ n: 1011, log: ["one", "two"] });
    } finally {
      await store.close();
    }
    expect(layout()).toEqual({ version: SCHEMA_VERSION, sql: "in writing order", integrity: "ok" });
  });

  it("brings a version 6 store, whose events rows hold their documents, up to date: everything reads back the same, and new commits are deflated together", async () => {
    const wf = workflow("fan6", { state: z.object({ n: z.number().default(0), log: z.array(z.string()).default([]) }), reducers: { n: (a: unknown, b: unknown) => (a as number) + (b as number), log: "append" } })
      .node("split", () => ({ n: 1, log: ["split"] }), { next: ["a", "b"] })
      .node("a", () => ({ n: 10, log: ["a"] }), { next: "join" })
      .node("b", () => ({ n: 100, log: ["b"] }), { next: "join" })
      .node("join", () => ({ n: 1000, log: ["join"] }), { waitFor: ["a", "b"] })
      .compile();
    const file = fresh("v6");
    const before = await openStore(`sqlite:${file}`);
    const engine = createEngine({ store: before, workflows: [wf] });
    // Started together, their commits share group transactions (and blobs).
    const runs = await Promise.all([engine.start(wf, {}), engine.start(wf, { n: 5 }), engine.start(wf, { n: 7 })]);
    for (const run of runs) expect((await run.wait({ timeoutMs: 10_000 })).status).toBe("succeeded");
    await engine.worker!.stop();
    const history = async (store: Store) => Promise.all(runs.map(async ({ id }) => ({ ...(await runHistory(store, id)), task: await store.getTask(`${id}:1:split`) })));
    const written = await history(before);
    const allEvents = await before.readEvents();
    await before.close();
    expect(written[0]!.task?.node).toBe("split");
    // As version 6 kept them: each events row holding its commit's document, packed on its own.
    const raw = new Database(file);
    const shared = raw.prepare("SELECT count(*) FROM blobs WHERE refs > 1").pluck().get() as number;
    expect(shared).toBeGreaterThan(0);
    for (const { seq, events } of raw.prepare("SELECT seq, events FROM events").all() as { seq: number; events: Buffer }[]) {
      raw.prepare("UPDATE events SET events = ? WHERE seq = ?").run(packText(eventsDocument(raw, events)), seq);
    }
    raw.exec("DROP TABLE blobs");
    raw.pragma("user_version = 6");
    raw.close();
    const layout = () => storeLayout(file, (db) => ({ blobs: db.prepare("SELECT count(*) FROM sqlite_schema WHERE name = 'blobs'").pluck().get() }));
    expect(layout()).toEqual({ version: 6, blobs: 0, integrity: "ok" });

    // Read-only, it is read as it is.
    const reader = await openStore(`sqlite:${file}`, { readOnly: true });
    try {
      expect(await history(reader)).toEqual(written);
      expect(await reader.readEvents()).toEqual(allEvents);
    } finally {
      await reader.close();
    }
    expect(layout()).toEqual({ version: 6, blobs: 0, integrity: "ok" });

    const store = await openStore(`sqlite:${file}`);
    try {
      expect(layout()).toEqual({ version: SCHEMA_VERSION, blobs: 1, integrity: "ok" });
      expect(await history(store)).toEqual(written);
      expect(await store.readEvents()).toEqual(allEvents);
      const again = createEngine({ store, workflows: [wf] });
      const more = await Promise.all([again.start(wf, { n: 1 }), again.start(wf, { n: 2 })]);
      for (const run of more) expect((await run.wait({ timeoutMs: 10_000 })).status).toBe("succeeded");
      await again.worker!.stop();
      expect(await more[0]!.state()).toEqual({ n: 1112, log: ["split", "a", "b", "join"] });
      expect(await readState(store, more[1]!.id, 1)).toEqual({ n: 3, log: ["split"] });
      expect((await store.listTasks(more[1]!.id)).map((t) => t.status)).toEqual(["succeeded", "succeeded", "succeeded", "succeeded"]);
      // The events before and after the upgrade read as one log, numbered on.
      const after = await store.readEvents();
      expect(after.slice(0, allEvents.length)).toEqual(allEvents);
      expect(after.slice(allEvents.length).every((e, i) => e.seq > allEvents.at(-1)!.seq && (i === 0 || e.seq > after[allEvents.length + i - 1]!.seq))).toBe(true);
      // A run written before the upgrade is deleted whole, beside those written after.
      const storage = await store.runStorage(runs[0]!.id);
      expect(storage.events).toBeGreaterThan(0);
      expect(await store.deleteRun(runs[0]!.id)).toEqual([runs[0]!.id]);
      expect(await store.deleteRun(more[0]!.id)).toEqual([more[0]!.id]);
      expect(await history(store).then((h) => h.slice(1))).toEqual(written.slice(1));
      expect((await store.readEvents({ runId: more[1]!.id })).map((e) => e.type)).toContain("run.succeeded");
    } finally {
      await store.close();
    }
    expect(layout()).toEqual({ version: SCHEMA_VERSION, blobs: 1, integrity: "ok" });
  });

  it("reads tasks, events and checkpoints in the fuller encodings earlier releases wrote", async () => {
    const file = fresh("old-rows");
    await storeWithRuns(file, 1);
    const db = new Database(file);
    db.prepare("INSERT INTO tasks (run_key, step, id, created_at, doc) VALUES ((SELECT key FROM runs WHERE id = 'run-0'), 1, 'run-0:1:work', 9, ?)").run(
      '{"status":"succeeded","attempts":[{"n":1,"worker":"w1","startedAt":10,"endedAt":12,"outcome":"succeeded"}],"worker":"w1","startedAt":10,"endedAt":12,"node":"work"}',
    );
    db.prepare("INSERT INTO checkpoints (run_key, n, snapshot_n, bytes, meta, delta, snapshot) VALUES ((SELECT key FROM runs WHERE id = 'run-0'), 1, 0, 20, ?, ?, NULL)").run(
      '{"source":"loop","actor":"worker:w1","nodes":["work"],"next":["work"],"control":{"finished":[{"node":"work"}],"barriers":{},"visits":{"work":1}},"createdAt":12}',
      '[["count","set",1]]',
    );
    const last = db.prepare("SELECT max(seq) AS seq FROM events").get() as { seq: number };
    db.prepare("INSERT INTO events (seq, run_key, run_seq, count, events) VALUES (?, (SELECT key FROM runs WHERE id = 'run-0'), 2, 2, ?)").run(
      last.seq + 2,
      '[["task.succeeded","run-0:1:work",null,"span-1","worker:w1",12,{"node":"work","attempt":1,"durationMs":2,"keys":["count"]}],["step.completed",null,"trace-x",null,"worker:w2",13,{"step":1}]]',
    );
    db.close();

    const store = await openStore(`sqlite:${file}`);
    try {
      expect(await store.getTask("run-0:1:work")).toMatchObject({
        node: "work",
        status: "succeeded",
        worker: "w1",
        attempts: [{ n: 1, worker: "w1", startedAt: 10, endedAt: 12, outcome: "succeeded" }],
      });
      expect(await store.getCheckpoint("run-0:1")).toMatchObject({ source: "loop", parentId: "run-0:0", step: 1, control: { finished: [{ node: "work" }], barriers: {}, visits: { work: 1 } } });
      const events = (await store.readEvents({ runId: "run-0" })).slice(-2);
      expect(events).toEqual([
        { seq: last.seq + 1, runId: "run-0", runSeq: 2, taskId: "run-0:1:work", traceId: traceIdOf("run-0"), spanId: "span-1", type: "task.succeeded", actor: "worker:w1", time: 12, payload: { node: "work", attempt: 1, durationMs: 2, keys: ["count"] } },
        { seq: last.seq + 2, runId: "run-0", runSeq: 3, taskId: null, traceId: "trace-x", spanId: null, type: "step.completed", actor: "worker:w2", time: 13, payload: { step: 1 } },
      ]);
    } finally {
      await store.close();
    }
  });
});

describe("bad SQLite stores: one line naming the file, nothing written", () => {
  it("refuses a file that is not a database", async () => {
    const file = fresh("text");
    writeFileSync(file, "these are my notes, not a database\n".repeat(200), { mode: 0o600 });
    const before = fingerprint(file);
    expect(await storeError(openAndUse(file), file)).toMatch(/is not a pitwall store \(not an SQLite database/);
    expect(fingerprint(file)).toEqual(before);
  });

  it("refuses another application's SQLite database", async () => {
    const file = fresh("other");
    const other = new Database(file);
    other.exec("CREATE TABLE contacts (name TEXT); INSERT INTO contacts VALUES ('ann')");
    other.close();
    const before = fingerprint(file);
    expect(await storeError(openAndUse(file), file)).toMatch(/is not a pitwall store \(it is an SQLite database of another application\)/);
    expect(fingerprint(file)).toEqual(before);
  });

  it("refuses a store written by a newer pitwall, without modifying it", async () => {
    const file = fresh("newer");
    await storeWithRuns(file);
    const raw = new Database(file);
    raw.pragma(`user_version = ${SCHEMA_VERSION + 1}`);
    raw.close();
    const before = fingerprint(file);
    const message = await storeError(openAndUse(file), file);
    expect(message).toMatch(new RegExp(`written by a newer pitwall \\(schema version ${SCHEMA_VERSION + 1}; this pitwall knows up to ${SCHEMA_VERSION}\\)`));
    expect(fingerprint(file)).toEqual(before);
  });

  it("reports a corrupt file, whether the damage is found when opening or later", async () => {
    /** A store of 20 runs with the page `pageOf` finds overwritten with garbage. */
    const damagedStore = async (name: string, pageOf: string) => {
      const file = fresh(name);
      await storeWithRuns(file, 20);
      const raw = new Database(file);
      const page = raw.prepare(pageOf).pluck().get() as number;
      const pageSize = raw.pragma("page_size", { simple: true }) as number;
      raw.close();
      const bytes = readFileSync(file);
      bytes.fill(0xa5, (page - 1) * pageSize, page * pageSize);
      writeFileSync(file, bytes);
      return file;
    };
    const rootOf = (name: string) => `SELECT rootpage FROM sqlite_schema WHERE name = '${name}'`;
    const file = await damagedStore("corrupt", rootOf("runs"));
    const before = fingerprint(file);
    expect(await storeError(openAndUse(file), file)).toMatch(/is corrupt \(.+\); restore it from a backup/);
    expect(fingerprint(file)).toEqual(before);

    // A worker on a store whose claim index is damaged stops (asking again will not mend the
    // file) instead of polling on.
    const damaged = await openStore(`sqlite:${await damagedStore("corrupt-claims", rootOf("runs_by_status"))}`);
    try {
      const stopped = await new Promise<StoreError>((resolve, reject) => {
        const wf = workflow("wf", { state: z.object({}) }).node("a", () => ({}), { next: "END" }).compile();
        const w = new Worker(damaged, new WorkflowRegistry(damaged, actionRegistry({}), [wf]), { pollMs: 20, onStoreGone: (error) => void w.stop().then(() => resolve(error)) });
        w.start();
        setTimeout(() => reject(new Error("the worker did not stop")), 5_000);
      });
      expect([stopped.damaged, stopped.message]).toEqual([true, expect.stringMatching(/is corrupt/)]);
    } finally {
      await damaged.close();
    }

    // Damage deep inside a table passes the checks at open and is reported when it is read.
    const later = await damagedStore("corrupt-later", "SELECT max(pageno) FROM dbstat WHERE name = 'checkpoints' AND pagetype IN ('leaf', 'overflow')");
    const store = await openStore(`sqlite:${later}`);
    try {
      const message = await storeError(
        (async () => {
          for (let i = 0; i < 20; i++) await store.getCheckpoint(`run-${i}:0`);
        })(),
        later,
      );
      expect(message).toMatch(/is corrupt/);
    } finally {
      await store.close();
    }
  });

  it("reports a damaged packed record as corruption of the store", async () => {
    const file = fresh("packed");
    // A name long enough for the runs' first events to be packed (shorter documents stay text).
    await storeWithRuns(file, 8, "w".repeat(200));
    const raw = new Database(file);
    // A run's first checkpoint keeps its metadata in the events row of the run's creation, whose
    // document is kept in the blob of its group transaction (each run was created in its own).
    const eventsRow = (run: string) => `(SELECT seq FROM events WHERE run_key = (SELECT key FROM runs WHERE id = '${run}'))`;
    const referenceTo = (run: string) => readGroupReference(raw.prepare(`SELECT events FROM events WHERE seq = ${eventsRow(run)}`).pluck().get() as Buffer)!;
    const setBlob = (run: string, value: Buffer) => raw.prepare("UPDATE blobs SET data = ? WHERE id = ?").run(value, referenceTo(run).blob);
    const setEventsRow = (run: string, value: Buffer) => raw.prepare(`UPDATE events SET events = ? WHERE seq = ${eventsRow(run)}`).run(value);
    const setMeta = (run: string, value: Buffer) => raw.prepare(`UPDATE checkpoints SET meta = ? WHERE run_key = (SELECT key FROM runs WHERE id = '${run}')`).run(value);
    const packed = raw.prepare("SELECT data FROM blobs WHERE id = ?").pluck().get(referenceTo("run-0").blob) as Buffer;
    const referenceOf = (run: string) => raw.prepare(`SELECT meta FROM checkpoints WHERE run_key = (SELECT key FROM runs WHERE id = '${run}')`).pluck().get() as Buffer;
    const reference = referenceOf("run-3");
    expect(Buffer.isBuffer(packed) && Buffer.isBuffer(reference)).toBe(true);
    const garbled = Buffer.from(packed);
    garbled.fill(0xff, 4, 10);
    setBlob("run-0", garbled);
    setBlob("run-1", Buffer.concat([Buffer.from([0x7f]), packed.subarray(1)]));
    setBlob("run-2", packed.subarray(0, 1));
    setMeta("run-3", Buffer.concat([reference.subarray(0, -1), Buffer.from([9])]));
    setMeta("run-4", reference.subarray(0, 1));
    setEventsRow("run-5", groupReference({ ...referenceTo("run-5"), length: 100_000 }));
    setEventsRow("run-6", groupReference({ ...referenceTo("run-6"), blob: 1_000_000 }));
    raw.close();
    const store = await openStore(`sqlite:${file}`);
    try {
      const unreadable = (why: string) => new RegExp(`is corrupt \\(a stored record is unreadable: ${why}\\); restore it from a backup$`);
      expect(await storeError(store.getCheckpoint("run-0:0"), file)).toMatch(unreadable("packed record .+"));
      expect(await storeError(store.getCheckpoint("run-1:0"), file)).toMatch(unreadable("packed with unknown dictionary 127"));
      expect(await storeError(store.getCheckpoint("run-2:0"), file)).toMatch(unreadable("packed record has no readable length"));
      expect(await storeError(store.getCheckpoint("run-3:0"), file)).toMatch(unreadable("a record refers to document 9 of event row \\d+, which has 1"));
      expect(await storeError(store.getCheckpoint("run-4:0"), file)).toMatch(unreadable("packed record has no readable length"));
      expect(await storeError(store.getCheckpoint("run-5:0"), file)).toMatch(unreadable("an event row refers to characters \\d+ to \\d+ of blob \\d+, which has \\d+"));
      expect(await storeError(store.readEvents({ runId: "run-6" }), file)).toMatch(unreadable("an event row refers to characters \\d+ to \\d+ of blob 1000000, which is missing"));
      expect(await storeError(store.readEvents({ runId: "run-0" }), file)).toMatch(unreadable("packed record .+"));
      // The damage is the records' own: the run left intact reads as written.
      expect(await store.getCheckpoint("run-7:0")).toMatchObject({ id: "run-7:0", actor: "test" });
      expect((await store.readEvents({ runId: "run-7" })).map((e) => e.type)).toEqual(["run.created"]);
    } finally {
      await store.close();
    }
  });

  it("says so when a newer pitwall upgraded the store under a running process, instead of calling a record it cannot read corrupt", async () => {
    const file = fresh("upgraded");
    await storeWithRuns(file, 1);
    const store = await openStore(`sqlite:${file}`);
    try {
      expect((await store.getCheckpoint("run-0:0"))?.n).toBe(0);
      const newer = new Database(file);
      newer.pragma(`user_version = ${SCHEMA_VERSION + 1}`);
      // A record in a format this pitwall does not know (a dictionary it has never seen).
      newer.prepare("UPDATE events SET events = ? WHERE run_key = (SELECT key FROM runs WHERE id = 'run-0')").run(Buffer.from([0x7f, 3, 1, 2, 3]));
      newer.close();
      // Rows read in one turn of the event loop are kept to its end (history-queries.ts).
      await new Promise(setImmediate);
      expect(await storeError(store.getCheckpoint("run-0:0"), file)).toBe(
        `store ${file} was upgraded by a newer pitwall (schema version ${SCHEMA_VERSION + 1}; this process knows up to ${SCHEMA_VERSION}) while this process used it: restart it with the newer pitwall`,
      );
    } finally {
      await store.close();
    }
  });

  it("notices its file deleted or replaced under it: the console's health check, a worker's claims and commits say so", async () => {
    for (const how of ["deleted", "replaced by another file"] as const) {
      const file = fresh(how.split(" ")[0]);
      await storeWithRuns(file, 1);
      const store = await openStore(`sqlite:${file}`);
      try {
        expect(await store.lastEventSeq()).toBeGreaterThan(0);
        for (const suffix of ["", "-wal", "-shm"]) rmSync(`${file}${suffix}`, { force: true });
        if (how !== "deleted") await storeWithRuns(file, 1);
        const said = `store ${file} was ${how} while this process had it open: what it reads and writes is no longer that store; restart this process`;
        expect(await storeError(store.lastEventSeq(), file)).toBe(said);
        expect(await storeError(store.claimRun({ owner: "w", leaseMs: 1000 }), file)).toBe(said);
        // A worker that holds runs goes no further with them either: its commits and renewals stop.
        expect(await storeError(store.renewLease("run-0", "w", 1, 1000), file)).toBe(said);
        expect(await storeError(store.commit({ id: "c-1", runId: "run-0", fence: 1 }), file)).toBe(said);
        // Nor does a run start, nor a command get sent, into a file nobody else sees.
        const started = newRun({ id: "run-late", workflow: { name: "w", version: "v" }, state: {}, actor: "test" });
        expect(await storeError(store.createRun(started), file)).toBe(said);
        expect(await storeError(store.putWorkflow({ version: "v", name: "w", createdAt: 0, definition: {} as never }), file)).toBe(said);
      } finally {
        await store.close();
      }
    }
  });

  it("a worker in code without onStoreGone says its store file was deleted through onNotice, and says it is stopping", async () => {
    const file = fresh("gone-notice");
    await storeWithRuns(file, 0);
    const store = await openStore(`sqlite:${file}`);
    const wf = workflow("wf", { state: z.object({}) }).node("a", () => ({}), { next: "END" }).compile();
    const notices: { level: string; kind: string; message: string }[] = [];
    const w = new Worker(store, new WorkflowRegistry(store, actionRegistry({}), [wf]), { pollMs: 20, onNotice: (notice) => notices.push(notice) });
    try {
      w.start();
      for (const suffix of ["", "-wal", "-shm"]) rmSync(`${file}${suffix}`, { force: true });
      const deadline = Date.now() + 5_000;
      while (!notices.some((n) => n.kind === "store-gone") && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 20));
      expect(notices.find((n) => n.kind === "store-gone")).toEqual({ level: "error", kind: "store-gone", message: `stopped: store ${file} was deleted while this process had it open: what it reads and writes is no longer that store; restart this process` });
      expect(w.stats().stopping).toBe(true);
    } finally {
      await w.stop();
      await store.close();
    }
  });

  it("a worker whose commit finds the store locked past its lease tries again until it answers: finished nodes never run twice", async () => {
    const file = fresh("outage");
    const runs: string[] = [];
    let finishB: () => void = () => {};
    const bMayFinish = new Promise<void>((resolve) => (finishB = resolve));
    const wf = workflow("outage", { state: z.object({ log: z.array(z.string()).default([]) }), reducers: { log: "append" } })
      .node("a", () => (runs.push("a"), { log: ["a"] }), { next: "b" })
      .node("b", async () => (runs.push("b"), await bMayFinish, { log: ["b"] }), { next: "c" })
      .node("c", () => (runs.push("c"), { log: ["c"] }), { next: "END" })
      .compile();
    const warnings: string[] = [];
    const store = await openStore(`sqlite:${file}`, { busyTimeoutMs: 100 });
    const engine = createEngine({ store, workflows: [wf], worker: { leaseMs: 400, pollMs: 50, onError: (m) => warnings.push(m) } });
    try {
      const run = await engine.start(wf);
      for (const deadline = Date.now() + 5_000; !runs.includes("b"); ) {
        if (Date.now() > deadline) throw new Error("b never started");
        await new Promise((resolve) => setTimeout(resolve, 10));
      }
      const holder = await lockHolder(file, "write");
      finishB();
      // Held well past the lease: the old worker gave up on its commit and ran b again once recovered.
      await new Promise((resolve) => setTimeout(resolve, 1_200));
      await kill(holder);
      expect(await run.wait({ timeoutMs: 10_000 })).toMatchObject({ status: "succeeded" });
      expect(runs).toEqual(["a", "b", "c"]);
      expect(await run.state()).toEqual({ log: ["a", "b", "c"] });
      // Said once for the outage, and once when it is over.
      expect(warnings.filter((w) => w.startsWith("commit failed"))).toEqual([expect.stringMatching(new RegExp(`is locked by another process .*; trying again until the store answers \\(run ${run.id}, and any other that commits meanwhile\\)$`))]);
      expect(warnings).toContain("the store answers again: the commits that waited went through");
    } finally {
      await engine.close();
      await store.close();
    }
  });

  it("reports a store locked by another process past the busy timeout, and writes nothing", async () => {
    const file = fresh("locked");
    await storeWithRuns(file, 1);
    const holder = await lockHolder(file, "write");
    try {
      const store = await openStore(`sqlite:${file}`, { busyTimeoutMs: 200 });
      try {
        const started = Date.now();
        const message = await storeError(
          store.createRun(newRun({ id: "run-late", workflow: { name: "wf", version: "v1" }, state: {}, actor: "test" })),
          file,
        );
        expect(message).toMatch(/is locked by another process \(still busy after 200 ms\)/);
        expect(Date.now() - started).toBeGreaterThanOrEqual(190);
        expect(await store.getRun("run-0")).toBeDefined();
        // Writes issued together share one wait for the lock and fail together, not one wait each.
        const together = Date.now();
        const outcomes = await Promise.allSettled(
          Array.from({ length: 8 }, (_, i) => store.createRun(newRun({ id: `run-late-${i}`, workflow: { name: "wf", version: "v1" }, state: {}, actor: "test" }))),
        );
        expect(outcomes.map((o) => o.status === "rejected" && (o.reason as Error).message)).toEqual(outcomes.map(() => message));
        expect(Date.now() - together).toBeLessThan(8 * 200);
      } finally {
        await store.close();
      }
    } finally {
      await kill(holder);
    }
    const store = await openStore(`sqlite:${file}`);
    expect(await store.getRun("run-late")).toBeUndefined();
    await store.close();
  });

  it("reports a store held exclusively by another process when opening it", async () => {
    const file = fresh("exclusive");
    await storeWithRuns(file, 1);
    const holder = await lockHolder(file, "exclusive");
    try {
      expect(await storeError(openAndUse(file, { busyTimeoutMs: 200 }), file)).toMatch(/is locked by another process \(still busy after 200 ms\)/);
    } finally {
      await kill(holder);
    }
  });

  /**
   * A store of one run in a file (0400) that this test's user may not write — root may write
   * any file, so as root the file belongs to an unprivileged user, who opens it — in a folder
   * it may write or not. `open` opens it in a process of that user.
   */
  async function unwritableStore(folderMode: 0o500 | 0o700) {
    const asRoot = process.getuid?.() === 0;
    const folder = mkdtempSync(join(tmpdir(), "pitwall-readonly-"));
    const file = join(folder, "readonly.db");
    await storeWithRuns(file, 1);
    chmodSync(file, 0o400);
    chmodSync(folder, folderMode);
    if (asRoot) {
      chownSync(file, 65534, 65534);
      chownSync(folder, 65534, 65534);
    }
    const open = async (mode: "read-only" | "writable") => {
      const script = new URL("../support/open-store.ts", import.meta.url).pathname;
      const child = spawnChild(process.execPath, ["--import", "tsx", script, `sqlite:${file}`, mode], asRoot ? { uid: 65534, gid: 65534 } : {});
      return child.line((l) => "ok" in l || "error" in l);
    };
    const cleanup = () => {
      chmodSync(folder, 0o700);
      rmSync(folder, { recursive: true, force: true });
    };
    return { file, open, cleanup };
  }

  it("reports a read-only store file when opening it to write", async () => {
    const store = await unwritableStore(0o500);
    try {
      const before = fingerprint(store.file);
      const result = await store.open("writable");
      expect(result.name).toBe("StoreError");
      expect(result.error).toMatch(new RegExp(`^store ${store.file} is read-only: pitwall needs to write to its store`));
      expect(String(result.error)).not.toContain("\n");
      expect(fingerprint(store.file)).toEqual(before);
    } finally {
      store.cleanup();
    }
  });

  it("reads a store file it may not write when opened read-only, and says why it cannot in a read-only folder", async () => {
    const inWritableFolder = await unwritableStore(0o700);
    try {
      const before = fingerprint(inWritableFolder.file).sha256;
      expect(await inWritableFolder.open("read-only")).toEqual({ ok: true, runs: 1 });
      expect(fingerprint(inWritableFolder.file).sha256).toBe(before);
    } finally {
      inWritableFolder.cleanup();
    }
    // SQLite needs a -shm file beside a WAL database, which no one can create there.
    const inReadOnlyFolder = await unwritableStore(0o500);
    try {
      const before = fingerprint(inReadOnlyFolder.file);
      const result = await inReadOnlyFolder.open("read-only");
      expect(result.error).toBe(
        `store ${inReadOnlyFolder.file} cannot be read where it is: SQLite needs to create its -shm file beside it, and the folder is read-only; copy the file to a folder you can write`,
      );
      expect(fingerprint(inReadOnlyFolder.file)).toEqual(before);
    } finally {
      inReadOnlyFolder.cleanup();
    }
  });
});

describe("SQLite stores opened read-only", () => {
  it("reads everything, refuses every write, and leaves the file as it was", async () => {
    const file = fresh("readable");
    await storeWithRuns(file, 2);
    const before = fingerprint(file).sha256;
    const store = await openStore(`sqlite:${file}`, { readOnly: true });
    try {
      expect((await store.listRuns()).runs.map((r) => r.id).sort()).toEqual(["run-0", "run-1"]);
      expect((await store.getRun("run-0"))?.status).toBe("queued");
      expect(await store.readEvents({ runId: "run-1" })).toHaveLength(1);
      expect(await store.listCheckpoints("run-0")).toHaveLength(1);
      const writes: [string, () => Promise<unknown>][] = [
        ["createRun", () => store.createRun(newRun({ id: "run-new", workflow: { name: "wf", version: "v1" }, state: {}, actor: "test" }))],
        ["claimRun", () => store.claimRun({ owner: "w", leaseMs: 1000 })],
        ["deleteRun", () => store.deleteRun("run-0")],
        ["putArtifact", () => store.putArtifact("run-0", new Uint8Array([1]), "application/octet-stream")],
      ];
      for (const [name, write] of writes) {
        expect(await storeError(write(), file), name).toBe(`store sqlite:${file} is open read-only: nothing can be written to it`);
      }
      expect((await store.countRuns()).queued).toBe(2);
    } finally {
      await store.close();
    }
    expect(fingerprint(file).sha256).toBe(before);
  });

  it("creates no store where there is none", async () => {
    const file = fresh("missing");
    expect(await storeError(openStore(`sqlite:${file}`, { readOnly: true }), file)).toBe(`store ${file} does not exist (opened read-only, so none was created)`);
    expect(existsSync(file)).toBe(false);
  });

  it("reads a store of an older version with the current tables as it is, and refuses an older one without upgrading it", async () => {
    const file = fresh("older");
    await storeWithRuns(file, 1);
    const version = () => {
      const raw = new Database(file, { readonly: true });
      try {
        return raw.pragma("user_version", { simple: true }) as number;
      } finally {
        raw.close();
      }
    };
    const setVersion = (v: number) => {
      const raw = new Database(file);
      raw.pragma(`user_version = ${v}`);
      raw.close();
    };
    setVersion(READABLE_FROM_VERSION);
    const readable = await openStore(`sqlite:${file}`, { readOnly: true });
    expect((await readable.listRuns()).runs.map((r) => r.id)).toEqual(["run-0"]);
    await readable.close();
    expect(version()).toBe(READABLE_FROM_VERSION);

    setVersion(READABLE_FROM_VERSION - 1);
    const before = fingerprint(file).sha256;
    expect(await storeError(openStore(`sqlite:${file}`, { readOnly: true }), file)).toBe(
      `store ${file} has schema version ${READABLE_FROM_VERSION - 1}, older than this pitwall reads without upgrading it (${READABLE_FROM_VERSION}): it is upgraded when opened to write (a worker, or a command that writes); opened read-only, it was not changed`,
    );
    expect(fingerprint(file).sha256).toBe(before);
  });
});
