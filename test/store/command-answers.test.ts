import { describe, expect, it } from "vitest";
import { ConflictError, NotFoundError, type CommandAnswer, type CommandRecord, type NewEvent, type Store } from "../../engine/index.js";
import { newId } from "../../engine/ids.js";
import { newRun } from "../../engine/runtime/new-run.js";
import { pendingCommand } from "../support/records.js";
import { storeEach, storeFactories } from "../support/stores.js";

// Store contract: a commit answers an operator command only while it is pending, so that two
// processes answering one command (a worker letting go of its run, the operator who recorded the
// command, a worker's sweep) never both succeed.

const WF = { name: "contract", version: "v-contract" };

function answerEvent(command: CommandRecord, actor: string): NewEvent {
  return { runId: command.runId, taskId: null, traceId: "t", spanId: null, type: "operator.refused", actor, payload: { commandId: command.id, command: command.type, reason: `said by ${actor}` }, time: Date.now() } as NewEvent;
}

function refusedBy(command: CommandRecord, actor: string): { answer: CommandAnswer; event: NewEvent } {
  return { answer: { id: command.id, status: "refused", result: { reason: `said by ${actor}` }, answeredAt: Date.now() }, event: answerEvent(command, actor) };
}

describe.each(storeFactories)("Store contract, answering commands in commits: $name", (factory) => {
  let store: Store;
  storeEach(factory, (opened) => (store = opened));

  /** A claimed run with a kill queued for its owner: the run's fence and the command. */
  async function queuedKill(): Promise<{ fence: number; command: CommandRecord }> {
    const runId = newId("run");
    await store.createRun(newRun({ id: runId, workflow: WF, state: {}, actor: "test" }));
    const claim = await store.claimRun({ owner: "w1", leaseMs: 60_000, runId });
    const command = pendingCommand(runId, "kill");
    await store.submitCommand(command, { ...answerEvent(command, "operator:ann"), type: "operator.requested", payload: { commandId: command.id, command: "kill", args: {} } } as NewEvent);
    return { fence: claim!.fence, command };
  }

  function commitAnswer(fence: number, command: CommandRecord, actor: string, extra: { breakpoints?: string[] } = {}) {
    const { answer, event } = refusedBy(command, actor);
    return store.commit({ id: newId("c", 12), runId: command.runId, fence, commands: [answer], events: [event], ...(extra.breakpoints ? { run: { breakpoints: extra.breakpoints } } : {}) });
  }

  const answers = async (runId: string) => (await store.readEvents({ runId, types: ["operator.accepted", "operator.refused"] })).map((e) => e.actor);

  it("refuses a commit that answers a command answered already, and writes none of it", async () => {
    const { fence, command } = await queuedKill();
    await commitAnswer(fence, command, "worker:w1");
    const before = await store.readEvents({ runId: command.runId });
    await expect(commitAnswer(fence, command, "operator:ann", { breakpoints: ["x"] })).rejects.toThrow(new ConflictError(`command ${command.id} was already refused`));
    expect(await store.readEvents({ runId: command.runId })).toEqual(before);
    expect((await store.getRun(command.runId))?.breakpoints).toEqual([]);
    expect(await store.getCommand(command.id)).toMatchObject({ status: "refused", result: { reason: "said by worker:w1" } });

    const { answer, event } = refusedBy(command, "worker:w2");
    await expect(store.answerCommand(answer, event)).rejects.toThrow(new ConflictError(`command ${command.id} was already refused`));
    expect(await answers(command.runId)).toEqual(["worker:w1"]);
  });

  it("gives one command one answer when commits and an answerCommand race for it", async () => {
    const { fence, command } = await queuedKill();
    const { answer, event } = refusedBy(command, "worker:w3");
    const settled = await Promise.allSettled([commitAnswer(fence, command, "worker:w1"), commitAnswer(fence, command, "operator:ann"), store.answerCommand(answer, event)]);
    expect(settled.filter((s) => s.status === "fulfilled")).toHaveLength(1);
    for (const lost of settled.filter((s) => s.status === "rejected")) expect(lost.reason).toBeInstanceOf(ConflictError);
    const [winner] = await answers(command.runId);
    expect(await answers(command.runId)).toEqual([winner]);
    expect(await store.getCommand(command.id)).toMatchObject({ status: "refused", result: { reason: `said by ${winner}` } });
    expect(await store.listCommands({ status: "pending" })).toEqual([]);
  });

  it("refuses a commit that answers a command it does not have; acknowledges a commit sent again", async () => {
    const { fence, command } = await queuedKill();
    const before = await store.readEvents({ runId: command.runId });
    await expect(commitAnswer(fence, { ...command, id: "cmd-missing" }, "worker:w1", { breakpoints: ["x"] })).rejects.toBeInstanceOf(NotFoundError);
    expect(await store.readEvents({ runId: command.runId })).toEqual(before);
    expect((await store.getRun(command.runId))?.breakpoints).toEqual([]);

    // A commit whose reply was lost, sent again, is the same write: acknowledged, not refused.
    const { answer, event } = refusedBy(command, "worker:w1");
    const commit = { id: newId("c", 12), runId: command.runId, fence, commands: [answer], events: [event] };
    await store.commit(commit);
    expect(await store.commit(commit)).toEqual({ events: [] });
    expect(await answers(command.runId)).toEqual(["worker:w1"]);
  });
});
