import { describe, expect, it } from "vitest";
import { ConflictError, NotFoundError, type CommandRecord, type NewEvent, type Store } from "../../engine/index.js";
import { newId } from "../../engine/ids.js";
import { newRun } from "../../engine/runtime/new-run.js";
import { pendingCommand } from "../support/records.js";
import { storeEach, storeFactories } from "../support/stores.js";

// Store contract: a run made by a command (a fork) is created together with that command's
// answer, and only while the command is pending.

const WF = { name: "contract", version: "v-contract" };

function answerEvent(runId: string, commandId: string, type: "operator.accepted" | "operator.refused"): NewEvent {
  const payload = type === "operator.accepted" ? { commandId, command: "fork", effect: "forked" } : { commandId, command: "fork", reason: "gone" };
  return { runId, taskId: null, traceId: "t", spanId: null, type, actor: "worker:w1", payload, time: Date.now() } as NewEvent;
}

describe.each(storeFactories)("Store contract, runs made by commands: $name", (factory) => {
  let store: Store;
  storeEach(factory, (opened) => (store = opened));

  async function pendingFork(): Promise<{ source: string; command: CommandRecord }> {
    const source = newId("run");
    await store.createRun(newRun({ id: source, workflow: WF, state: {}, actor: "test" }));
    const command = pendingCommand(source, "fork", { args: { checkpointId: `${source}:0` }, recorder: { host: "h1", pid: 42 } });
    const requested = { ...answerEvent(source, command.id, "operator.accepted"), type: "operator.requested", payload: { commandId: command.id, command: "fork", args: command.args } } as NewEvent;
    await store.submitCommand(command, requested);
    return { source, command };
  }

  function forkOf(source: string, command: CommandRecord, id = newId("run")) {
    return {
      ...newRun({ id, workflow: WF, state: { forked: true }, actor: "operator:ann", forkOf: { runId: source, checkpointId: `${source}:0` } }),
      answering: { answer: { id: command.id, status: "accepted" as const, result: { effect: "forked", runId: id }, answeredAt: Date.now() }, event: answerEvent(source, command.id, "operator.accepted") },
    };
  }

  it("creates the run and answers the command that made it in one write", async () => {
    const { source, command } = await pendingFork();
    const init = forkOf(source, command);
    const { events } = await store.createRun(init);
    expect(events.map((e) => [e.runId, e.type])).toEqual([
      [init.run.id, "run.created"],
      [source, "operator.accepted"],
    ]);
    expect(events[1]!.runSeq).toBe(3);
    expect(await store.getCommand(command.id)).toMatchObject({ status: "accepted", result: { runId: init.run.id }, recorder: { host: "h1", pid: 42 } });
    expect(await store.listCommands({ status: "pending" })).toEqual([]);
    expect((await store.readEvents({ runId: source })).map((e) => e.type)).toEqual(["run.created", "operator.requested", "operator.accepted"]);
    expect(await store.getRun(init.run.id)).toMatchObject({ status: "queued", forkOf: { runId: source } });
  });

  it("makes no run for a command answered already, and changes nothing", async () => {
    const { source, command } = await pendingFork();
    await store.answerCommand({ id: command.id, status: "refused", result: { reason: "gone" }, answeredAt: Date.now() }, answerEvent(source, command.id, "operator.refused"));
    const before = await store.readEvents({});
    const init = forkOf(source, command);
    await expect(store.createRun(init)).rejects.toThrow(new ConflictError(`command ${command.id} was already refused`));
    expect(await store.getRun(init.run.id)).toBeUndefined();
    expect(await store.readEvents({})).toEqual(before);
    expect(await store.getCommand(command.id)).toMatchObject({ status: "refused", result: { reason: "gone" } });
    expect((await store.listRuns({})).runs.map((r) => r.id)).toEqual([source]);
  });

  it("makes no run for a command it does not have", async () => {
    const { source, command } = await pendingFork();
    const init = forkOf(source, { ...command, id: "cmd-missing" });
    await expect(store.createRun(init)).rejects.toBeInstanceOf(NotFoundError);
    expect(await store.getRun(init.run.id)).toBeUndefined();
    expect(await store.getCommand(command.id)).toMatchObject({ status: "pending" });
  });
});
