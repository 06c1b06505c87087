import Database from "better-sqlite3";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { createEngine, openStore, readState, workflow, type EventRecord, type Store } from "../../engine/index.js";
import { newId, traceIdOf } from "../../engine/ids.js";
import { newRun } from "../../engine/runtime/new-run.js";
import { batchDocs } from "../../engine/store/sqlite/event-rows.js";
import { GroupDocs } from "../../engine/store/sqlite/group-docs.js";
import { packJson, packText, readDocReference, unpackJson } from "../../engine/store/sqlite/packed-json.js";
import type { CheckpointRow } from "../../engine/store/sqlite/rows.js";
import { Statements } from "../../engine/store/sqlite/statements.js";
import { APPLICATION_ID, MIGRATIONS, SCHEMA_VERSION, TABLES } from "../../engine/store/sqlite/schema.js";
import type { TaskRow } from "../../engine/store/sqlite/task-rows.js";
import { storeFiles, storeWithRuns } from "../support/sqlite-files.js";

const { fresh } = storeFiles("pitwall-upgrade-");

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

/** Makes the store at `file` as schema version `version` left it: `sql` undoes what came after. */
function setBack(file: string, version: number, sql: string): void {
  const raw = new Database(file);
  try {
    raw.exec(sql);
    raw.pragma(`user_version = ${version}`);
  } finally {
    raw.close();
  }
}

describe("SQLite schema migrations", () => {
  /** A store of schema version 1 holding the rows of `source` (a current store) and its `events`. */
  function versionOneCopy(source: string, events: readonly EventRecord[]): string {
    const file = fresh("v1");
    const db = new Database(file);
    db.pragma("journal_mode = WAL");
    db.exec(MIGRATIONS[0] as string);
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
      // Version 1's columns: those the tables had then.
      const columns = (db.prepare("SELECT name FROM pragma_table_info(?)").pluck().all(table) as string[]).join(", ");
      db.exec(`INSERT INTO ${table} (${columns}) SELECT ${columns} FROM src.${table} WHERE true ON CONFLICT DO NOTHING`);
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

  it("brings a version 9 store, whose deadlines are only in its documents, up to date: its runs' and interrupts' deadlines are listed from their own indexes", async () => {
    const file = fresh("v9");
    const before = await openStore(`sqlite:${file}`);
    const make = async (deadlineSeconds?: number) => {
      const id = newId("run");
      await before.createRun(newRun({ id, workflow: { name: "wf", version: "v1" }, state: {}, actor: "test", ...(deadlineSeconds !== undefined ? { deadlineSeconds } : {}) }));
      return id;
    };
    const [timed, plain, ended] = [await make(600), await make(), await make(60)];
    const asked = (await before.claimRun({ owner: "w", leaseMs: 60_000, runId: plain }))!;
    const deadline = { at: Date.now() + 5_000, decision: "approve" };
    const request = { question: "ok?", decisions: ["approve", "reject"] };
    const pending = { id: "int-due", runId: plain, taskId: null, node: "ask", step: 1, kind: "node" as const, request, status: "pending" as const, resolution: null, createdAt: 1, deadline };
    await before.commit({ id: newId("c"), runId: plain, fence: asked.fence, interrupts: [pending, { ...pending, id: "int-open", deadline: undefined }] as never });
    const done = (await before.claimRun({ owner: "w", leaseMs: 60_000, runId: ended }))!;
    await before.commit({ id: newId("c"), runId: ended, fence: done.fence, run: { status: "succeeded", owner: null, leaseUntil: null } });
    const expected = await before.listDeadlines();
    expect(expected.map((d) => d.id)).toEqual(["int-due", timed]);
    await before.close();
    // As version 9 kept them: the deadlines in the documents alone.
    setBack(file, 9, "DROP INDEX runs_by_deadline; DROP INDEX interrupts_by_deadline; ALTER TABLE runs DROP COLUMN deadline_at; ALTER TABLE interrupts DROP COLUMN deadline_at");
    const layout = () => storeLayout(file, (db) => ({ indexes: db.prepare("SELECT name FROM sqlite_schema WHERE name LIKE '%by_deadline' ORDER BY name").pluck().all() }));
    expect(layout()).toEqual({ version: 9, indexes: [], integrity: "ok" });
    const reader = await openStore(`sqlite:${file}`, { readOnly: true });
    try {
      expect(await reader.listDeadlines()).toEqual(expected);
    } finally {
      await reader.close();
    }
    expect(layout()).toEqual({ version: 9, indexes: [], integrity: "ok" });
    const store = await openStore(`sqlite:${file}`);
    try {
      expect(layout()).toEqual({ version: SCHEMA_VERSION, indexes: ["interrupts_by_deadline", "runs_by_deadline"], integrity: "ok" });
      // Read along the new indexes (named in the query: SQLite refuses it where one cannot serve).
      expect(await store.listDeadlines()).toEqual(expected);
    } finally {
      await store.close();
    }
  });

  it("brings a version 10 store up to date without its index of runs by update time, and still lists runs of every status newest first, page by page", async () => {
    const file = fresh("v10");
    const before = await openStore(`sqlite:${file}`);
    const ids: string[] = [];
    for (let i = 0; i < 5; i++) {
      const id = `run-${i}`;
      await before.createRun(newRun({ id, workflow: { name: "wf", version: "v1" }, state: {}, actor: "test" }));
      ids.push(id);
      await new Promise((resolve) => setTimeout(resolve, 3));
    }
    // Statuses of every kind, updated in another order than the runs were made.
    const running = (await before.claimRun({ owner: "w", leaseMs: 60_000, runId: "run-1" }))!;
    await new Promise((resolve) => setTimeout(resolve, 3));
    const ended = (await before.claimRun({ owner: "w", leaseMs: 60_000, runId: "run-3" }))!;
    await before.commit({ id: newId("c"), runId: "run-3", fence: ended.fence, run: { status: "succeeded", owner: null, leaseUntil: null } });
    await new Promise((resolve) => setTimeout(resolve, 3));
    await before.commit({ id: newId("c"), runId: "run-1", fence: running.fence, run: { status: "paused", owner: null, leaseUntil: null } });
    const newestFirst = (await before.listRuns()).runs.map((r) => r.id);
    expect(newestFirst).toEqual(["run-1", "run-3", "run-4", "run-2", "run-0"]);
    await before.close();
    setBack(file, 10, "CREATE INDEX runs_by_update ON runs (updated_at, id)");
    const layout = () => storeLayout(file, (db) => ({ byUpdate: db.prepare("SELECT count(*) FROM sqlite_schema WHERE name = 'runs_by_update'").pluck().get() }));
    expect(layout()).toEqual({ version: 10, byUpdate: 1, integrity: "ok" });
    const store = await openStore(`sqlite:${file}`);
    try {
      expect(layout()).toEqual({ version: SCHEMA_VERSION, byUpdate: 0, integrity: "ok" });
      expect((await store.listRuns()).runs.map((r) => r.id)).toEqual(newestFirst);
      const paged: string[] = [];
      for (let cursor: string | undefined, pages = 0; pages === 0 || cursor; pages++) {
        const page = await store.listRuns({ limit: 2, ...(cursor ? { cursor } : {}) });
        paged.push(...page.runs.map((r) => r.id));
        cursor = page.nextCursor;
      }
      expect(paged).toEqual(newestFirst);
      expect((await store.listRuns({ workflow: "wf", parentRunId: null, limit: 3 })).runs.map((r) => r.id)).toEqual(newestFirst.slice(0, 3));
    } finally {
      await store.close();
    }
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

