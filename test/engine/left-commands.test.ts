import { hostname } from "node:os";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { ConflictError, LEFT_COMMAND_MS, answerLeftCommands, workflow, type CommandRecord, type Commit, type EventRecord, type Store } from "../../engine/index.js";
import { requested } from "../../engine/operator/command-records.js";
import { engineHarness, until } from "../support/engine.js";
import { pendingCommand } from "../support/records.js";
import { endedPid } from "../support/processes.js";
import { storeFactories } from "../support/stores.js";

const quick = workflow("quick", { state: z.object({ n: z.number().default(0) }) })
  .node("a", (state) => ({ n: state.n + 1 }))
  .compile();

const reviewed = workflow("reviewed", { state: z.object({ n: z.number().default(0) }), interruptAfter: ["a"] })
  .node("a", (state) => ({ n: state.n + 1 }), { next: "b" })
  .node("b", (state) => ({ n: state.n * 10 }), { next: "END" })
  .compile();

/**
 * `store` as a worker sees it: the commit that moves a run to `status` waits while `whileHeld`
 * acts, and `taken(seq)` settles once the worker's event watch has done with the event of that
 * number (handed its command to the run's executor).
 */
function holdingStore(store: Store, status: NonNullable<Commit["run"]>["status"]) {
  let reached!: () => void;
  let release!: () => void;
  const held = new Promise<void>((resolve) => (reached = resolve));
  const released = new Promise<void>((resolve) => (release = resolve));
  const seen: number[] = [];
  const proxy = new Proxy(store, {
    get(target, key) {
      if (key === "commit") {
        return async (commit: Commit) => {
          if (commit.run?.status === status) {
            reached();
            await released;
          }
          return target.commit(commit);
        };
      }
      if (key === "subscribe") {
        // Yielded, and asked for the next: the watch has done with the event.
        return async function* (...args: Parameters<Store["subscribe"]>): AsyncIterable<EventRecord> {
          for await (const event of target.subscribe(...args)) {
            yield event;
            seen.push(event.seq);
          }
        };
      }
      const value = Reflect.get(target, key, target) as unknown;
      return typeof value === "function" ? value.bind(target) : value;
    },
  });
  const taken = (seq: number) => until(() => seen.includes(seq), 5_000, "the worker to take in the command");
  /** Runs `act` while the commit is held, then lets it go (whatever `act` does: a held worker would not stop). */
  async function whileHeld<T>(act: () => Promise<T>): Promise<T> {
    await held;
    try {
      return await act();
    } finally {
      release();
    }
  }
  return { proxy, whileHeld, taken };
}

/** A command recorded for the run's worker by a process that stopped at once: nobody else answers it. */
async function recordedAndLeft(store: Store, runId: string, type: CommandRecord["type"], extra: Partial<CommandRecord> = {}): Promise<{ command: CommandRecord; seq: number }> {
  const command = pendingCommand(runId, type, { actor: "operator:carol", ...extra });
  const { events } = await store.submitCommand(command, requested(command, []));
  return { command, seq: events[0]!.seq };
}

const answered = (store: Store, id: string) =>
  until(async () => {
    const command = await store.getCommand(id);
    return command?.status !== "pending" && command;
  }, 10_000, `an answer to ${id}`);

/** Each command's answers, as [type, actor] pairs. */
async function answersOf(store: Store, runId: string): Promise<Record<string, [string, string][]>> {
  const answers: Record<string, [string, string][]> = {};
  for (const e of await store.readEvents({ runId, types: ["operator.accepted", "operator.refused"] })) {
    (answers[(e.payload as { commandId: string }).commandId] ??= []).push([e.type, e.actor]);
  }
  return answers;
}

describe.each(storeFactories)("commands left when a worker lets go of a run: $name", (factory) => {
  const h = engineHarness(factory);

  it("refuses, with why, the commands queued for the worker as the run ends: the recorder's gone, or waiting", async () => {
    const { store } = await h.engine([], { worker: false });
    const hold = holdingStore(store, "succeeded");
    const engine = await h.engine([quick], { store: hold.proxy });
    const run = await engine.start(quick, {});

    const { gone, live, liveRequest } = await hold.whileHeld(async () => {
      const gone = await recordedAndLeft(store, run.id, "kill");
      const live = engine.operator("dan").kill(run.id, { reason: "too slow" });
      // Its rejection is awaited below.
      live.catch(() => undefined);
      const liveRequest = await until(async () => (await store.readEvents({ runId: run.id, types: ["operator.requested"] })).find((e) => e.actor === "operator:dan"));
      await hold.taken(gone.seq);
      await hold.taken(liveRequest.seq);
      return { gone, live, liveRequest };
    });

    const reason = `run ${run.id} ended (succeeded) before the kill was applied`;
    await expect(live).rejects.toThrow(new ConflictError(reason));
    expect(await answered(store, gone.command.id)).toMatchObject({ status: "refused", result: { reason, code: "CONFLICT" } });
    const liveId = (liveRequest.payload as { commandId: string }).commandId;
    const worker = `worker:${engine.worker!.id}`;
    expect(await answersOf(store, run.id)).toEqual({ [gone.command.id]: [["operator.refused", worker]], [liveId]: [["operator.refused", worker]] });
    const types = (await store.readEvents({ runId: run.id })).map((e) => e.type);
    expect(types.indexOf("run.succeeded")).toBeLessThan(types.indexOf("operator.refused"));
    expect(await store.listCommands({ status: "pending" })).toEqual([]);
  });

  it("applies, as the run pauses, a queued edit that a paused run takes; refuses a kill, as no node runs", async () => {
    const { store } = await h.engine([], { worker: false });
    const hold = holdingStore(store, "paused");
    const engine = await h.engine([reviewed], { store: hold.proxy });
    const run = await engine.start(reviewed, {});

    const { edit, kill } = await hold.whileHeld(async () => {
      const edit = await recordedAndLeft(store, run.id, "update", { args: { patch: { n: 5 } } });
      const kill = await recordedAndLeft(store, run.id, "kill");
      await hold.taken(kill.seq);
      return { edit, kill };
    });

    expect(await answered(store, edit.command.id)).toMatchObject({ status: "accepted", result: { effect: `state edited (checkpoint ${run.id}:2)`, checkpointId: `${run.id}:2` } });
    expect(await answered(store, kill.command.id)).toMatchObject({ status: "refused", result: { reason: `run ${run.id} has no running task` } });
    expect(await engine.operator().state(run.id)).toEqual({ n: 5 });
    expect(await store.getRun(run.id)).toMatchObject({ status: "paused", reason: "interrupt", pendingInterrupts: 1 });
    const [edited] = await store.readEvents({ runId: run.id, types: ["state.edited"] });
    expect(edited?.actor).toBe("operator:carol");
  });
});

