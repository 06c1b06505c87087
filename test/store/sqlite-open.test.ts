import { createHash } from "node:crypto";
import { chmodSync, chownSync, existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import Database from "better-sqlite3";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { SqliteStore, StoreError, Worker, WorkflowRegistry, actionRegistry, createEngine, openStore, workflow, type Store } from "../../engine/index.js";
import { newRun } from "../../engine/runtime/new-run.js";
import { groupReference, readGroupReference } from "../../engine/store/sqlite/packed-json.js";
import { READABLE_FROM_VERSION, SCHEMA_VERSION } from "../../engine/store/sqlite/schema.js";
import { lockHolder } from "../support/lock-holder.js";
import { kill, spawnScript } from "../support/processes.js";
import { storeFiles, storeWithRuns } from "../support/sqlite-files.js";

const { dir, fresh } = storeFiles("pitwall-open-");

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
        // A worker holding a run, which it has just written: its next write, at once, is refused too.
        const claim = await store.claimRun({ owner: "w", leaseMs: 60_000 });
        await store.renewLease("run-0", "w", claim!.fence, 60_000);
        for (const suffix of ["", "-wal", "-shm"]) rmSync(`${file}${suffix}`, { force: true });
        if (how !== "deleted") await storeWithRuns(file, 1);
        const said = `store ${file} was ${how} while this process had it open: what it reads and writes is no longer that store; restart this process`;
        expect(await storeError(store.lastEventSeq(), file)).toBe(said);
        expect(await storeError(store.claimRun({ owner: "w", leaseMs: 1000 }), file)).toBe(said);
        // A worker that holds runs goes no further with them either: its commits and renewals stop.
        expect(await storeError(store.commit({ id: "c-1", runId: "run-0", fence: claim!.fence }), file)).toBe(said);
        expect(await storeError(store.renewLease("run-0", "w", claim!.fence, 60_000), file)).toBe(said);
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
      const child = spawnScript("open-store", [`sqlite:${file}`, mode], asRoot ? { uid: 65534, gid: 65534 } : {});
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
