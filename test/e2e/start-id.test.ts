import { existsSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { cliHarness, workflowOf } from "../support/cli.js";

describe("pitwall start --id: a start a script may retry", () => {
  const cli = cliHarness();

  it("a second start with the id of the same workflow and input is the run started before: exit 0, said on stderr", async () => {
    const first = await cli.json<{ runId: string; existed: boolean }>(["start", workflowOf("task-queue"), "--id", "order-42", "--input", '{"failures": 1}']);
    expect(first).toEqual({ runId: "order-42", existed: false });

    const [again, text] = await Promise.all([
      cli.run(["start", workflowOf("task-queue"), "--id", "order-42", "--input", '{"failures": 1}', "--json"]),
      cli.run(["start", workflowOf("task-queue"), "--id", "order-42", "--input", '{"failures": 1}']),
    ]);
    expect([again.code, JSON.parse(again.stdout)]).toEqual([0, { runId: "order-42", existed: true }]);
    expect([text.code, text.stdout]).toEqual([0, "order-42\n"]);
    expect(text.stderr).toMatch(/^run order-42 was started before \(\d+s ago, now queued\): not started again\n$/);
    expect((await cli.json<{ id: string }[]>(["runs"])).map((r) => r.id)).toEqual(["order-42"]);
  });

  it("the id of another workflow's run, or of a run from another input, is a conflict naming it (exit 3)", async () => {
    await cli.json(["start", workflowOf("task-queue"), "--id", "order-7"]);
    const [other, input] = await Promise.all([
      cli.run(["start", workflowOf("sensitive-operation"), "--id", "order-7"]),
      cli.run(["start", workflowOf("task-queue"), "--id", "order-7", "--input", '{"failures": 2}', "--json"]),
    ]);
    expect([other.code, other.stdout, other.stderr]).toEqual([3, "", "pitwall start: run order-7 already exists, a run of workflow task-queue, not sensitive-operation: give another id\n"]);
    expect([input.code, JSON.parse(input.stderr)]).toEqual([
      3,
      { error: { command: "start", code: "CONFLICT", message: "run order-7 already exists, started from another input: give another id", exitCode: 3 } },
    ]);
  });

  it("refuses an id a run cannot have, before it creates a store", async () => {
    const store = join(cli.dir, "never.db");
    const r = await cli.run(["start", workflowOf("task-queue"), "--id", "order:42", "--store", `sqlite:${store}`]);
    expect([r.code, r.stderr]).toEqual([2, `pitwall start: run id "order:42" may only use letters, digits, '.', '_' and '-' (at most 128)\n`]);
    expect(existsSync(store)).toBe(false);
  });

  it("start --id --wait retried waits for the run started before", async () => {
    const actions = join(cli.dir, "quick.mjs");
    const file = join(cli.dir, "quick.json");
    writeFileSync(actions, "export default { done: () => ({ done: true }) };\n");
    writeFileSync(file, JSON.stringify({ name: "quick", state: { done: { type: "boolean", default: false } }, start: "a", nodes: { a: { action: "done" } } }));
    await cli.json(["start", file, "--id", "quick-1"]);
    const worker = cli.spawn(["worker", "--actions", actions]);
    const waited = await cli.run(["start", file, "--id", "quick-1", "--wait", "--json"]);
    worker.child.kill("SIGINT");
    await worker.exited;
    expect([waited.code, JSON.parse(waited.stdout)]).toEqual([0, { runId: "quick-1", existed: true, status: "succeeded", reason: null, error: null }]);
  });
});

describe("pitwall start --from: a run that has ended goes on with new input", () => {
  const cli = cliHarness();

  it("starts from its final state with the input through the reducers, from the start node; a run still going is refused", async () => {
    writeFileSync(
      join(cli.dir, "chat.json"),
      JSON.stringify({ name: "chat", state: { messages: { type: "array", items: { type: "string" }, reducer: "append", default: [] } }, start: "reply", nodes: { reply: { action: "chat.reply", next: "END" } } }),
    );
    writeFileSync(join(cli.dir, "chat.mjs"), "export default { chat: { reply: (s) => ({ messages: [`echo: ${s.messages.at(-1)}`] }) } };\n");
    const chat = join(cli.dir, "chat.json");
    const actions = ["--actions", join(cli.dir, "chat.mjs")];
    const { runId: first } = await cli.json<{ runId: string }>(["start", chat, "--input", '{"messages":["hi"]}']);
    const early = await cli.run(["start", chat, "--from", first]);
    expect([early.code, early.stderr]).toEqual([3, `pitwall start: run ${first} has not ended (it is queued): a run goes on from another once that has ended; answer, retry or cancel it first\n`]);
    expect((await cli.run(["worker", "--once", ...actions])).code).toBe(0);
    const { runId: next } = await cli.json<{ runId: string }>(["start", chat, "--from", first, "--input", '{"messages":["again"]}']);
    expect((await cli.run(["worker", "--once", ...actions])).code).toBe(0);
    expect(await cli.json(["state", next])).toEqual({ messages: ["hi", "echo: hi", "again", "echo: again"] });
    expect((await cli.json<{ forkOf: unknown }>(["show", next])).forkOf).toEqual({ runId: first, checkpointId: `${first}:1` });
    // A turn may stop where its predecessor did not.
    const { runId: checked } = await cli.json<{ runId: string }>(["start", chat, "--from", next, "--input", '{"messages":["careful"]}', "--interrupt-before", "reply"]);
    expect((await cli.run(["worker", "--once", ...actions])).code).toBe(0);
    expect(await cli.json(["show", checked])).toMatchObject({ status: "paused", interrupts: [{ kind: "before", node: "reply" }] });
    const named = await cli.run(["start", chat, "--from", next, "--id", "turn-3"]);
    expect([named.code, named.stderr]).toEqual([2, "pitwall start: --from takes no --id: the new run's id is made for it\n"]);
  });
});
