import { hostname } from "node:os";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { FORK_ANSWER_MS, Operator, PitwallError, answerAbandonedForks, workflow, type CommandRecord, type Store } from "../../engine/index.js";
import { derivedId } from "../../engine/ids.js";
import { requested } from "../../engine/operator/command-records.js";
import { newRun } from "../../engine/runtime/new-run.js";
import { engineHarness, until } from "../support/engine.js";
import { pendingCommand } from "../support/records.js";
import { endedPid } from "../support/processes.js";
import { storeFactories } from "../support/stores.js";

const wf = workflow("forkable", { state: z.object({ n: z.number().default(0) }) })
  .node("a", (state) => ({ n: state.n + 1 }))
  .compile();

/** A fork as a process recorded it before it stopped (or while it works on it, elsewhere). */
async function recordedFork(store: Store, runId: string, recorder: NonNullable<CommandRecord["recorder"]>, createdAt = Date.now(), args: Record<string, unknown> = {}): Promise<CommandRecord> {
  const command = pendingCommand(runId, "fork", { args: { checkpointId: `${runId}:0`, ...args }, actor: "operator:dan", createdAt, recorder });
  await store.submitCommand(command, requested(command, []));
  return command;
}

/** The store, with its createRun held until `release` (the forker is at work): `reached` says it got there. */
function heldCreate(store: Store) {
  let reached!: () => void;
  let release!: () => void;
  const at = new Promise<void>((resolve) => (reached = resolve));
  const released = new Promise<void>((resolve) => (release = resolve));
  const held = new Proxy(store, {
    get(target, key) {
      if (key === "createRun") {
        return async (init: Parameters<Store["createRun"]>[0]) => {
          reached();
          await released;
          return target.createRun(init);
        };
      }
      const value = Reflect.get(target, key, target) as unknown;
      return typeof value === "function" ? value.bind(target) : value;
    },
  });
  return { held, at, release };
}

