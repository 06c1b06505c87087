import fc from "fast-check";
import { describe, expect, it } from "vitest";
import {
  ConflictError,
  NotFoundError,
  StaleFenceError,
  pruneRuns,
  readState,
  type InterruptRecord,
  type NewEvent,
  type RunStatus,
  type Store,
  type TaskRecord,
  type WorkerRecord,
} from "../../engine/index.js";
import { checkpointId, newId } from "../../engine/ids.js";
import { newRun } from "../../engine/runtime/new-run.js";
import { newTaskRecord } from "../../engine/runtime/transitions.js";
import { applyOps, type ChannelOp, type State } from "../../engine/state/ops.js";
import { StateChain } from "../../engine/state/snapshot.js";
import { storeRoom } from "../../engine/store/rules.js";
import { checkpoint, pendingCommand } from "../support/records.js";
import { storeEach, storeFactories } from "../support/stores.js";

const WF = { name: "contract", version: "v-contract" };

function event(runId: string, type: NewEvent["type"] = "node.log", payload: Record<string, unknown> = { node: "x", level: "info", message: "hi" }): NewEvent {
  return { runId, taskId: null, traceId: "t", spanId: null, type, actor: "engine", payload, time: Date.now() } as NewEvent;
}

function task(runId: string, step: number, node: string, patch: Partial<TaskRecord> = {}): TaskRecord {
  return newTaskRecord({ id: `${runId}:${step}:${node}`, runId, step, node, index: null, ...patch });
}

function interrupt(runId: string, id: string, patch: Partial<InterruptRecord> = {}): InterruptRecord {
  return {
    id,
    runId,
    taskId: null,
    node: "ask",
    step: 1,
    kind: "node",
    request: { question: "ok?", decisions: ["approve", "reject"] },
    status: "pending",
    resolution: null,
    createdAt: Date.now(),
    ...patch,
  };
}

async function createRun(store: Store, state: State = { items: [] }, patch: { id?: string; parentRunId?: string; workflow?: typeof WF; tags?: Record<string, string> } = {}) {
  const id = patch.id ?? newId("run");
  await store.createRun(newRun({ id, workflow: patch.workflow ?? WF, state, actor: "test", ...(patch.parentRunId ? { parentRunId: patch.parentRunId } : {}), ...(patch.tags ? { tags: patch.tags } : {}) }));
  return (await store.getRun(id))!;
}

async function claimed(store: Store, runId: string) {
  const claim = await store.claimRun({ owner: "w1", leaseMs: 60_000, runId });
  if (!claim) throw new Error(`could not claim ${runId}`);
  return claim;
}

const commitId = () => newId("c", 12);

