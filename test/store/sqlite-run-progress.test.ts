import Database from "better-sqlite3";
import { describe, expect, it } from "vitest";
import { openStore, type RunRecord, type Store } from "../../engine/index.js";
import { newId } from "../../engine/ids.js";
import { newRun } from "../../engine/runtime/new-run.js";
import { SCHEMA_VERSION } from "../../engine/store/sqlite/schema.js";
import { storeFiles } from "../support/sqlite-files.js";

const { fresh } = storeFiles("pitwall-progress-");

/** The run's row as stored: its document and its progress. */
function row(file: string, id: string): { doc: RunRecord; progress: Partial<RunRecord> | null } {
  const db = new Database(file, { readonly: true });
  try {
    const { doc, progress } = db.prepare("SELECT doc, progress FROM runs WHERE id = ?").get(id) as { doc: string; progress: string | null };
    return { doc: JSON.parse(doc) as RunRecord, progress: progress === null ? null : (JSON.parse(progress) as Partial<RunRecord>) };
  } finally {
    db.close();
  }
}

/** A run claimed by worker `w`, and its fencing token. */
async function claimedRun(store: Store, id: string): Promise<number> {
  await store.createRun(newRun({ id, workflow: { name: "wf", version: "v1" }, state: {}, actor: "test" }));
  return (await store.claimRun({ owner: "w", leaseMs: 60_000, runId: id }))!.fence;
}

/** A step's commit: events, and the nodes now in progress. */
function step(store: Store, runId: string, fence: number, node: string) {
  return store.commit({
    id: newId("c"),
    runId,
    fence,
    run: { current: [node], barriers: {} },
    events: [{ runId, taskId: null, traceId: "t", spanId: null, type: "node.log", actor: "worker:w", payload: { node, level: "info", message: node }, time: Date.now() }],
  });
}

describe("SQLite store: a run's progress written alone (schema version 12)", () => {
  it("a step's commit writes only the run's progress, and the run reads back whole: by id, listed, reopened, read-only", async () => {
    const file = fresh();
    const store = await openStore(`sqlite:${file}`);
    const fence = await claimedRun(store, "run-1");
    await step(store, "run-1", fence, "a");
    await step(store, "run-1", fence, "b");
    const run = (await store.getRun("run-1"))!;
    await store.close();

    expect(run).toMatchObject({ status: "running", owner: "w", current: ["b"], eventCount: 4 });
    const stored = row(file, "run-1");
    // The document is the claim's; the progress is the last step's.
    expect(stored.doc).toMatchObject({ status: "running", owner: "w", current: [], eventCount: 2, lastCommit: null });
    expect(stored.progress).toEqual({ head: run.head, headN: run.headN, step: run.step, lastCommit: run.lastCommit, eventCount: 4, updatedAt: run.updatedAt, current: ["b"], barriers: {} });

    for (const options of [{}, { readOnly: true }]) {
      const reopened = await openStore(`sqlite:${file}`, options);
      try {
        expect(await reopened.getRun("run-1")).toEqual(run);
        expect((await reopened.listRuns()).runs).toEqual([run]);
        expect((await reopened.listRuns({ status: ["running", "queued"] })).runs).toEqual([run]);
      } finally {
        await reopened.close();
      }
    }
  });

  it("a commit that changes the run's course writes its whole document again", async () => {
    const file = fresh();
    const store = await openStore(`sqlite:${file}`);
    try {
      const fence = await claimedRun(store, "run-1");
      await step(store, "run-1", fence, "a");
      await store.commit({ id: newId("c"), runId: "run-1", fence, run: { status: "paused", reason: "killed", owner: null, leaseUntil: null, current: ["a"] } });
      const run = (await store.getRun("run-1"))!;
      expect(run).toMatchObject({ status: "paused", reason: "killed", owner: null, current: ["a"] });
      expect(row(file, "run-1")).toEqual({ doc: run, progress: null });
    } finally {
      await store.close();
    }
  });

  it("a store of version 11 is read without the column read-only, and brought up to date when opened to write", async () => {
    const file = fresh();
    const before = await openStore(`sqlite:${file}`);
    const fence = await claimedRun(before, "run-1");
    await before.commit({ id: newId("c"), runId: "run-1", fence, run: { status: "paused", reason: "killed", owner: null, leaseUntil: null } });
    const run = (await before.getRun("run-1"))!;
    await before.close();
    const raw = new Database(file);
    raw.exec("ALTER TABLE runs DROP COLUMN progress");
    raw.pragma("user_version = 11");
    raw.close();

    const readOnly = await openStore(`sqlite:${file}`, { readOnly: true });
    try {
      expect(await readOnly.getRun("run-1")).toEqual(run);
      expect((await readOnly.listRuns()).runs).toEqual([run]);
    } finally {
      await readOnly.close();
    }
    const store = await openStore(`sqlite:${file}`);
    try {
      const db = new Database(file, { readonly: true });
      expect(db.pragma("user_version", { simple: true })).toBe(SCHEMA_VERSION);
      expect(db.prepare("SELECT count(*) FROM pragma_table_info('runs') WHERE name = 'progress'").pluck().get()).toBe(1);
      db.close();
      expect(await store.getRun("run-1")).toEqual(run);
    } finally {
      await store.close();
    }
  });
});