describe.each(storeFactories)("commands left pending on runs nobody holds: $name", (factory) => {
  const h = engineHarness(factory);

  it("answers them once their recorders are gone, or have had the time to; not those of held runs", async () => {
    const engine = await h.engine([quick], { worker: false });
    const { store } = engine;
    const queued = await engine.start(quick, {});
    const sweep = (now?: number) => answerLeftCommands(store, "worker:sweeper", now === undefined ? {} : { now });
    const refused = (command: CommandRecord) => expect.objectContaining({ id: command.id, status: "refused", result: { reason: `run ${queued.id} has no running task`, code: "CONFLICT" } });

    // Its recorder, this process, may still be applying it (it does within a few seconds of the run's release).
    const waiting = await recordedAndLeft(store, queued.id, "kill", { recorder: { host: hostname(), pid: process.pid } });
    expect(await sweep(waiting.command.createdAt + LEFT_COMMAND_MS)).toEqual([]);
    expect(await sweep(waiting.command.createdAt + LEFT_COMMAND_MS + 1)).toEqual([refused(waiting.command)]);
    // Its recorder has stopped: at once.
    const gone = await recordedAndLeft(store, queued.id, "kill", { recorder: { host: hostname(), pid: endedPid() } });
    expect(await sweep()).toEqual([refused(gone.command)]);
    expect(await answersOf(store, queued.id)).toEqual({ [waiting.command.id]: [["operator.refused", "worker:sweeper"]], [gone.command.id]: [["operator.refused", "worker:sweeper"]] });

    // A run a worker holds: its worker answers the command.
    const other = await engine.start(quick, {});
    await store.claimRun({ owner: "w-elsewhere", leaseMs: 60_000, runId: other.id });
    const queuedForOwner = await recordedAndLeft(store, other.id, "cancel", { reason: "not needed" });
    expect(await sweep(Date.now() + LEFT_COMMAND_MS + 1)).toEqual([]);
    expect(await store.getCommand(queuedForOwner.command.id)).toMatchObject({ status: "pending" });
  });

  it("a serving worker answers one whose recorder stopped, and says so", async () => {
    const engine = await h.engine([quick]);
    const { store } = engine;
    const run = await (await engine.start(quick, {})).wait();
    const left = await recordedAndLeft(store, run.id, "kill", { recorder: { host: hostname(), pid: endedPid() } });

    const reason = `run ${run.id} ended (succeeded) before the kill was applied`;
    expect(await answered(store, left.command.id)).toMatchObject({ status: "refused", result: { reason } });
    expect(await answersOf(store, run.id)).toEqual({ [left.command.id]: [["operator.refused", `worker:${engine.worker!.id}`]] });
    expect(h.notices.of("command-answered")).toEqual([
      { level: "warn", kind: "command-answered", runId: run.id, message: `kill ${left.command.id} of run ${run.id} (by operator:carol), left unanswered, refused: ${reason}` },
    ]);
  });

  it("gives a command one answer when two workers answer it at once", async () => {
    const engine = await h.engine([quick]);
    const { store } = engine;
    const run = await (await engine.start(quick, {})).wait();
    const left = await recordedAndLeft(store, run.id, "cancel", { reason: "not needed", createdAt: run.endedAt! - 1 });

    const later = Date.now() + LEFT_COMMAND_MS + 1;
    const [one, two] = await Promise.all([answerLeftCommands(store, "worker:w1", { now: later }), answerLeftCommands(store, "worker:w2", { now: later })]);
    expect([...one!, ...two!]).toEqual([expect.objectContaining({ id: left.command.id, status: "refused", result: { reason: `run ${run.id} ended (succeeded) before the cancel was applied`, code: "CONFLICT" } })]);
    const answers = await answersOf(store, run.id);
    expect(Object.keys(answers)).toEqual([left.command.id]);
    expect(answers[left.command.id]).toHaveLength(1);
  });
});