describe.each(storeFactories)("Store contract: $name", (factory) => {
  let store: Store;
  storeEach(factory, (opened) => (store = opened));

  describe("workflow versions", () => {
    it("stores each version once and lists them", async () => {
      const definition = { name: "wf", state: {}, start: "a", nodes: {}, limits: { maxSteps: 10, concurrency: 1 }, interruptBefore: [], interruptAfter: [] };
      await store.putWorkflow({ version: "v1", name: "wf", definition: definition as never, createdAt: 1 });
      await store.putWorkflow({ version: "v1", name: "wf", definition: { ...definition, name: "changed" } as never, createdAt: 2 });
      expect((await store.getWorkflow("v1"))?.definition.name).toBe("wf");
      expect(await store.getWorkflow("nope")).toBeUndefined();
      expect((await store.listWorkflows()).map((w) => w.version)).toEqual(["v1"]);
    });
  });

  describe("runs", () => {
    it("creates a run with its input checkpoint and first event, and refuses a second run with the same id", async () => {
      const run = await createRun(store, { items: ["a"] }, { id: "run-one" });
      expect(run).toMatchObject({ id: "run-one", status: "queued", head: "run-one:0", headN: 0, eventCount: 1, fence: 0 });
      expect(await readState(store, run.id, 0)).toEqual({ items: ["a"] });
      const events = await store.readEvents({ runId: run.id });
      expect(events.map((e) => [e.type, e.runSeq])).toEqual([["run.created", 1]]);
      await expect(createRun(store, {}, { id: "run-one" })).rejects.toBeInstanceOf(ConflictError);
      expect(await store.getRun("missing")).toBeUndefined();
    });

    it("lists runs most recently updated first, with filters and a cursor", async () => {
      const a = await createRun(store, {}, { id: "run-a" });
      await new Promise((r) => setTimeout(r, 5));
      const b = await createRun(store, {}, { id: "run-b", workflow: { name: "other", version: "v2" } });
      await new Promise((r) => setTimeout(r, 5));
      const c = await createRun(store, {}, { id: "run-c", parentRunId: a.id });
      await claimed(store, c.id);
      expect((await store.listRuns()).runs.map((r) => r.id)).toEqual(["run-c", "run-b", "run-a"]);
      expect((await store.listRuns({ status: "running" })).runs.map((r) => r.id)).toEqual(["run-c"]);
      expect((await store.listRuns({ status: ["queued"] })).runs.map((r) => r.id)).toEqual(["run-b", "run-a"]);
      expect((await store.listRuns({ workflow: "other" })).runs.map((r) => r.id)).toEqual([b.id]);
      expect((await store.listRuns({ parentRunId: a.id })).runs.map((r) => r.id)).toEqual([c.id]);
      expect((await store.listRuns({ parentRunId: null })).runs.map((r) => r.id)).toEqual(["run-b", "run-a"]);
      const page1 = await store.listRuns({ limit: 2 });
      expect(page1.runs.map((r) => r.id)).toEqual(["run-c", "run-b"]);
      const page2 = await store.listRuns({ limit: 2, cursor: page1.nextCursor! });
      expect(page2.runs.map((r) => r.id)).toEqual(["run-a"]);
      expect(page2.nextCursor).toBeUndefined();
      // Several statuses, page by page: one run a page, in the same order as one listing gives them.
      const statuses: RunStatus[] = ["queued", "running"];
      const paged: string[] = [];
      for (let cursor: string | undefined, pages = 0; pages === 0 || cursor; pages++) {
        const page = await store.listRuns({ status: statuses, limit: 1, ...(cursor ? { cursor } : {}) });
        paged.push(...page.runs.map((r) => r.id));
        cursor = page.nextCursor;
      }
      expect(paged).toEqual(["run-c", "run-b", "run-a"]);
      expect((await store.listRuns({ status: statuses })).runs.map((r) => r.id)).toEqual(paged);
      expect(await store.countRuns()).toMatchObject({ queued: 2, running: 1, paused: 0, succeeded: 0 });
    });
    it("keeps a run's tags and lists the runs that have every tag asked for", async () => {
      await createRun(store, {}, { id: "run-t1", tags: { ticket: "T-1", team: "ops" } });
      await createRun(store, {}, { id: "run-t2", tags: { ticket: "T-2", team: "ops", "odd.name-1": "a \"quoted\" value" } });
      await createRun(store, {}, { id: "run-none" });
      expect((await store.getRun("run-t1"))!.tags).toEqual({ ticket: "T-1", team: "ops" });
      expect((await store.getRun("run-none"))!.tags).toBeUndefined();
      const ids = async (tags: Record<string, string>) => (await store.listRuns({ tags })).runs.map((r) => r.id).sort();
      expect(await ids({ team: "ops" })).toEqual(["run-t1", "run-t2"]);
      expect(await ids({ team: "ops", ticket: "T-2" })).toEqual(["run-t2"]);
      expect(await ids({ "odd.name-1": 'a "quoted" value' })).toEqual(["run-t2"]);
      expect(await ids({ ticket: "T-3" })).toEqual([]);
      const page = await store.listRuns({ tags: { team: "ops" }, limit: 1 });
      expect(page.runs).toHaveLength(1);
      expect((await store.listRuns({ tags: { team: "ops" }, limit: 1, cursor: page.nextCursor! })).runs).toHaveLength(1);
    });
    it("lists the runs on a version starting with any of the prefixes asked for, a page at a time past the runs of others", async () => {
      const on = (version: string) => ({ name: "contract", version });
      await createRun(store, {}, { id: "run-v1", workflow: on("aaaa1111") });
      await createRun(store, {}, { id: "run-v2", workflow: on("aaaa2222") });
      for (let i = 0; i < 5; i++) await createRun(store, {}, { id: `run-other-${i}`, workflow: on("bbbb1111") });
      await createRun(store, {}, { id: "run-v3", workflow: { name: "else", version: "aaaa3333" } });
      const ids = async (versions: string[], more: { workflow?: string; status?: "queued" | "running" } = {}) => (await store.listRuns({ versions, ...more })).runs.map((r) => r.id).sort();
      expect(await ids(["aaaa"])).toEqual(["run-v1", "run-v2", "run-v3"]);
      expect(await ids(["aaaa2", "cccc"])).toEqual(["run-v2"]);
      expect(await ids(["aaaa1111"])).toEqual(["run-v1"]);
      expect(await ids(["aaaa"], { workflow: "contract" })).toEqual(["run-v1", "run-v2"]);
      expect(await ids(["aaaa"], { status: "running" })).toEqual([]);
      // A prefix is the version's first characters, never a pattern.
      expect(await ids(["a%"])).toEqual([]);
      expect(await ids(["aaaa_111"])).toEqual([]);
      expect(await ids([])).toEqual([]);
      const first = await store.listRuns({ versions: ["aaaa"], limit: 2 });
      const rest = await store.listRuns({ versions: ["aaaa"], limit: 2, cursor: first.nextCursor! });
      expect([first.runs.length, rest.runs.length, rest.nextCursor]).toEqual([2, 1, undefined]);
      expect([...first.runs, ...rest.runs].map((r) => r.id).sort()).toEqual(["run-v1", "run-v2", "run-v3"]);
    });
  });

  describe("claims, leases and fencing", () => {
    it("claims a queued run once, with a fencing token that only grows", async () => {
      const a = await createRun(store);
      const b = await createRun(store);
      const first = await store.claimRun({ owner: "w1", leaseMs: 60_000 });
      const second = await store.claimRun({ owner: "w2", leaseMs: 60_000 });
      expect(new Set([first!.run.id, second!.run.id])).toEqual(new Set([a.id, b.id]));
      expect(second!.fence).toBeGreaterThan(first!.fence);
      expect(first!.recovered).toBe(false);
      expect(await store.claimRun({ owner: "w3", leaseMs: 60_000 })).toBeUndefined();
      const run = await store.getRun(first!.run.id);
      expect(run).toMatchObject({ status: "running", owner: "w1", fence: first!.fence });
      const claimedEvents = await store.readEvents({ runId: run!.id, types: ["run.claimed"] });
      expect(claimedEvents.map((e) => e.payload)).toEqual([{ worker: "w1", fence: first!.fence, recovered: false }]);
    });

    it("gives with a claim, when it does, the run's head checkpoint as a read of it gives it", async () => {
      const run = await createRun(store, { items: ["a"], note: { deep: [1, 2] } });
      const claim = await claimed(store, run.id);
      if (factory.name === "sqlite") expect(claim.head).toBeDefined();
      if (claim.head) expect(claim.head).toEqual(await store.getCheckpoint(run.head!));
    });

    it("gives claims made at once a run each, never one run twice; the claims beyond the runs there are get none", async () => {
      // More runs than one look of the SQLite store finds (16): the later claims look again while
      // the earlier ones are not yet written.
      const runs = await Promise.all(Array.from({ length: 20 }, () => createRun(store)));
      const claims = await Promise.all(Array.from({ length: 24 }, () => store.claimRun({ owner: "w1", leaseMs: 60_000 })));
      const taken = claims.filter((c) => c !== undefined);
      expect(taken.map((c) => c.run.id).sort()).toEqual(runs.map((r) => r.id).sort());
      expect(new Set(taken.map((c) => c.fence)).size).toBe(20);
      for (const claim of taken) expect(await store.getRun(claim.run.id)).toMatchObject({ status: "running", owner: "w1", fence: claim.fence });
    });

    it("respects the version filter, a specific run id, wake times and unfinished children", async () => {
      const other = await createRun(store, {}, { workflow: { name: "x", version: "other" } });
      expect(await store.claimRun({ owner: "w", leaseMs: 1000, versions: [WF.version] })).toBeUndefined();
      expect((await store.claimRun({ owner: "w", leaseMs: 1000, runId: other.id }))?.run.id).toBe(other.id);

      const parent = await createRun(store);
      const child = await createRun(store, {}, { parentRunId: parent.id });
      const p = await claimed(store, parent.id);
      await store.commit({ id: commitId(), runId: parent.id, fence: p.fence, run: { status: "queued", owner: null, leaseUntil: null, waitingOn: child.id } });
      const c = await claimed(store, child.id);
      expect(await store.claimRun({ owner: "w", leaseMs: 1000, runId: parent.id })).toBeUndefined();
      await store.commit({ id: commitId(), runId: child.id, fence: c.fence, run: { status: "succeeded", owner: null, leaseUntil: null }, wake: [parent.id] });
      expect((await store.claimRun({ owner: "w", leaseMs: 1000, runId: parent.id }))?.run.id).toBe(parent.id);

      const timer = await createRun(store);
      const t = await claimed(store, timer.id);
      await store.commit({ id: commitId(), runId: timer.id, fence: t.fence, run: { status: "queued", owner: null, leaseUntil: null, wakeAt: Date.now() + 150 } });
      expect(await store.claimRun({ owner: "w", leaseMs: 1000, runId: timer.id })).toBeUndefined();
      await new Promise((r) => setTimeout(r, 200));
      expect((await store.claimRun({ owner: "w", leaseMs: 1000, runId: timer.id }))?.run.id).toBe(timer.id);
    });

    it("a commit that moves a run to another version (an upgrade) moves it for claims: the new version's claims take it, the old one's no longer do", async () => {
      const queued = await createRun(store);
      const parked = await createRun(store);
      const p = await claimed(store, parked.id);
      await store.commit({ id: commitId(), runId: parked.id, fence: p.fence, run: { status: "paused", owner: null, leaseUntil: null } });
      for (const run of [queued, (await store.getRun(parked.id))!]) {
        await store.commit({ id: commitId(), runId: run.id, fence: run.fence, fenceOut: true, expectStatus: [run.status], run: { version: "v-next" }, events: [event(run.id)] });
      }
      expect((await store.getRun(queued.id))!.version).toBe("v-next");
      // Taken by a fleet that runs only the new version (no claim of the old one looked first).
      const taken = await store.claimRun({ owner: "w", leaseMs: 1000, versions: ["v-next"] });
      expect(taken?.run).toMatchObject({ id: queued.id, version: "v-next" });
      await store.commit({ id: commitId(), runId: queued.id, fence: taken!.fence, run: { status: "queued", owner: null, leaseUntil: null } });
      expect(await store.claimRun({ owner: "w", leaseMs: 1000, versions: [WF.version] })).toBeUndefined();
      expect(await store.claimRun({ owner: "w", leaseMs: 1000, versions: [WF.version], runId: queued.id })).toBeUndefined();
      expect((await store.claimRun({ owner: "w", leaseMs: 1000, versions: ["v-next"] }))?.run.id).toBe(queued.id);
      // Once a paused run is queued again, it is offered under the version it is on now.
      const resumed = (await store.getRun(parked.id))!;
      await store.commit({ id: commitId(), runId: parked.id, fence: resumed.fence, run: { status: "queued" } });
      expect(await store.claimRun({ owner: "w", leaseMs: 1000, versions: [WF.version] })).toBeUndefined();
      expect((await store.claimRun({ owner: "w", leaseMs: 1000, versions: ["v-next"] }))?.run).toMatchObject({ id: parked.id, version: "v-next" });
      expect((await store.listRuns({ workflow: WF.name })).runs.map((r) => r.version)).toEqual(["v-next", "v-next"]);
    });

    it("lets another worker take over a run whose lease expired; the old owner can no longer write", async () => {
      const run = await createRun(store);
      const old = await store.claimRun({ owner: "w1", leaseMs: 100 });
      await expect(store.claimRun({ owner: "w2", leaseMs: 1000 })).resolves.toBeUndefined();
      await new Promise((r) => setTimeout(r, 150));
      // Not by a worker that names it as its own (it executes it still, the store having been away).
      await expect(store.claimRun({ owner: "w2", leaseMs: 1000, exclude: [run.id] })).resolves.toBeUndefined();
      await expect(store.claimRun({ owner: "w2", leaseMs: 1000, runId: run.id, exclude: [run.id] })).resolves.toBeUndefined();
      const taken = await store.claimRun({ owner: "w2", leaseMs: 1000, exclude: ["run-other"] });
      expect(taken).toMatchObject({ recovered: true });
      expect(taken!.fence).toBeGreaterThan(old!.fence);
      expect((await store.getRun(run.id))?.recoveries).toBe(1);
      const before = await store.readEvents({ runId: run.id });
      await expect(
        store.commit({ id: commitId(), runId: run.id, fence: old!.fence, tasks: [task(run.id, 1, "late")], events: [event(run.id)] }),
      ).rejects.toBeInstanceOf(StaleFenceError);
      await expect(store.renewLease(run.id, "w1", old!.fence, 1000)).rejects.toBeInstanceOf(StaleFenceError);
      expect(await store.getTask(`${run.id}:1:late`)).toBeUndefined();
      expect(await store.readEvents({ runId: run.id })).toEqual(before);
    });

    it("a commit that fences out (an operator's, on a run nobody holds) gives the run a new token: the old holder can no longer write", async () => {
      const run = await createRun(store);
      const old = await store.claimRun({ owner: "w1", leaseMs: 100 });
      await store.commit({ id: commitId(), runId: run.id, fence: old!.fence, fenceOut: true, run: { status: "canceled", owner: null, leaseUntil: null }, events: [event(run.id)] });
      const fenced = await store.getRun(run.id);
      expect(fenced!.fence).toBeGreaterThan(old!.fence);
      await expect(store.commit({ id: commitId(), runId: run.id, fence: old!.fence, run: { status: "succeeded" } })).rejects.toBeInstanceOf(StaleFenceError);
      await expect(store.renewLease(run.id, "w1", old!.fence, 1000)).rejects.toBeInstanceOf(StaleFenceError);
      expect(await store.getRun(run.id)).toEqual(fenced);
      // Tokens only grow: a later claim's is greater still.
      const next = await createRun(store);
      expect((await store.claimRun({ owner: "w2", leaseMs: 1000, runId: next.id }))!.fence).toBeGreaterThan(fenced!.fence);
    });

    it("gives back tasks, events and checkpoints exactly as committed, whatever their shape", async () => {
      const run = await createRun(store);
      const other = await createRun(store);
      const c = await claimed(store, run.id);
      const retried = task(run.id, 1, "fetch", {
        status: "succeeded",
        worker: "w2",
        startedAt: 100,
        endedAt: 180,
        retriesFrom: 1,
        route: "ok",
        attempts: [
          { n: 1, worker: "w1", startedAt: 100, endedAt: 120, outcome: "failed", error: "boom", code: "TIMEOUT" },
          { n: 2, worker: "w1", startedAt: 130, endedAt: 150, outcome: "interrupted" },
          { n: 3, worker: "w2", startedAt: 160, endedAt: 180, outcome: "succeeded" },
        ],
      });
      const running = task(run.id, 1, "think", { status: "running", worker: "w1", startedAt: 200, attempts: [{ n: 1, worker: "w1", startedAt: 200, endedAt: null, outcome: null }] });
      const mapped = { ...task(run.id, 1, "each"), id: `${run.id}:1:each#3`, index: 3, input: { url: "u" }, idempotencyKey: "custom-key" };
      const renamed = { ...task(run.id, 1, "odd"), id: `${run.id}:1:not-odd`, attempts: [{ n: 7, worker: "w9", startedAt: 5, endedAt: 6, outcome: "canceled" as const }] };
      const events: NewEvent[] = [
        { ...event(run.id, "task.started", { node: "think", attempt: 1 }), taskId: running.id, spanId: "s1", actor: "worker:w1", time: 1000 },
        { ...event(run.id), taskId: `${other.id}:4:elsewhere`, traceId: "another-trace", actor: "operator:ann", time: 1001 },
        { ...event(run.id), taskId: ":odd", actor: "worker:w1", time: 1000 },
        { ...event(run.id), actor: "worker:w1", time: 999 },
        // Text beyond ASCII, and longer than any window a store might compress it with.
        { ...event(run.id, "node.log", { message: `Grüße, 世界 🚀 ${Array.from({ length: 400 }, (_, i) => `line ${i * 7919 % 1000}`).join("\n")}` }), actor: "worker:w1", time: 1000 },
      ];
      const cp = checkpoint(run.id, 1, [["items", "append", ["a"]]], {
        source: "fork",
        parentId: null,
        step: 7,
        control: { finished: [{ node: "a", route: "left" }], barriers: { join: ["a"] }, visits: { a: 2 } },
        next: ["join"],
      });
      await store.commit({ id: commitId(), runId: run.id, fence: c.fence, checkpoint: cp, tasks: [retried, running, mapped, renamed], events });

      expect(await store.getCheckpoint(cp.id)).toEqual(cp);
      for (const t of [retried, running, mapped, renamed]) expect(await store.getTask(t.id)).toEqual(t);
      const stored = (await store.readEvents({ runId: run.id })).slice(-events.length);
      expect(stored.map(({ seq: _seq, runSeq: _runSeq, ...e }) => e)).toEqual(events);
    });

    it("applies writes issued together each on its own: a refused one leaves no trace, the others land", async () => {
      const runs = [await createRun(store), await createRun(store), await createRun(store)];
      const claims = await Promise.all(runs.map((r) => claimed(store, r.id)));
      const before = await store.readEvents({ runId: runs[1]!.id });
      const results = await Promise.allSettled(
        runs.map((run, i) =>
          store.commit({ id: commitId(), runId: run.id, fence: claims[i]!.fence - (i === 1 ? 1 : 0), tasks: [task(run.id, 1, "work")], events: [event(run.id)] }),
        ),
      );
      expect(results.map((r) => r.status)).toEqual(["fulfilled", "rejected", "fulfilled"]);
      expect((results[1] as PromiseRejectedResult).reason).toBeInstanceOf(StaleFenceError);
      expect(await store.getTask(`${runs[1]!.id}:1:work`)).toBeUndefined();
      expect(await store.readEvents({ runId: runs[1]!.id })).toEqual(before);
      for (const i of [0, 2]) {
        expect(await store.getTask(`${runs[i]!.id}:1:work`)).toBeDefined();
        expect((await store.readEvents({ runId: runs[i]!.id })).at(-1)?.type).toBe("node.log");
      }
    });

    it("renews a lease so that the run is not taken over", async () => {
      const run = await createRun(store);
      const claim = await store.claimRun({ owner: "w1", leaseMs: 150 });
      await new Promise((r) => setTimeout(r, 100));
      await store.renewLease(run.id, "w1", claim!.fence, 150);
      await new Promise((r) => setTimeout(r, 100));
      expect(await store.claimRun({ owner: "w2", leaseMs: 1000 })).toBeUndefined();
    });

    it("takes over no run when asked not to (a worker that has just regained its store), and names the owner it takes a run from", async () => {
      const run = await createRun(store);
      await store.claimRun({ owner: "w1", leaseMs: 50 });
      await new Promise((r) => setTimeout(r, 100));
      expect(await store.claimRun({ owner: "w2", leaseMs: 1000, takeOver: false })).toBeUndefined();
      expect(await store.claimRun({ owner: "w2", leaseMs: 1000, runId: run.id, takeOver: false })).toBeUndefined();
      const queued = await createRun(store);
      expect(await store.claimRun({ owner: "w2", leaseMs: 1000, takeOver: false })).toMatchObject({ run: { id: queued.id }, recovered: false });
      expect((await store.claimRun({ owner: "w2", leaseMs: 1000 }))?.takenFrom).toBe("w1");
      expect((await store.getRun(queued.id))?.owner).toBe("w2");
    });

    it("takes the workflows in turn, and each workflow's runs oldest first", async () => {
      const workflows = { a: { name: "fair-a", version: "v-fair-a" }, b: { name: "fair-b", version: "v-fair-b" }, c: { name: "fair-c", version: "v-fair-c" } };
      for (const wf of Object.values(workflows)) {
        const definition = { name: wf.name, state: {}, start: "a", nodes: {}, limits: { maxSteps: 10, concurrency: 1 }, interruptBefore: [], interruptAfter: [] };
        await store.putWorkflow({ version: wf.version, name: wf.name, definition: definition as never, createdAt: 1 });
      }
      // A backlog of one workflow queued before the others' runs.
      const order: [keyof typeof workflows, string][] = [["a", "a1"], ["a", "a2"], ["a", "a3"], ["a", "a4"], ["c", "c1"], ["b", "b1"], ["b", "b2"]];
      for (const [wf, id] of order) {
        await createRun(store, {}, { id: `run-fair-${id}`, workflow: workflows[wf] });
        await new Promise((r) => setTimeout(r, 3));
      }
      const claims: string[] = [];
      for (let claim = await store.claimRun({ owner: "w", leaseMs: 60_000 }); claim; claim = await store.claimRun({ owner: "w", leaseMs: 60_000 })) {
        claims.push(claim.run.id.replace("run-fair-", ""));
      }
      // Whichever workflow goes first, the others follow in name order and none waits for a backlog.
      const first = claims.slice(0, 3).map((id) => id[0]).join("");
      expect(["abc", "bca", "cab"]).toContain(first);
      const rounds = { abc: ["a1", "b1", "c1", "a2", "b2", "a3", "a4"], bca: ["b1", "c1", "a1", "b2", "a2", "a3", "a4"], cab: ["c1", "a1", "b1", "a2", "b2", "a3", "a4"] };
      expect(claims).toEqual(rounds[first as keyof typeof rounds]);
      // Limited to some versions, a worker takes only those, and the same turns among them.
      await createRun(store, {}, { id: "run-fair-a5", workflow: workflows.a });
      await createRun(store, {}, { id: "run-fair-b3", workflow: workflows.b });
      expect((await store.claimRun({ owner: "w", leaseMs: 60_000, versions: [workflows.b.version] }))?.run.id).toBe("run-fair-b3");
    });

    it("holds a workflow to its runsAtOnce: every version counts, another workflow's runs are taken meanwhile, a take-over is never held back, a parked run does not count", async () => {
      const versions = { lim1: { name: "lim", version: "v-lim-1" }, lim2: { name: "lim", version: "v-lim-2" }, other: { name: "other", version: "v-other" } };
      for (const wf of Object.values(versions)) {
        const definition = { name: wf.name, state: {}, start: "a", nodes: {}, limits: { maxSteps: 10, concurrency: 1 }, interruptBefore: [], interruptAfter: [] };
        await store.putWorkflow({ version: wf.version, name: wf.name, definition: definition as never, createdAt: 1 });
      }
      const order: [keyof typeof versions, string][] = [["lim1", "l1"], ["lim2", "l2"], ["lim1", "l3"], ["lim2", "l4"], ["other", "o1"], ["other", "o2"]];
      for (const [wf, id] of order) {
        await createRun(store, {}, { id: `run-at-once-${id}`, workflow: versions[wf] });
        await new Promise((r) => setTimeout(r, 3));
      }
      const runsAtOnce = { lim: 2 };
      const claimAll = async (owner: string, leaseMs: number) => {
        const claims: { id: string; recovered: boolean; fence: number }[] = [];
        for (let c = await store.claimRun({ owner, leaseMs, runsAtOnce }); c; c = await store.claimRun({ owner, leaseMs, runsAtOnce })) {
          claims.push({ id: c.run.id.replace("run-at-once-", ""), recovered: c.recovered, fence: c.fence });
        }
        return claims;
      };
      // Two of lim (of either version, the oldest first), and the other workflow's runs besides.
      const first = await claimAll("w1", 300);
      expect(first.map((c) => c.id).sort()).toEqual(["l1", "l2", "o1", "o2"]);
      expect(await store.claimRun({ owner: "w1", leaseMs: 300, runsAtOnce, runId: "run-at-once-l3" })).toBeUndefined();
      expect((await store.listRuns({ status: "running", workflow: "lim" })).runs).toHaveLength(2);
      // Leases run out: take-overs of lim's running runs are not held back, and add none.
      await new Promise((r) => setTimeout(r, 400));
      const second = await claimAll("w2", 60_000);
      expect(second.map((c) => c.id).sort()).toEqual(["l1", "l2", "o1", "o2"]);
      expect(second.every((c) => c.recovered)).toBe(true);
      const fence = (id: string) => second.find((c) => c.id === id)!.fence;
      // A run of lim parked on a timer is not running: the next one takes its place.
      await store.commit({ id: newId("commit"), runId: "run-at-once-l1", fence: fence("l1"), run: { status: "queued", owner: null, leaseUntil: null, wakeAt: Date.now() + 60_000 } });
      expect((await store.claimRun({ owner: "w2", leaseMs: 60_000, runsAtOnce }))?.run.id).toBe("run-at-once-l3");
      expect(await store.claimRun({ owner: "w2", leaseMs: 60_000, runsAtOnce })).toBeUndefined();
      // One that ends makes room for the last; a worker given no limit is not held to one.
      await store.commit({ id: newId("commit"), runId: "run-at-once-l2", fence: fence("l2"), run: { status: "succeeded", owner: null, leaseUntil: null } });
      expect((await store.claimRun({ owner: "w2", leaseMs: 60_000, runsAtOnce }))?.run.id).toBe("run-at-once-l4");
      await createRun(store, {}, { id: "run-at-once-l5", workflow: versions.lim1 });
      expect(await store.claimRun({ owner: "w2", leaseMs: 60_000, runsAtOnce })).toBeUndefined();
      expect((await store.claimRun({ owner: "w3", leaseMs: 60_000 }))?.run.id).toBe("run-at-once-l5");
    });
  });

  describe("workers", () => {
    const worker = (id: string, patch: Partial<WorkerRecord> = {}): WorkerRecord => ({
      id,
      instance: `${id}-1`,
      host: "host-1",
      pid: 100,
      startedAt: Date.now(),
      lastSeen: 0,
      stoppedAt: null,
      heartbeatMs: 5000,
      leaseMs: 15_000,
      concurrency: 16,
      running: 0,
      workflows: [{ name: "wf", version: "v1" }],
      only: null,
      actions: [],
      ...patch,
    });

    it("keeps each worker's last heartbeat, with the store's time, and gives back the record each replaces", async () => {
      const before = Date.now();
      expect(await store.listWorkers()).toEqual([]);
      expect(await store.putWorker(worker("m1"))).toBeUndefined();
      await new Promise((r) => setTimeout(r, 5));
      expect(await store.putWorker(worker("m2", { workflows: [], only: ["a", "b"] }))).toBeUndefined();
      await new Promise((r) => setTimeout(r, 5));
      const replaced = await store.putWorker(worker("m1", { instance: "m1-2", running: 3 }));
      expect(replaced).toMatchObject({ id: "m1", instance: "m1-1", running: 0 });
      expect(replaced!.lastSeen).toBeGreaterThanOrEqual(before - 1000);
      const listed = await store.listWorkers();
      expect(listed.map((w) => [w.id, w.instance, w.running])).toEqual([["m1", "m1-2", 3], ["m2", "m2-1", 0]]);
      expect(listed[1]).toMatchObject({ workflows: [], only: ["a", "b"], actions: [], stoppedAt: null });
      for (const w of listed) expect(Math.abs(w.lastSeen - Date.now())).toBeLessThan(2_000);
    });
  });

  describe("atomic commits", () => {
    it("applies a checkpoint, tasks, interrupts, events and the run patch together", async () => {
      const run = await createRun(store, { items: [] });
      const { fence } = await claimed(store, run.id);
      const written = {
        checkpoint: checkpoint(run.id, 1, [["items", "append", ["x"]]], { actor: "worker:w1", nodes: ["plan"], next: ["ask"] }),
        done: task(run.id, 1, "plan", { status: "succeeded", worker: "w1", startedAt: 5, endedAt: 9, attempts: [{ n: 1, worker: "w1", startedAt: 5, endedAt: 9, outcome: "succeeded" }] }),
      };
      const result = await store.commit({
        id: commitId(),
        runId: run.id,
        fence,
        expectHead: run.head,
        checkpoint: written.checkpoint,
        tasks: [written.done, task(run.id, 2, "ask", { status: "interrupted" })],
        interrupts: [interrupt(run.id, "int-1", { step: 2 })],
        events: [event(run.id, "interrupt.created", { interruptId: "int-1", kind: "node", node: "ask" }), event(run.id)],
        run: { status: "paused", reason: "interrupt", owner: null, leaseUntil: null },
      });
      expect(result.events.map((e) => e.runSeq)).toEqual([3, 4]);
      expect(result.events[1]!.seq).toBeGreaterThan(result.events[0]!.seq);
      const after = await store.getRun(run.id);
      expect(after).toMatchObject({ status: "paused", reason: "interrupt", head: `${run.id}:1`, headN: 1, step: 1, pendingInterrupts: 1, eventCount: 4 });
      expect(await readState(store, run.id, 1)).toEqual({ items: ["x"] });
      expect((await store.getTask(`${run.id}:2:ask`))?.status).toBe("interrupted");
      expect((await store.listTasks(run.id, { step: 2 })).map((t) => t.node)).toEqual(["ask"]);
      expect((await store.getInterrupt("int-1"))?.status).toBe("pending");
      // Read back as written, however the store keeps them.
      expect(await store.getCheckpoint(`${run.id}:1`)).toEqual(written.checkpoint);
      expect(await store.getTask(written.done.id)).toEqual(written.done);
      expect((await store.listTasks(run.id, { step: 1 }))).toEqual([written.done]);
      // The tasks of the steps after one: a fork's later history, the console's steps since its last look.
      const ids = async (afterStep: number) => (await store.listTasks(run.id, { afterStep })).map((t) => t.id);
      expect(await ids(1)).toEqual([`${run.id}:2:ask`]);
      expect(await ids(0)).toEqual([written.done.id, `${run.id}:2:ask`]);
      expect(await ids(-1000)).toEqual([written.done.id, `${run.id}:2:ask`]);
      expect(await ids(2)).toEqual([]);
      expect(await store.listTasks("run-none", { afterStep: 0 })).toEqual([]);
    });

    it("stores a fan-out of hundreds of tasks committed at once, and the commit that settles them all", async () => {
      const run = await createRun(store);
      const { fence } = await claimed(store, run.id);
      const started = Array.from({ length: 150 }, (_, i) => task(run.id, 1, `map#${i}`, { index: i, status: "running", worker: "w1", startedAt: 5 }));
      await store.commit({ id: commitId(), runId: run.id, fence, tasks: started, events: [event(run.id)] });
      const byIndex = (tasks: TaskRecord[]) => tasks.map((t) => [t.index, t.status]).sort((a, b) => Number(a[0]) - Number(b[0]));
      expect(byIndex(await store.listTasks(run.id, { step: 1 }))).toEqual(started.map((t) => [t.index, "running"]));
      // The same task twice in one commit: the later record is the one kept.
      const settled = started.map((t) => ({ ...t, status: "succeeded" as const, endedAt: 9 }));
      await store.commit({ id: commitId(), runId: run.id, fence, tasks: [{ ...settled[0]!, status: "failed", error: { message: "first" } }, ...settled], events: [event(run.id)] });
      const stored = await store.listTasks(run.id, { step: 1 });
      expect(stored).toHaveLength(150);
      expect(stored.every((t) => t.status === "succeeded" && t.endedAt === 9 && t.error === null)).toBe(true);
    });

    it("refuses a commit whose preconditions fail, writing nothing", async () => {
      const run = await createRun(store, { items: [] });
      const { fence } = await claimed(store, run.id);
      await store.commit({ id: commitId(), runId: run.id, fence, interrupts: [interrupt(run.id, "int-done", { status: "resolved", resolution: { decision: "approve", actor: "operator:a", at: 1 } })] });
      const events = await store.readEvents({ runId: run.id });
      const attempts = [
        { expectHead: "somewhere-else" },
        { expectStatus: ["paused" as const] },
        { expectPending: ["int-done"] },
        { expectPending: ["int-missing"] },
        { checkpoint: checkpoint(run.id, 5, []) },
      ];
      for (const extra of attempts) {
        await expect(
          store.commit({ id: commitId(), runId: run.id, fence, tasks: [task(run.id, 1, "ghost")], events: [event(run.id)], run: { status: "failed" }, ...extra }),
        ).rejects.toBeInstanceOf(ConflictError);
      }
      // A checkpoint ahead of the head, from the run's owner: the store forgot what it acknowledged.
      await expect(store.commit({ id: commitId(), runId: run.id, fence, checkpoint: checkpoint(run.id, 5, []) })).rejects.toThrow(
        `checkpoint 5 of run ${run.id} does not follow its head 0: the store has lost this run's checkpoints 1 to 4, which it had acknowledged (restarted from an older snapshot, or restored from a backup)`,
      );
      await expect(store.commit({ id: commitId(), runId: "run-missing", fence, events: [] })).rejects.toBeInstanceOf(NotFoundError);
      expect(await store.getTask(`${run.id}:1:ghost`)).toBeUndefined();
      expect(await store.readEvents({ runId: run.id })).toEqual(events);
      expect((await store.getRun(run.id))?.status).toBe("running");
    });

    it("refuses a commit holding a record of another run, writing nothing", async () => {
      const run = await createRun(store);
      const other = await createRun(store);
      const { fence } = await claimed(store, run.id);
      const events = await store.readEvents({ runId: run.id });
      const strays = [
        { checkpoint: checkpoint(other.id, 1, []) },
        { tasks: [task(run.id, 1, "mine"), task(other.id, 1, "theirs")] },
        { interrupts: [interrupt(other.id, "int-theirs")] },
        { events: [event(run.id), event(other.id)] },
      ];
      for (const stray of strays) {
        await expect(store.commit({ id: commitId(), runId: run.id, fence, events: [event(run.id)], ...stray })).rejects.toThrow(
          `a record of run ${other.id} was committed with run ${run.id}`,
        );
      }
      expect(await store.listTasks(run.id)).toEqual([]);
      expect(await store.listTasks(other.id)).toEqual([]);
      expect(await store.getInterrupt("int-theirs")).toBeUndefined();
      expect(await store.readEvents({ runId: run.id })).toEqual(events);
      expect((await store.getRun(run.id))?.headN).toBe(0);
    });

    it("says who resolved an interrupt that is no longer pending", async () => {
      const run = await createRun(store);
      const { fence } = await claimed(store, run.id);
      await store.commit({ id: commitId(), runId: run.id, fence, interrupts: [interrupt(run.id, "int-x")] });
      await store.commit({
        id: commitId(),
        runId: run.id,
        fence,
        expectPending: ["int-x"],
        interrupts: [interrupt(run.id, "int-x", { status: "resolved", resolution: { decision: "approve", actor: "operator:ann", at: Date.now() } })],
      });
      const second = store.commit({ id: commitId(), runId: run.id, fence, expectPending: ["int-x"] });
      await expect(second).rejects.toThrow(/already resolved by operator:ann/);
      expect((await store.getRun(run.id))?.pendingInterrupts).toBe(0);
    });

    it("lists the deadlines of the runs not ended and of the pending interrupts, the soonest first, and none of a run ended or an interrupt answered", async () => {
      const make = async (deadlineSeconds?: number) => {
        const id = newId("run");
        await store.createRun(newRun({ id, workflow: WF, state: { items: [] }, actor: "test", ...(deadlineSeconds !== undefined ? { deadlineSeconds } : {}) }));
        return (await store.getRun(id))!;
      };
      const [later, sooner, asking, ended] = [await make(600), await make(60), await make(), await make(30)];
      const end = async (runId: string, status: "succeeded" | "canceled") => {
        const { fence } = await claimed(store, runId);
        await store.commit({ id: commitId(), runId, fence, run: { status, owner: null, leaseUntil: null } });
      };
      await end(ended.id, "succeeded");
      const { fence } = await claimed(store, asking.id);
      const deadline = { at: Date.now() + 5_000, decision: "approve" };
      const [due, open] = [`int-due-${asking.id}`, `int-open-${asking.id}`];
      await store.commit({ id: commitId(), runId: asking.id, fence, interrupts: [interrupt(asking.id, due, { deadline }), interrupt(asking.id, open)] });
      const mine = new Set([later.id, sooner.id, asking.id, ended.id, due, open]);
      const listed = async () => (await store.listDeadlines()).filter((d) => mine.has(d.id));
      expect(await listed()).toEqual([
        { kind: "interrupt", id: due, at: deadline.at },
        { kind: "run", id: sooner.id, at: sooner.deadlineAt },
        { kind: "run", id: later.id, at: later.deadlineAt },
      ]);
      const resolution = { decision: "approve", actor: "operator:ann", at: Date.now() };
      await store.commit({ id: commitId(), runId: asking.id, fence, expectPending: [due], interrupts: [interrupt(asking.id, due, { deadline, status: "resolved", resolution })] });
      await end(sooner.id, "canceled");
      expect(await listed()).toEqual([{ kind: "run", id: later.id, at: later.deadlineAt }]);
    });

    it("acknowledges a commit sent twice (a lost reply) without applying it twice", async () => {
      const run = await createRun(store);
      const { fence } = await claimed(store, run.id);
      const commit = { id: commitId(), runId: run.id, fence, events: [event(run.id), event(run.id)] };
      await store.commit(commit);
      await store.commit(commit);
      expect((await store.readEvents({ runId: run.id })).map((e) => e.runSeq)).toEqual([1, 2, 3, 4]);
    });

    it("numbers events store-wide and per run without gaps", async () => {
      const runs = [await createRun(store), await createRun(store)];
      const fences = await Promise.all(runs.map((r) => claimed(store, r.id).then((c) => c.fence)));
      for (let i = 0; i < 5; i++) {
        for (const [k, run] of runs.entries()) {
          await store.commit({ id: commitId(), runId: run.id, fence: fences[k]!, events: [event(run.id), event(run.id)] });
        }
      }
      const all = await store.readEvents();
      expect(all.map((e) => e.seq)).toEqual([...all.map((e) => e.seq)].sort((a, b) => a - b));
      expect(new Set(all.map((e) => e.seq)).size).toBe(all.length);
      for (const run of runs) {
        const mine = await store.readEvents({ runId: run.id });
        expect(mine.map((e) => e.runSeq)).toEqual(mine.map((_, i) => i + 1));
      }
      expect(await store.lastEventSeq()).toBe(all[all.length - 1]!.seq);
      // Fields in one order in every store (and as committed, to subscribers): scripts compare `events --json` lines.
      const fields = ["seq", "runId", "runSeq", "taskId", "traceId", "spanId", "type", "actor", "payload", "time"];
      for (const e of all) expect(Object.keys(e)).toEqual(fields);
      const tail = await store.readEvents({ after: all[3]!.seq, limit: 3 });
      expect(tail.map((e) => e.seq)).toEqual(all.slice(4, 7).map((e) => e.seq));
      expect((await store.readEvents({ types: ["run.claimed"] })).length).toBe(2);
      const mine = await store.readEvents({ runId: runs[0]!.id });
      expect((await store.readEvents({ runId: runs[0]!.id, last: 3 })).map((e) => e.seq)).toEqual(mine.slice(-3).map((e) => e.seq));
      expect((await store.readEvents({ runId: runs[0]!.id, last: 3, types: ["run.claimed"] })).map((e) => e.type)).toEqual(["run.claimed"]);
      expect((await store.readEvents({ last: 2, after: all[all.length - 2]!.seq })).map((e) => e.seq)).toEqual([all[all.length - 1]!.seq]);
      // Reading from between the two events of one commit, and fewer events than one commit has.
      for (let i = 0; i < all.length - 1; i++) {
        expect((await store.readEvents({ after: all[i]!.seq, limit: 1 })).map((e) => e.seq)).toEqual([all[i + 1]!.seq]);
      }
      expect((await store.readEvents({ last: 1 })).map((e) => e.seq)).toEqual([all[all.length - 1]!.seq]);
      expect(await store.readEvents({ last: 0 })).toEqual([]);
    });
  });

  describe("checkpoints and state", () => {
    it("lists checkpoints in order and reads them by number and range", async () => {
      const run = await createRun(store, { n: 0 });
      const { fence } = await claimed(store, run.id);
      for (let n = 1; n <= 4; n++) {
        await store.commit({ id: commitId(), runId: run.id, fence, checkpoint: checkpoint(run.id, n, [["n", "set", n]]) });
      }
      expect((await store.listCheckpoints(run.id)).map((c) => c.n)).toEqual([0, 1, 2, 3, 4]);
      expect((await store.listCheckpoints(run.id, { afterN: 1, limit: 2 })).map((c) => c.n)).toEqual([2, 3]);
      expect((await store.getCheckpoint(`${run.id}:2`))?.delta).toEqual([["n", "set", 2]]);
      expect((await store.checkpointRows(run.id, [3, 1, 99])).map((c) => c.n).sort()).toEqual([1, 3]);
      expect((await store.checkpointRowRange(run.id, 1, 3)).map((c) => c.n)).toEqual([2, 3]);
      expect(await readState(store, run.id, 3)).toEqual({ n: 3 });
    });

    it("summarizes checkpoints as they are, without their state", async () => {
      const run = await createRun(store, { n: 0 });
      const { fence } = await claimed(store, run.id);
      await store.commit({ id: commitId(), runId: run.id, fence, checkpoint: checkpoint(run.id, 1, [["n", "set", 1]], { nodes: ["a", "b"], next: ["c"] }) });
      const snapshot = checkpoint(run.id, 2, [["n", "set", 2]], { snapshot: { n: { v: 2 } }, snapshotN: 2, source: "update", actor: "operator:ann", step: 1 });
      await store.commit({ id: commitId(), runId: run.id, fence, checkpoint: snapshot });
      const full = await store.listCheckpoints(run.id);
      const summaries = await store.listCheckpointSummaries(run.id);
      expect(summaries).toEqual(full.map(({ delta: _delta, snapshot: kept, ...rest }) => ({ ...rest, hasSnapshot: kept !== undefined })));
      expect(summaries.map((c) => [c.n, c.hasSnapshot, "delta" in c, "snapshot" in c])).toEqual([
        [0, true, false, false],
        [1, false, false, false],
        [2, true, false, false],
      ]);
      expect((await store.listCheckpointSummaries(run.id, { afterN: 0, limit: 1 })).map((c) => c.nodes)).toEqual([["a", "b"]]);
    });

    it("gives each read records of its own, also for reads in the same turn: changing one changes no other", async () => {
      const run = await createRun(store, { n: 0 });
      const { fence } = await claimed(store, run.id);
      const attempt = { n: 1, worker: "w1", startedAt: 1000, endedAt: 1001, outcome: "succeeded" as const };
      const done = task(run.id, 1, "work", { status: "succeeded", worker: "w1", startedAt: 1000, endedAt: 1001, attempts: [attempt] });
      const events = [event(run.id, "task.succeeded", { node: "work", attempt: 1, durationMs: 1, keys: ["n"] }), event(run.id, "step.completed", { step: 1 })];
      await store.commit({ id: commitId(), runId: run.id, fence, checkpoint: checkpoint(run.id, 1, [["n", "set", 1]]), tasks: [done], events });
      const [checkpointOnce, summaries, tasksOnce, tasksAgain, checkpointAgain] = await Promise.all([
        store.getCheckpoint(`${run.id}:1`),
        store.listCheckpointSummaries(run.id),
        store.listTasks(run.id),
        store.listTasks(run.id),
        store.getCheckpoint(`${run.id}:1`),
      ]);
      checkpointOnce!.nodes.push("changed");
      checkpointOnce!.control.visits.changed = 1;
      tasksOnce[0]!.attempts[0]!.worker = "changed";
      expect(checkpointAgain!.nodes).toEqual(["work"]);
      expect(summaries[1]!.nodes).toEqual(["work"]);
      expect(summaries[1]!.control.visits).toEqual({});
      expect(tasksAgain).toEqual([done]);
    });

    it("reads back the exact state of every checkpoint, whatever the writes (property)", async () => {
      const op = fc.oneof(
        fc.tuple(fc.constantFrom("list", "other"), fc.constant("append" as const), fc.array(fc.string({ maxLength: 8 }), { maxLength: 3 })),
        fc.tuple(fc.constantFrom("list", "count", "text"), fc.constant("set" as const), fc.oneof(fc.integer(), fc.string(), fc.array(fc.integer(), { maxLength: 3 }))),
        fc.tuple(fc.constant("obj"), fc.constant("merge" as const), fc.dictionary(fc.constantFrom("a", "b", "c"), fc.integer())),
      );
      await fc.assert(
        fc.asyncProperty(fc.array(fc.array(op, { maxLength: 4 }), { minLength: 1, maxLength: 40 }), fc.integer({ min: 1, max: 6 }), async (steps, every) => {
          const initial: State = { list: [], other: ["seed"], obj: {} };
          const run = await createRun(store, initial);
          const { fence } = await claimed(store, run.id);
          const { chain } = StateChain.start({ every, minBytes: 256 }, initial);
          let expected = initial;
          const states: State[] = [initial];
          for (const [i, ops] of steps.entries()) {
            const n = i + 1;
            expected = applyOps(expected, ops as ChannelOp[]);
            const snapshot = chain.advance(n, ops as ChannelOp[], expected);
            await store.commit({
              id: commitId(),
              runId: run.id,
              fence,
              checkpoint: checkpoint(run.id, n, ops as ChannelOp[], { ...(snapshot ? { snapshot } : {}), snapshotN: snapshot ? n : chain.snapshotN }),
            });
            states.push(expected);
          }
          for (let n = 0; n < states.length; n++) expect(await readState(store, run.id, n)).toEqual(states[n]);
        }),
        { numRuns: 15 },
      );
    });
  });

  describe("interrupts", () => {
    it("lists pending interrupts across runs, oldest first", async () => {
      const a = await createRun(store);
      const b = await createRun(store);
      const fa = (await claimed(store, a.id)).fence;
      const fb = (await claimed(store, b.id)).fence;
      await store.commit({ id: commitId(), runId: b.id, fence: fb, interrupts: [interrupt(b.id, "int-old", { createdAt: 1000 })] });
      await store.commit({ id: commitId(), runId: a.id, fence: fa, interrupts: [interrupt(a.id, "int-new", { createdAt: 2000 }), interrupt(a.id, "int-res", { createdAt: 500, status: "resolved" })] });
      expect((await store.listInterrupts({ status: "pending" })).map((i) => i.id)).toEqual(["int-old", "int-new"]);
      expect((await store.listInterrupts({ runId: a.id })).map((i) => i.id)).toEqual(["int-res", "int-new"]);
      expect((await store.getInterrupt("int-new"))?.request.question).toBe("ok?");
      expect(await store.getInterrupt("int-none")).toBeUndefined();
    });
  });

  describe("commands", () => {
    it("queues a command with its event and takes exactly one answer", async () => {
      const run = await createRun(store);
      const command = pendingCommand(run.id, "kill", { id: "cmd-1", reason: "stuck" });
      await store.submitCommand(command, event(run.id, "operator.requested", { commandId: "cmd-1", command: "kill", args: {} }));
      expect((await store.listCommands({ runId: run.id, status: "pending" })).map((c) => c.id)).toEqual(["cmd-1"]);
      await store.answerCommand({ id: "cmd-1", status: "refused", result: { reason: "nothing runs" }, answeredAt: Date.now() }, event(run.id, "operator.refused", { commandId: "cmd-1", command: "kill", reason: "nothing runs" }));
      await expect(
        store.answerCommand({ id: "cmd-1", status: "accepted", result: {}, answeredAt: Date.now() }, event(run.id)),
      ).rejects.toBeInstanceOf(ConflictError);
      expect(await store.getCommand("cmd-1")).toMatchObject({ status: "refused", result: { reason: "nothing runs" } });
      expect(await store.listCommands({ status: "pending" })).toEqual([]);
      expect((await store.readEvents({ runId: run.id })).map((e) => e.type)).toEqual(["run.created", "operator.requested", "operator.refused"]);
      await expect(store.submitCommand({ ...command, id: "cmd-2", runId: "run-missing" }, event("run-missing"))).rejects.toBeInstanceOf(NotFoundError);
    });
  });

  it("stores and answers a command in the same commit that applies it", async () => {
    const run = await createRun(store);
    const { fence } = await claimed(store, run.id);
    const command = pendingCommand(run.id, "break", { id: "cmd-inline", args: { node: "x" } });
    const answered = { id: command.id, status: "accepted" as const, result: { effect: "done" }, answeredAt: Date.now() };
    const events = [event(run.id, "operator.requested", { commandId: command.id, command: "break", args: {} }), event(run.id, "operator.accepted", { commandId: command.id, command: "break", effect: "done" })];
    await store.commit({ id: commitId(), runId: run.id, fence, submit: [command], commands: [answered], run: { breakpoints: ["x"] }, events });
    expect(await store.getCommand(command.id)).toMatchObject({ status: "accepted", result: { effect: "done" }, actor: "operator:ann" });
    expect(await store.listCommands({ status: "pending" })).toEqual([]);
    const before = await store.readEvents({ runId: run.id });
    await expect(store.commit({ id: commitId(), runId: run.id, fence, submit: [command], events: [event(run.id)], run: { breakpoints: [] } })).rejects.toBeInstanceOf(ConflictError);
    expect(await store.readEvents({ runId: run.id })).toEqual(before);
    expect((await store.getRun(run.id))?.breakpoints).toEqual(["x"]);
  });

  describe("live subscription", () => {
    it("delivers past events after a sequence number, then new ones as they are committed", async () => {
      const run = await createRun(store);
      const { fence } = await claimed(store, run.id);
      const controller = new AbortController();
      const seen: string[] = [];
      const layouts = new Set<string>();
      const done = (async () => {
        for await (const e of store.subscribe({ after: 0, runId: run.id, signal: controller.signal })) {
          seen.push(e.type);
          layouts.add(Object.keys(e).join(" "));
          if (seen.length === 4) controller.abort();
        }
      })();
      await new Promise((r) => setTimeout(r, 50));
      await store.commit({ id: commitId(), runId: run.id, fence, events: [event(run.id, "run.paused", { reason: "killed", nodes: [] })] });
      await new Promise((r) => setTimeout(r, 50));
      await store.commit({ id: commitId(), runId: run.id, fence, events: [event(run.id, "run.resumed", { by: "x" })] });
      await done;
      expect(seen).toEqual(["run.created", "run.claimed", "run.paused", "run.resumed"]);
      expect([...layouts]).toEqual(["seq runId runSeq taskId traceId spanId type actor payload time"]);
    });

    it("starts from now by default and ends when aborted", async () => {
      const run = await createRun(store);
      const controller = new AbortController();
      const seen: number[] = [];
      const done = (async () => {
        for await (const e of store.subscribe({ signal: controller.signal })) seen.push(e.runSeq);
      })();
      await new Promise((r) => setTimeout(r, 50));
      await claimed(store, run.id);
      await new Promise((r) => setTimeout(r, 300));
      controller.abort();
      await done;
      expect(seen).toEqual([2]);
    });
  });

  describe("deleting runs", () => {
    /** A run that has ended as `status`, with a checkpoint, a task, a pending interrupt and command, events and an artifact. */
    async function endedRun(status: "succeeded" | "failed" | "canceled", patch: { parentRunId?: string } = {}, events = 1) {
      const run = await createRun(store, { items: [] }, patch);
      const { fence } = await claimed(store, run.id);
      await store.commit({
        id: commitId(),
        runId: run.id,
        fence,
        checkpoint: checkpoint(run.id, 1, [["items", "append", ["x"]]]),
        tasks: [task(run.id, 1, "work", { status: "succeeded" })],
        interrupts: [interrupt(run.id, `int-${run.id}`)],
        events: Array.from({ length: events }, () => event(run.id)),
        run: { status, owner: null, leaseUntil: null, endedAt: Date.now() },
      });
      const command = pendingCommand(run.id, "retry", { id: `cmd-${run.id}` });
      await store.submitCommand(command, event(run.id, "operator.requested", { commandId: command.id, command: "retry", args: {} }));
      await store.putArtifact(run.id, new TextEncoder().encode(`own ${run.id}`), "text/plain");
      return run;
    }

    it("deletes a run that ended with its child runs and everything of theirs; other runs and their artifacts stay; event numbers are not reused", async () => {
      const kept = await endedRun("succeeded");
      const parent = await endedRun("failed");
      // More events than a store deletes in one go (Redis: 1,000 a script call).
      const child = await endedRun("canceled", { parentRunId: parent.id }, 2500);
      const shared = await store.putArtifact(kept.id, new TextEncoder().encode("shared"), "text/plain");
      await store.putArtifact(child.id, new TextEncoder().encode("shared"), "text/plain");
      const childOwn = await store.putArtifact(child.id, new TextEncoder().encode(`own ${child.id}`), "text/plain");
      const lastSeq = await store.lastEventSeq();

      expect(await store.deleteRun(parent.id)).toEqual([parent.id, child.id]);

      for (const gone of [parent, child]) {
        expect(await store.getRun(gone.id)).toBeUndefined();
        expect(await store.getCheckpoint(checkpointId(gone.id, 1))).toBeUndefined();
        expect(await store.listCheckpoints(gone.id)).toEqual([]);
        expect(await store.getTask(`${gone.id}:1:work`)).toBeUndefined();
        expect(await store.listTasks(gone.id)).toEqual([]);
        expect(await store.getInterrupt(`int-${gone.id}`)).toBeUndefined();
        expect(await store.getCommand(`cmd-${gone.id}`)).toBeUndefined();
        expect(await store.readEvents({ runId: gone.id })).toEqual([]);
      }
      expect((await store.listRuns()).runs.map((r) => r.id)).toEqual([kept.id]);
      expect(Object.values(await store.countRuns()).reduce((a, b) => a + b, 0)).toBe(1);
      expect((await store.listRuns({ parentRunId: parent.id })).runs).toEqual([]);
      for (const status of ["pending", undefined] as const) {
        expect((await store.listInterrupts(status ? { status } : {})).map((i) => i.id)).toEqual([`int-${kept.id}`]);
        expect((await store.listCommands(status ? { status } : {})).map((c) => c.id)).toEqual([`cmd-${kept.id}`]);
      }
      expect(new Set((await store.readEvents()).map((e) => e.runId))).toEqual(new Set([kept.id]));
      expect(await store.getArtifact(shared.sha256)).toBeDefined();
      expect(await store.getArtifact(childOwn.sha256)).toBeUndefined();
      expect((await store.runStorage(kept.id)).artifacts).toBeGreaterThan(0);

      const next = await createRun(store);
      expect((await store.readEvents({ runId: next.id }))[0]!.seq).toBeGreaterThan(lastSeq);
      await expect(store.deleteRun(parent.id)).rejects.toBeInstanceOf(NotFoundError);
    });

    it("refuses a run that has not ended, a child run and a run with a child that has not ended, deleting nothing", async () => {
      const queued = await createRun(store);
      await expect(store.deleteRun(queued.id)).rejects.toThrow(new ConflictError(`run ${queued.id} is queued: only runs that have ended can be deleted`));
      const parent = await endedRun("succeeded");
      const child = await createRun(store, { items: [] }, { parentRunId: parent.id });
      await expect(store.deleteRun(parent.id)).rejects.toThrow(
        new ConflictError(`run ${parent.id} has a child run ${child.id} that is queued: only runs that have ended can be deleted`),
      );
      await expect(store.deleteRun(child.id)).rejects.toThrow(
        new ConflictError(`run ${child.id} is a child run of ${parent.id}: delete run ${parent.id}, which deletes its child runs with it`),
      );
      for (const run of [queued, parent, child]) {
        expect(await store.getRun(run.id)).toBeDefined();
        expect((await store.readEvents({ runId: run.id })).length).toBeGreaterThan(0);
      }
      expect(await store.getInterrupt(`int-${parent.id}`)).toBeDefined();
      await expect(store.deleteRun("run-missing")).rejects.toBeInstanceOf(NotFoundError);
    });

    it("prunes, a page of the listing at a time, more runs than a page holds: those that ended before the time, and only those", async () => {
      const old: string[] = [];
      for (let i = 0; i < 510; i++) old.push((await endedRun(i % 2 === 0 ? "succeeded" : "canceled")).id);
      await new Promise((r) => setTimeout(r, 5));
      const before = Date.now();
      await new Promise((r) => setTimeout(r, 5));
      const recent = await endedRun("failed");
      const running = await createRun(store);
      await claimed(store, running.id);

      const dry = await pruneRuns(store, { endedBefore: before, dryRun: true });
      expect(dry.runs.map((r) => r.id).sort()).toEqual([...old].sort());
      expect(Object.keys(dry.runs[0]!).sort()).toEqual(["endedAt", "id", "status", "updatedAt", "workflow"]);
      expect((await store.countRuns()).succeeded).toBe(255);

      const pruned = await pruneRuns(store, { endedBefore: before });
      expect(pruned.runs.map((r) => r.id).sort()).toEqual([...old].sort());
      expect(pruned.kept).toEqual([]);
      expect((await store.listRuns({ limit: 1000 })).runs.map((r) => r.id).sort()).toEqual([recent.id, running.id].sort());
    });
  });

  describe("activity", () => {
    it("leaves an ended run's updatedAt when a commit only adds events to it, and moves it for a change", async () => {
      const run = await createRun(store);
      const { fence } = await claimed(store, run.id);
      await store.commit({ id: commitId(), runId: run.id, fence, events: [event(run.id)], run: { status: "succeeded", owner: null, leaseUntil: null, endedAt: Date.now() } });
      const ended = (await store.getRun(run.id))!.updatedAt;
      await new Promise((r) => setTimeout(r, 5));
      await store.commit({ id: commitId(), runId: run.id, fence, events: [event(run.id)] });
      expect((await store.getRun(run.id))!.updatedAt).toBe(ended);
      await store.commit({ id: commitId(), runId: run.id, fence, events: [event(run.id)], run: { status: "queued" } });
      expect((await store.getRun(run.id))!.updatedAt).toBeGreaterThan(ended);
    });
  });

  describe("pruning with child runs", () => {
    it("a dry run lists what the prune then deletes and keeps, child runs counted", async () => {
      const done = await createRun(store);
      const live = await createRun(store);
      const doneChild = await createRun(store, { items: [] }, { parentRunId: done.id });
      const liveChild = await createRun(store, { items: [] }, { parentRunId: live.id });
      for (const run of [doneChild, done, live]) {
        const { fence } = await claimed(store, run.id);
        await store.commit({ id: commitId(), runId: run.id, fence, events: [event(run.id)], run: { status: "succeeded", owner: null, leaseUntil: null, endedAt: Date.now() - 10 } });
      }
      const before = Date.now();
      const dry = await pruneRuns(store, { endedBefore: before, dryRun: true });
      const real = await pruneRuns(store, { endedBefore: before });
      expect(dry.runs.map((r) => r.id)).toEqual([done.id]);
      expect(dry.childRuns).toBe(1);
      expect(dry.kept).toEqual([{ runId: live.id, why: `run ${live.id} has a child run ${liveChild.id} that is queued: only runs that have ended can be deleted` }]);
      expect(real).toEqual(dry);
    });
  });

  describe("artifacts and storage", () => {
    it("stores artifacts by content and reports a run's storage", async () => {
      const run = await createRun(store, { items: ["x".repeat(100)] });
      const data = new TextEncoder().encode("hello world");
      const ref = await store.putArtifact(run.id, data, "text/plain");
      expect(ref).toEqual({ sha256: "b94d27b9934d3e08a52e52d7da7dabfac484efe37a5380ee9088f7ace2efcde9", size: 11, mediaType: "text/plain" });
      expect(await store.putArtifact(run.id, data, "text/plain")).toEqual(ref);
      const back = await store.getArtifact(ref.sha256);
      expect(new TextDecoder().decode(back!.data)).toBe("hello world");
      expect(await store.getArtifact("0".repeat(64))).toBeUndefined();
      const storage = await store.runStorage(run.id);
      expect(storage.artifacts).toBe(11);
      expect(storage.checkpoints).toBeGreaterThan(100);
      expect(storage.events).toBeGreaterThan(0);
      expect(storage.total).toBe(storage.checkpoints + storage.events + storage.artifacts);
    });

    it("tells the room left to grow where it can (SQLite: its file system; memory, and Redis without maxmemory: not)", async () => {
      const room = await store.room();
      if (factory.name !== "sqlite") {
        expect(room).toBeUndefined();
        return;
      }
      expect(room!.totalBytes).toBeGreaterThan(0);
      expect(room!.freeBytes).toBeGreaterThanOrEqual(0);
      expect(room!.freeBytes).toBeLessThanOrEqual(room!.totalBytes);
      expect(room).toEqual(storeRoom(room!.freeBytes, room!.totalBytes, room!.where));
    });
  });
});