describe.each(storeFactories)("forks their recorders left unanswered: $name", (factory) => {
  const h = engineHarness(factory);

  it("a worker refuses a fork whose recorder stopped before making the run, and says so", async () => {
    const runner = await h.engine([wf]);
    const source = await (await runner.start(wf, {})).wait();
    await runner.close();
    const pid = endedPid();
    const command = await recordedFork(runner.store, source.id, { host: hostname(), pid });
    // Its worker's first look for abandoned forks comes 2 s after it starts, so after the fork was
    // recorded however slow this machine is (the next one would come 30 s later).
    const engine = await h.engine([wf], { store: runner.store });

    const answered = await until(async () => {
      const now = await engine.store.getCommand(command.id);
      return now?.status !== "pending" && now;
    }, 10_000, "the worker's sweep");
    const reason = `no run was made from checkpoint ${source.id}:0: the process that recorded it (pid ${pid} on ${hostname()}) stopped before it made the run; fork again`;
    expect(answered).toMatchObject({ status: "refused", result: { reason, code: "RUN" } });
    const [refused] = await engine.store.readEvents({ runId: source.id, types: ["operator.refused"] });
    expect(refused).toMatchObject({ actor: `worker:${engine.worker!.id}`, payload: { commandId: command.id, command: "fork", reason } });
    expect(await engine.store.getRun(derivedId("run", command.id))).toBeUndefined();
    expect(h.notices.of("fork-answered")).toEqual([
      { level: "warn", kind: "fork-answered", runId: source.id, message: `fork ${command.id} of run ${source.id} (by operator:dan) refused: ${reason}` },
    ]);
  });

  it("leaves a live forker's fork to it; past the bound it refuses it, and the late forker makes no run", async () => {
    const engine = await h.engine([wf], { worker: false });
    const { id: sourceId } = await engine.start(wf, {});
    const sweep = (now?: number) => answerAbandonedForks(engine.store, "worker:sweeper", now);

    const slow = heldCreate(engine.store);
    const forking = new Operator(slow.held, { actor: "operator:ann" }).fork(sourceId, 0);
    await slow.at;
    const [live] = await engine.store.listCommands({ status: "pending" });
    // Its recorder is this process, at work: the sweep leaves it, until the bound.
    expect(await sweep()).toEqual([]);
    expect(await sweep(live!.createdAt + FORK_ANSWER_MS - 1_000)).toEqual([]);
    slow.release();
    const made = await forking;
    expect(made.effect).toBe(`forked from checkpoint ${sourceId}:0 as run ${made.result.runId}`);
    expect(await engine.store.getCommand(live!.id)).toMatchObject({ status: "accepted", result: { runId: made.result.runId } });

    const stalled = heldCreate(engine.store);
    const late = new Operator(stalled.held, { actor: "operator:ann" }).fork(sourceId, 0);
    await stalled.at;
    const [stale] = await engine.store.listCommands({ status: "pending" });
    const [refused] = await sweep(stale!.createdAt + FORK_ANSWER_MS + 1);
    const reason = `no run was made from checkpoint ${sourceId}:0: the process that recorded it (pid ${process.pid} on ${hostname()}) did not make the run within 2 minutes (it stopped, or lost the store); fork again`;
    expect(refused).toMatchObject({ id: stale!.id, status: "refused", result: { reason } });
    stalled.release();
    await expect(late).rejects.toThrow(new PitwallError("RUN", reason));
    expect(await engine.store.getRun(derivedId("run", stale!.id))).toBeUndefined();
    const answers = await engine.store.readEvents({ runId: sourceId, types: ["operator.accepted", "operator.refused"] });
    expect(answers.map((e) => [e.type, (e.payload as { commandId: string }).commandId, e.actor])).toEqual([
      ["operator.accepted", live!.id, "operator:ann"],
      ["operator.refused", stale!.id, "worker:sweeper"],
    ]);
  });

  it("waits out the bound for a recorder on another host; accepts a fork whose run was made but not answered", async () => {
    const engine = await h.engine([wf], { worker: false });
    const { id: sourceId } = await engine.start(wf, {});
    const elsewhere = await recordedFork(engine.store, sourceId, { host: "build-7", pid: process.pid });
    expect(await answerAbandonedForks(engine.store, "worker:w1", elsewhere.createdAt + FORK_ANSWER_MS)).toEqual([]);
    const [late] = await answerAbandonedForks(engine.store, "worker:w1", elsewhere.createdAt + FORK_ANSWER_MS + 1);
    expect(late?.result?.reason).toBe(`no run was made from checkpoint ${sourceId}:0: the process that recorded it (pid ${process.pid} on build-7) did not make the run within 2 minutes (it stopped, or lost the store); fork again`);

    // A recorder that made the run and stopped before answering (a pitwall that wrote the two apart):
    // answered in the words the recorder would have used, signals it carried included.
    const halfDone = await recordedFork(engine.store, sourceId, { host: hostname(), pid: endedPid() }, Date.now(), { carriedSignals: { count: 3, names: [["paid", 2], ["note", 1]] } });
    const forkId = derivedId("run", halfDone.id);
    await engine.store.createRun(newRun({ id: forkId, workflow: { name: wf.definition.name, version: wf.version }, state: { n: 0 }, actor: "operator:dan", forkOf: { runId: sourceId, checkpointId: `${sourceId}:0` } }));
    expect(await answerAbandonedForks(engine.store, "worker:w1")).toEqual([
      expect.objectContaining({
        id: halfDone.id,
        status: "accepted",
        result: { effect: `forked from checkpoint ${sourceId}:0 as run ${forkId}; carried 3 signals (paid ×2, note) from run ${sourceId}`, runId: forkId, carriedSignals: 3 },
      }),
    ]);
    expect(await engine.store.listCommands({ status: "pending" })).toEqual([]);
  });
});
