import { describe, expect, it } from "vitest";
import { z } from "zod";
import { defineTool, readRunCalls, shownTask, type CallView } from "../../engine/index.js";
import { chatServerEach, completion } from "../support/chat-server.js";
import { engineHarness } from "../support/engine.js";
import { compileJson, serverModel } from "../support/llm.js";
import { storeFactories } from "../support/stores.js";

const harness = engineHarness(storeFactories.find((f) => f.name === "sqlite")!);

const API_TOKEN = "tok-9f8e7d6c5b4a";
const BEARER = "Bearer eyJhbGciOiJIUzI1NiJ9.secret-part";
const SESSION = "sess-0a1b2c3d4e";
const PASSWORD = "hunter2-but-longer";

const sessionAgent = {
  name: "session-agent",
  state: { ask: { type: "string" }, out: { type: "string", default: "" } },
  start: "agent",
  nodes: {
    agent: { kind: "agent", prompt: "Open a session for {{ask}}", tools: ["openSession"], requireApproval: ["openSession"], output: "out", next: "END" },
  },
};

function sessionTool() {
  const received: unknown[] = [];
  const openSession = defineTool({
    description: "Opens a session",
    parameters: z.object({ user: z.string(), apiToken: z.string(), headers: z.object({ Authorization: z.string() }) }),
    run: (args) => {
      received.push(args);
      return { sessionToken: SESSION, data: { user: args.user, password: PASSWORD } };
    },
  });
  return { tools: { openSession }, received };
}

const byCall = (calls: CallView[]) => Object.fromEntries(calls.map((c) => [c.call, c]));
const SECRETS = [API_TOKEN, BEARER, SESSION, PASSWORD];

describe("an agent's tool calls: what pitwall keeps for people hides secrets inside the JSON text; the model and the tool get them whole", () => {
  const server = chatServerEach();

  /** An agent whose model asks for openSession with secrets in its arguments, paused for approval of the call. */
  async function askedToApprove() {
    server.reply(
      { kind: "json", body: completion({ toolCalls: [{ id: "c1", name: "openSession", arguments: { user: "dana", apiToken: API_TOKEN, headers: { Authorization: BEARER } } }] }) },
      { kind: "json", body: completion({ content: "opened" }) },
    );
    const { tools, received } = sessionTool();
    const { workflow } = compileJson(sessionAgent, { tools, model: serverModel(server, { stream: false }) });
    const engine = await harness.engine([workflow]);
    const run = await engine.start(workflow, { ask: "dana" });
    expect((await run.wait()).reason).toBe("interrupt");
    const [asked] = await run.pendingInterrupts();
    return { engine, run, received, asked };
  }

  it("tool-call arguments, tool results, the next prompt and the approval's details are redacted; the tool ran with the real arguments and the model was sent the real result", async () => {
    const { engine, run, received, asked } = await askedToApprove();
    // What `pitwall interrupts` prints as DETAILS comes from here.
    expect(asked!.request.data).toEqual({ tool: "openSession", arguments: { user: "dana", apiToken: "[redacted]", headers: { Authorization: "[redacted]" } } });

    await engine.operator("ann").resolve(asked!.id, { decision: "approve" });
    expect((await run.wait()).status).toBe("succeeded");
    expect(received).toEqual([{ user: "dana", apiToken: API_TOKEN, headers: { Authorization: BEARER } }]);
    // The model needs the tool's result: it was sent whole.
    expect(JSON.stringify(server.received[1]!.body)).toContain(SESSION);

    const tasks = await engine.store.listTasks(run.id);
    const { calls } = await readRunCalls(engine.store, run.id, tasks);
    const { "model-1": first, "tool-1-openSession": tool, "model-2": second } = byCall(calls);
    expect(JSON.parse((first as Extract<CallView, { kind: "model" }>).answer!.toolCalls[0]!.arguments)).toEqual({ user: "dana", apiToken: "[redacted]", headers: { Authorization: "[redacted]" } });
    expect(tool).toMatchObject({ arguments: { user: "dana", apiToken: "[redacted]", headers: { Authorization: "[redacted]" } }, result: { sessionToken: "[redacted]", data: { user: "dana", password: "[redacted]" } } });
    const sent = (second as Extract<CallView, { kind: "model" }>).prompt!.messages;
    expect(sent.map((m) => m.role)).toEqual(["tool"]);
    expect(JSON.parse(sent[0]!.content!)).toEqual({ sessionToken: "[redacted]", data: { user: "dana", password: "[redacted]" } });

    // Nothing people read holds them: calls, tasks as `show --json` prints them, events, interrupts.
    const shown = JSON.stringify([calls, tasks.map((t) => shownTask(t)), await engine.store.readEvents({ runId: run.id }), await engine.store.listInterrupts({ runId: run.id })]);
    for (const secret of SECRETS) expect(shown).not.toContain(secret);
  });

  it("arguments an operator edits from their redacted form keep the hidden values the model gave", async () => {
    const { engine, run, received, asked } = await askedToApprove();
    const shown = (asked!.request.data as { arguments: Record<string, unknown> }).arguments;
    await engine.operator("ann").resolve(asked!.id, { decision: "edit", response: { ...shown, user: "dana.k" } });
    expect((await run.wait()).status).toBe("succeeded");
    expect(received).toEqual([{ user: "dana.k", apiToken: API_TOKEN, headers: { Authorization: BEARER } }]);
    // The agent tells the model what the operator changed, arguments and all; its record does not keep the secrets.
    expect(JSON.stringify(server.received[1]!.body)).toContain(API_TOKEN);
    const { calls } = await readRunCalls(engine.store, run.id);
    const note = (byCall(calls)["model-2"] as Extract<CallView, { kind: "model" }>).prompt!.messages[0]!.content!;
    expect(note).toMatch(/^\(operator:ann changed the arguments to \{.*"apiToken":"\[redacted\]".*\} before it ran\.\) \{"sessionToken":"\[redacted\]"/);
    for (const secret of SECRETS) expect(JSON.stringify(calls)).not.toContain(secret);
  });
});
