import type Database from "better-sqlite3";

/**
 * The SQLite store's schema. `PRAGMA application_id` marks a file as a pitwall store (so another
 * application's database is refused, not written to); `PRAGMA user_version` is the schema
 * version, moved forward one migration at a time. A file with a larger version was written by a
 * newer pitwall and is refused without being touched.
 */

/** "pitw" in ASCII. */
export const APPLICATION_ID = 0x70697477;

/**
 * A migration's SQL, run as it is; or columns it adds before its SQL runs, each only where the
 * table lacks it (SQLite has no ADD COLUMN IF NOT EXISTS, and a store set back to an earlier
 * version number by hand has them already).
 */
export type Migration = string | { addColumns: readonly { table: string; column: string; type: string }[]; sql: string };

/**
 * Each entry moves the schema from version `index` to `index + 1`. Entries are never edited once
 * released: a change is a new entry.
 */
export const MIGRATIONS: readonly Migration[] = [
  `
  -- Small store-wide values; 'fence' is the fencing-token counter, which only grows.
  CREATE TABLE meta (key TEXT PRIMARY KEY, value INTEGER NOT NULL) WITHOUT ROWID;
  INSERT INTO meta (key, value) VALUES ('fence', 0);

  CREATE TABLE workflows (
    version TEXT PRIMARY KEY,
    name TEXT NOT NULL,
    created_at INTEGER NOT NULL,
    definition TEXT NOT NULL
  );

  -- The run record is one JSON document; the columns the queries need are derived from it, so
  -- they can never disagree with it.
  CREATE TABLE runs (
    id TEXT PRIMARY KEY,
    doc TEXT NOT NULL,
    status TEXT GENERATED ALWAYS AS (doc ->> '$.status') VIRTUAL,
    workflow TEXT GENERATED ALWAYS AS (doc ->> '$.workflow') VIRTUAL,
    version TEXT GENERATED ALWAYS AS (doc ->> '$.version') VIRTUAL,
    parent_run_id TEXT GENERATED ALWAYS AS (doc ->> '$.parentRunId') VIRTUAL,
    updated_at INTEGER GENERATED ALWAYS AS (doc ->> '$.updatedAt') VIRTUAL,
    wake_at INTEGER GENERATED ALWAYS AS (doc ->> '$.wakeAt') VIRTUAL,
    lease_until INTEGER GENERATED ALWAYS AS (doc ->> '$.leaseUntil') VIRTUAL,
    waiting_on TEXT GENERATED ALWAYS AS (doc ->> '$.waitingOn') VIRTUAL
  );
  CREATE INDEX runs_by_update ON runs (updated_at, id);
  CREATE INDEX runs_by_status ON runs (status, updated_at, id);
  CREATE INDEX runs_by_parent ON runs (parent_run_id) WHERE parent_run_id IS NOT NULL;

  -- Checkpoints are never overwritten. 'delta' holds the channel writes of the step; 'snapshot'
  -- is set every K steps; 'meta' holds the rest of the record (plan control, actor, nodes...).
  -- A checkpoint's id is '<run id>:<n>', so it needs no column (nor index) of its own.
  CREATE TABLE checkpoints (
    run_id TEXT NOT NULL,
    n INTEGER NOT NULL,
    snapshot_n INTEGER NOT NULL,
    bytes INTEGER NOT NULL,
    meta TEXT NOT NULL,
    delta TEXT NOT NULL,
    snapshot TEXT,
    PRIMARY KEY (run_id, n)
  ) WITHOUT ROWID;

  -- Clustered by run and step, the way tasks are read; a task id names its run and step.
  CREATE TABLE tasks (
    run_id TEXT NOT NULL,
    step INTEGER NOT NULL,
    id TEXT NOT NULL,
    created_at INTEGER NOT NULL,
    doc TEXT NOT NULL,
    PRIMARY KEY (run_id, step, id)
  ) WITHOUT ROWID;

  CREATE TABLE interrupts (
    id TEXT PRIMARY KEY,
    run_id TEXT NOT NULL,
    status TEXT NOT NULL,
    created_at INTEGER NOT NULL,
    doc TEXT NOT NULL
  );
  CREATE INDEX interrupts_by_status ON interrupts (status, created_at, id);
  CREATE INDEX interrupts_by_run ON interrupts (run_id, status);

  CREATE TABLE commands (
    id TEXT PRIMARY KEY,
    run_id TEXT NOT NULL,
    status TEXT NOT NULL,
    created_at INTEGER NOT NULL,
    doc TEXT NOT NULL
  );
  CREATE INDEX commands_by_run ON commands (run_id, created_at);
  CREATE INDEX commands_by_status ON commands (status, created_at);

  -- Append-only. 'seq' is the rowid: rows are never deleted, so it only grows. A null trace_id
  -- means the run's own trace id (derived from the run id), which almost every event has.
  CREATE TABLE events (
    seq INTEGER PRIMARY KEY,
    run_id TEXT NOT NULL,
    run_seq INTEGER NOT NULL,
    task_id TEXT,
    trace_id TEXT,
    span_id TEXT,
    type TEXT NOT NULL,
    actor TEXT NOT NULL,
    time INTEGER NOT NULL,
    payload TEXT NOT NULL
  );
  CREATE INDEX events_by_run ON events (run_id, seq);

  CREATE TABLE artifacts (
    sha256 TEXT PRIMARY KEY,
    media_type TEXT NOT NULL,
    size INTEGER NOT NULL,
    data BLOB NOT NULL
  );
  CREATE TABLE artifact_runs (
    run_id TEXT NOT NULL,
    sha256 TEXT NOT NULL,
    PRIMARY KEY (run_id, sha256)
  ) WITHOUT ROWID;
  `,
  `
  -- Version 2. The run columns the queries read are written beside the document by the store
  -- (from one function, so they still cannot disagree with it) instead of being extracted from
  -- the JSON on every read and index update.
  CREATE TABLE runs_v2 (
    id TEXT PRIMARY KEY,
    doc TEXT NOT NULL,
    status TEXT NOT NULL,
    workflow TEXT NOT NULL,
    version TEXT NOT NULL,
    parent_run_id TEXT,
    updated_at INTEGER NOT NULL,
    wake_at INTEGER,
    lease_until INTEGER,
    waiting_on TEXT
  );
  INSERT INTO runs_v2 (id, doc, status, workflow, version, parent_run_id, updated_at, wake_at, lease_until, waiting_on)
    SELECT id, doc, status, workflow, version, parent_run_id, updated_at, wake_at, lease_until, waiting_on FROM runs ORDER BY rowid;
  DROP TABLE runs;
  ALTER TABLE runs_v2 RENAME TO runs;
  CREATE INDEX runs_by_update ON runs (updated_at, id);
  CREATE INDEX runs_by_status ON runs (status, updated_at, id);
  CREATE INDEX runs_by_parent ON runs (parent_run_id) WHERE parent_run_id IS NOT NULL;

  -- A commit's events are one row (one insert, one index entry): 'seq' is the last event's
  -- store-wide number (still the rowid, still only growing), 'run_seq' the first event's number
  -- within the run, 'events' a JSON array of [type, task_id, trace_id, span_id, actor, time,
  -- payload] (a null trace_id is the run's own).
  CREATE TABLE events_v2 (
    seq INTEGER PRIMARY KEY,
    run_id TEXT NOT NULL,
    run_seq INTEGER NOT NULL,
    count INTEGER NOT NULL,
    events TEXT NOT NULL
  );
  INSERT INTO events_v2 (seq, run_id, run_seq, count, events)
    SELECT seq, run_id, run_seq, 1, json_array(json_array(type, task_id, trace_id, span_id, actor, time, json(payload))) FROM events ORDER BY seq;
  DROP TABLE events;
  ALTER TABLE events_v2 RENAME TO events;
  CREATE INDEX events_by_run ON events (run_id, seq);
  `,
  `
  -- Version 3. Checkpoints, tasks and events name their run by an integer key given in creation
  -- order instead of its id: a few bytes instead of a dozen or more in every row and index
  -- entry, and the rows of runs created together (which mostly run together) sit together, so a
  -- group commit writes fewer pages. The key is the runs table's INTEGER PRIMARY KEY, which
  -- VACUUM keeps. Event batches, checkpoint metadata and task documents may now be BLOBs,
  -- deflated against a preset dictionary (engine/store/sqlite/packed-json.ts); their columns
  -- have BLOB affinity, which stores text and BLOBs as they come. TEXT rows are still read.
  -- Rows are carried over by joining their run: a row whose run is gone (none is, by
  -- construction, and no read could reach it) is not.
  CREATE TABLE runs_v3 (
    key INTEGER PRIMARY KEY,
    id TEXT NOT NULL UNIQUE,
    doc TEXT NOT NULL,
    status TEXT NOT NULL,
    workflow TEXT NOT NULL,
    version TEXT NOT NULL,
    parent_run_id TEXT,
    updated_at INTEGER NOT NULL,
    wake_at INTEGER,
    lease_until INTEGER,
    waiting_on TEXT
  );
  INSERT INTO runs_v3 (id, doc, status, workflow, version, parent_run_id, updated_at, wake_at, lease_until, waiting_on)
    SELECT id, doc, status, workflow, version, parent_run_id, updated_at, wake_at, lease_until, waiting_on FROM runs ORDER BY rowid;
  DROP TABLE runs;
  ALTER TABLE runs_v3 RENAME TO runs;
  CREATE INDEX runs_by_update ON runs (updated_at, id);
  CREATE INDEX runs_by_status ON runs (status, updated_at, id);
  CREATE INDEX runs_by_parent ON runs (parent_run_id) WHERE parent_run_id IS NOT NULL;

  CREATE TABLE checkpoints_v3 (
    run_key INTEGER NOT NULL,
    n INTEGER NOT NULL,
    snapshot_n INTEGER NOT NULL,
    bytes INTEGER NOT NULL,
    meta BLOB NOT NULL,
    delta TEXT NOT NULL,
    snapshot TEXT,
    PRIMARY KEY (run_key, n)
  ) WITHOUT ROWID;
  INSERT INTO checkpoints_v3 (run_key, n, snapshot_n, bytes, meta, delta, snapshot)
    SELECT r.key, c.n, c.snapshot_n, c.bytes, c.meta, c.delta, c.snapshot FROM checkpoints c JOIN runs r ON r.id = c.run_id ORDER BY r.key, c.n;
  DROP TABLE checkpoints;
  ALTER TABLE checkpoints_v3 RENAME TO checkpoints;

  CREATE TABLE tasks_v3 (
    run_key INTEGER NOT NULL,
    step INTEGER NOT NULL,
    id TEXT NOT NULL,
    created_at INTEGER NOT NULL,
    doc BLOB NOT NULL,
    PRIMARY KEY (run_key, step, id)
  ) WITHOUT ROWID;
  INSERT INTO tasks_v3 (run_key, step, id, created_at, doc)
    SELECT r.key, t.step, t.id, t.created_at, t.doc FROM tasks t JOIN runs r ON r.id = t.run_id ORDER BY r.key, t.step, t.id;
  DROP TABLE tasks;
  ALTER TABLE tasks_v3 RENAME TO tasks;

  CREATE TABLE events_v3 (
    seq INTEGER PRIMARY KEY,
    run_key INTEGER NOT NULL,
    run_seq INTEGER NOT NULL,
    count INTEGER NOT NULL,
    events BLOB NOT NULL
  );
  INSERT INTO events_v3 (seq, run_key, run_seq, count, events)
    SELECT e.seq, r.key, e.run_seq, e.count, e.events FROM events e JOIN runs r ON r.id = e.run_id ORDER BY e.seq;
  DROP TABLE events;
  ALTER TABLE events_v3 RENAME TO events;
  CREATE INDEX events_by_run ON events (run_key, seq);
  `,
  `
  -- Version 4 changes no table. A commit's events row may also hold the documents of its
  -- checkpoint's metadata and of its settled tasks, packed with its events in one deflate call;
  -- their rows then hold a reference to it (engine/store/sqlite/packed-json.ts). Rows of earlier
  -- versions are read as they are; a pitwall of version 3 could not read the references, so it
  -- must refuse the store.
  SELECT 1;
  `,
  `
  -- Version 5. Workers' heartbeats ('pitwall workers'), one row per worker id, the record a JSON
  -- document. And the queued runs by workflow, which claims take in turns: the index holds a run
  -- only while it is queued, so the commits of a running run do not touch it. (IF NOT EXISTS: a
  -- store set back to an earlier version number by hand has them already.)
  CREATE TABLE IF NOT EXISTS workers (id TEXT PRIMARY KEY, last_seen INTEGER NOT NULL, doc TEXT NOT NULL);
  CREATE INDEX IF NOT EXISTS runs_queued_by_workflow ON runs (workflow, updated_at, id) WHERE status = 'queued';
  `,
  `
  -- Version 6. Checkpoints are kept in the order they are written, found by run and number through
  -- an index. Clustered by run, a group commit of steps of a dozen runs wrote a page of the
  -- table for each run; in writing order, those rows share a page or two, and the index's short
  -- entries a page or two more.
  CREATE TABLE checkpoints_v6 (
    run_key INTEGER NOT NULL,
    n INTEGER NOT NULL,
    snapshot_n INTEGER NOT NULL,
    bytes INTEGER NOT NULL,
    meta BLOB NOT NULL,
    delta TEXT NOT NULL,
    snapshot TEXT
  );
  INSERT INTO checkpoints_v6 (run_key, n, snapshot_n, bytes, meta, delta, snapshot)
    SELECT run_key, n, snapshot_n, bytes, meta, delta, snapshot FROM checkpoints ORDER BY run_key, n;
  DROP TABLE checkpoints;
  ALTER TABLE checkpoints_v6 RENAME TO checkpoints;
  CREATE UNIQUE INDEX checkpoints_by_run ON checkpoints (run_key, n);
  `,
  `
  -- Version 7. The documents of the commits written in one group transaction (each commit's
  -- events, with its checkpoint's metadata and settled tasks) are deflated together, in one call,
  -- into one row here; each commit's events row refers to its document's place in the row's text
  -- (engine/store/sqlite/group-docs.ts). 'size' is the text's length, 'refs' the number of events
  -- rows referring to it. Rows of earlier versions keep their documents and are read as they are;
  -- a pitwall of version 6 could not read the references, so it must refuse the store.
  CREATE TABLE IF NOT EXISTS blobs (id INTEGER PRIMARY KEY, refs INTEGER NOT NULL, size INTEGER NOT NULL, data BLOB NOT NULL);
  `,
  `
  -- Version 8. Schedules ('pitwall schedule'), one row per schedule id, the record a JSON document.
  -- A store opened read-only at an earlier version is read as it is, with no schedules.
  CREATE TABLE IF NOT EXISTS schedules (id TEXT PRIMARY KEY, doc TEXT NOT NULL) WITHOUT ROWID;
  `,
  `
  -- Version 9. The running runs by workflow, which a claim counts under a workflow's
  -- limits.runsAtOnce: without it, each claim read the row of every running run of the store. The
  -- index holds a run only while it runs and only its workflow, so a step's commit does not touch it.
  CREATE INDEX IF NOT EXISTS runs_running_by_workflow ON runs (workflow) WHERE status = 'running';
  `,
  {
    addColumns: [
      { table: "runs", column: "deadline_at", type: "INTEGER" },
      { table: "interrupts", column: "deadline_at", type: "INTEGER" },
    ],
    sql: `
  -- Version 10. The deadlines workers act on, in columns of their own beside the documents (added
  -- above), each with an index holding only the rows whose deadline still applies (a run not
  -- ended, an interrupt pending): a worker lists them every minute, and read from the documents
  -- that was a read of every run not ended. A run's deadline is set when it is made, so a step's
  -- commit touches neither index.
  UPDATE runs SET deadline_at = doc ->> '$.deadlineAt' WHERE doc ->> '$.deadlineAt' IS NOT NULL;
  CREATE INDEX IF NOT EXISTS runs_by_deadline ON runs (deadline_at) WHERE deadline_at IS NOT NULL AND status NOT IN ('succeeded', 'failed', 'canceled');
  UPDATE interrupts SET deadline_at = doc ->> '$.deadline.at' WHERE doc ->> '$.deadline.at' IS NOT NULL;
  CREATE INDEX IF NOT EXISTS interrupts_by_deadline ON interrupts (deadline_at) WHERE deadline_at IS NOT NULL AND status = 'pending';
  `,
  },
  `
  -- Version 11. No index of the runs by update time alone. Every step's commit moves its run's
  -- update time, so it moved the run's entry in this index as well as in runs_by_status, for one
  -- listing: the runs of every status, newest first, which now reads runs_by_status a status at a
  -- time and merges (engine/store/sqlite/run-listings.ts). A group transaction of the chain bench
  -- writes 19.6 pages without it, 21.0 with it.
  DROP INDEX IF EXISTS runs_by_update;
  `,
  {
    addColumns: [{ table: "runs", column: "progress", type: "TEXT" }],
    sql: `
  -- Version 12. A run's progress (its head checkpoint, last commit, event count, update time, the
  -- nodes in progress and their fan-in arrivals), written alone by a step's commit that changes
  -- nothing else, over what the run's document says; NULL when the document is newer
  -- (engine/store/sqlite/rows.ts). A pitwall of version 11 would read a running run's progress
  -- as of its claim, so it must refuse the store.
  SELECT 1;
  `,
  },
];

export function applyMigration(db: Database.Database, migration: Migration): void {
  if (typeof migration === "string") {
    db.exec(migration);
    return;
  }
  for (const { table, column, type } of migration.addColumns) {
    if (!db.prepare("SELECT 1 FROM pragma_table_info(?) WHERE name = ?").get(table, column)) db.exec(`ALTER TABLE ${table} ADD COLUMN ${column} ${type}`);
  }
  db.exec(migration.sql);
}

export const SCHEMA_VERSION = MIGRATIONS.length;

/**
 * The oldest schema version whose tables are the current ones, and whose rows this pitwall reads:
 * a store of that version or later is read without upgrading it (when opened read-only).
 */
export const READABLE_FROM_VERSION = 3;

/** The tables a pitwall store of the current version has; opening touches each one. */
export const TABLES = ["meta", "workflows", "runs", "checkpoints", "tasks", "interrupts", "commands", "events", "artifacts", "artifact_runs"] as const;
