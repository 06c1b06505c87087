import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { z } from "zod";
import Database from "better-sqlite3";
import { ConflictError, createEngine, deleteWithDescendants, openStore, pruneRuns, runDescendants, workflow, type Engine, type NewEvent } from "../../engine/index.js";
import { newRun } from "../../engine/runtime/new-run.js";
import { readGroupReference, unpackText } from "../../engine/store/sqlite/packed-json.js";

const dir = mkdtempSync(join(tmpdir(), "pitwall-erasure-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const EMAIL = "dana.private@example.com";

/** How many times `text` is in the store's file and its WAL, as anyone reading the disk would find it. */
function copiesOn(file: string, text: string): number {
  return [file, `${file}-wal`].reduce((n, f) => n + (existsSync(f) ? readFileSync(f).toString("latin1").split(text).length - 1 : 0), 0);
}

// Each step rewrites the run's record and its tasks (an update leaves the old version in the page
// unless it is overwritten); the parallel pair saves a result while its sibling runs, and that
// task record is rewritten without it at the step's end.
const wf = workflow("mail", { state: z.object({ to: z.string(), notes: z.array(z.string()).default([]), n: z.number().default(0) }), reducers: { notes: "append" } })
  .node("draft", (s) => ({ notes: [`draft for ${s.to}`] }), { next: ["left", "right"] })
  .node("left", (s) => ({ notes: [`left ${s.to}`] }))
  .node("right", async (s) => {
    await new Promise((resolve) => setTimeout(resolve, 20));
    return { n: s.n + 1 };
  })
  .compile();

async function settled(engine: Engine, runId: string): Promise<void> {
  expect((await engine.run(runId).wait({ timeoutMs: 10_000 })).status).toBe("succeeded");
}

describe("SQLite: a deleted run leaves nothing of itself in the file or its WAL", () => {
  it("its values are overwritten in the database file and gone from the WAL, while another process keeps the store open", async () => {
    const file = join(dir, "erase.db");
    // The worker's connection stays open throughout, as a running worker's would.
    const engine = createEngine({ store: await openStore(`sqlite:${file}`), workflows: [wf] });
    const run = await engine.start(wf, { to: EMAIL });
    await settled(engine, run.id);
    const fork = await engine.operator("ann").fork(run.id, 1, { patch: { notes: [`forked for ${EMAIL}`] } });
    await settled(engine, fork.result.runId);
    const next = await engine.start(wf, { notes: [`again ${EMAIL}`] }, { from: run.id });
    await settled(engine, next.id);
    const other = await engine.start(wf, { to: "someone.else@example.com" });
    await settled(engine, other.id);
    expect(copiesOn(file, EMAIL)).toBeGreaterThan(0);

    // `pitwall delete` is another process: another connection to the same file.
    const deleter = await openStore(`sqlite:${file}`);
    expect((await runDescendants(deleter, run.id)).map((r) => r.id).sort()).toEqual([fork.result.runId, next.id].sort());
    expect(await deleteWithDescendants(deleter, run.id)).toEqual([run.id, fork.result.runId, next.id]);
    expect(copiesOn(file, EMAIL)).toBe(0);
    // The runs kept are whole.
    expect((await deleter.listRuns({})).runs.map((r) => r.id)).toEqual([other.id]);
    expect(copiesOn(file, "someone.else@example.com")).toBeGreaterThan(0);
    await deleter.close();
    await engine.close();
  });

  it("a prune's deletions, made faster than the WAL is emptied after each, are erased by the time it returns", async () => {
    const file = join(dir, "prune.db");
    const engine = createEngine({ store: await openStore(`sqlite:${file}`), workflows: [wf] });
    for (let i = 0; i < 5; i++) await settled(engine, (await engine.start(wf, { to: `${i}.${EMAIL}` })).id);
    expect(copiesOn(file, EMAIL)).toBeGreaterThan(0);
    const pruner = await openStore(`sqlite:${file}`);
    expect((await pruneRuns(pruner, { endedBefore: Date.now() + 1 })).runs).toHaveLength(5);
    expect(copiesOn(file, EMAIL)).toBe(0);
    await pruner.close();
    await engine.close();
  });

  it("a run made from it that has not ended keeps them all: nothing is deleted", async () => {
    const file = join(dir, "refused.db");
    const paused = workflow("paused", { state: z.object({ to: z.string() }), interruptBefore: ["send"] }).node("send", () => ({}), { next: "END" }).compile();
    const engine = createEngine({ store: await openStore(`sqlite:${file}`), workflows: [wf, paused] });
    const run = await engine.start(paused, { to: EMAIL });
    await run.wait({ timeoutMs: 5_000 });
    const [asked] = await run.pendingInterrupts();
    await engine.operator("ann").resolve(asked!.id, { decision: "approve" });
    expect((await run.wait({ timeoutMs: 5_000, until: "end" })).status).toBe("succeeded");
    const fork = await engine.operator("ann").fork(run.id, 0);
    expect((await engine.run(fork.result.runId).wait({ timeoutMs: 5_000 })).status).toBe("paused");
    await expect(deleteWithDescendants(engine.store, run.id)).rejects.toThrow(ConflictError);
    await expect(deleteWithDescendants(engine.store, run.id)).rejects.toThrow(`run ${fork.result.runId} is paused: only runs that have ended can be deleted`);
    expect((await engine.store.listRuns({})).runs).toHaveLength(2);
    await engine.close();
  });

  it("the runs that ran with it keep their documents in the blobs they shared with it, where its own are blanked", async () => {
    const file = join(dir, "shared.db");
    const engine = createEngine({ store: await openStore(`sqlite:${file}`), workflows: [wf] });
    // Started together, their commits are written in the same group transactions.
    const runs = await Promise.all([EMAIL, "kept.one@example.com", "kept.two@example.com"].map((to) => engine.start(wf, { to })));
    for (const run of runs) await settled(engine, run.id);
    const [gone, ...kept] = runs.map((r) => r.id);
    const history = (id: string) => Promise.all([engine.store.listCheckpoints(id), engine.store.listTasks(id), engine.store.readEvents({ runId: id })]);
    const before = await Promise.all(kept.map(history));
    /** The blobs' texts, whether each counts the events rows referring to it, and where each run's documents are. */
    const blobs = () => {
      const db = new Database(file, { readonly: true });
      try {
        const texts = new Map((db.prepare("SELECT id, refs, data FROM blobs").all() as { id: number; refs: number; data: string | Buffer }[]).map((b) => [b.id, { refs: b.refs, text: unpackText(b.data) }]));
        const rows = db.prepare("SELECT r.id AS run, e.events FROM events e JOIN runs r ON r.key = e.run_key").all() as { run: string; events: string | Buffer }[];
        const references = rows.map((row) => ({ run: row.run, ...readGroupReference(row.events)! }));
        const counted = [...texts].every(([id, b]) => references.filter((r) => r.blob === id).length === b.refs);
        return { texts, references, counted };
      } finally {
        db.close();
      }
    };
    const written = blobs();
    expect(written.counted).toBe(true);
    const ofGone = written.references.filter((r) => r.run === gone);
    const sharedBlobs = new Set(written.references.filter((r) => r.run !== gone && ofGone.some((g) => g.blob === r.blob)).map((r) => r.blob));
    expect(sharedBlobs.size).toBeGreaterThan(0);

    expect(await engine.store.deleteRun(gone!)).toEqual([gone]);
    const after = blobs();
    expect(after.counted).toBe(true);
    // Its documents are blanked where the blob stays (shared), and the blobs it alone used are gone.
    for (const r of ofGone) {
      const blob = after.texts.get(r.blob);
      if (sharedBlobs.has(r.blob)) expect(blob!.text.slice(r.offset, r.offset + r.length).trim()).toBe("");
      else expect(blob).toBeUndefined();
    }
    expect(await Promise.all(kept.map(history))).toEqual(before);
    await engine.close();
  });

  it("a run deleted in the group transaction that ended it leaves that group's blob too", async () => {
    const file = join(dir, "same-group.db");
    const store = await openStore(`sqlite:${file}`);
    const note = (runId: string, message: string): NewEvent => ({ runId, taskId: null, traceId: "t", spanId: null, type: "node.log", actor: "engine", payload: { node: "x", level: "info", message }, time: Date.now() });
    const [gone, kept] = ["run-gone", "run-kept"];
    for (const id of [gone, kept]) await store.createRun(newRun({ id, workflow: { name: "wf", version: "v1" }, state: {}, actor: "test" }));
    const fences = [(await store.claimRun({ owner: "w", leaseMs: 60_000, runId: gone }))!.fence, (await store.claimRun({ owner: "w", leaseMs: 60_000, runId: kept }))!.fence];
    const secret = `${EMAIL} `.repeat(20);
    // Issued in one turn: one group transaction ends the run, writes another's events, and deletes it.
    const writes = [
      store.commit({ id: "c-gone", runId: gone, fence: fences[0]!, events: [note(gone, secret)], run: { status: "succeeded", owner: null, leaseUntil: null, endedAt: Date.now() } }),
      store.commit({ id: "c-kept", runId: kept, fence: fences[1]!, events: [note(kept, "kept ".repeat(80))] }),
      store.deleteRun(gone),
    ];
    await Promise.all(writes);
    const db = new Database(file, { readonly: true });
    const blobs = db.prepare("SELECT refs, data FROM blobs").all() as { refs: number; data: string | Buffer }[];
    const rows = db.prepare("SELECT count(*) FROM events WHERE substr(events, 1, 1) = x'fe'").pluck().get();
    db.close();
    expect(blobs.reduce((n, b) => n + b.refs, 0)).toBe(rows);
    expect(blobs.some((b) => unpackText(b.data).includes(EMAIL))).toBe(false);
    expect((await store.readEvents({ runId: kept })).at(-1)!.payload).toMatchObject({ message: "kept ".repeat(80) });
    expect(await store.getRun(gone)).toBeUndefined();
    await store.close();
  });
});
