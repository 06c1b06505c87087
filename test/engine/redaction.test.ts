import { describe, expect, it } from "vitest";
import { z } from "zod";
import { isSecretKey, redact, workflow } from "../../engine/index.js";
import { engineHarness } from "../support/engine.js";
import { storeFactories } from "../support/stores.js";

const harness = engineHarness(storeFactories.find((f) => f.name === "sqlite")!);

function nestedUnder(depth: number, leaf: Record<string, unknown>): Record<string, unknown> {
  let value: Record<string, unknown> = leaf;
  for (let i = 0; i < depth; i++) value = { level: value };
  return value;
}

describe("redaction of what events and records keep", () => {
  it("hides secrets at any depth of a node's log data; past the depth state may hold, what is left is replaced whole", async () => {
    const wf = workflow("deep-log", { state: z.object({ n: z.number().default(0) }) })
      .node(
        "work",
        (_s, ctx) => {
          ctx.log.info("41 levels", nestedUnder(40, { apiKey: "sk-deep-41" }));
          ctx.log.info("far too deep", nestedUnder(5_000, { apiKey: "sk-deep-5000" }));
          return {};
        },
        { next: "END" },
      )
      .compile();
    const engine = await harness.engine([wf]);
    const run = await engine.start(wf);
    expect((await run.wait()).status).toBe("succeeded");
    const logs = await engine.store.readEvents({ runId: run.id, types: ["node.log"] });
    const text = JSON.stringify(logs);
    expect(text).not.toContain("sk-deep");
    expect(text).toContain('"apiKey":"[redacted]"');
    expect(text).toContain("[too deep to show]");
  });

  it("matches names by their words, in any case, separator or number; a count of tokens stays visible", () => {
    const hidden = ["secretAccessKey", "aws_secret_access_key", "apiKeys", "API_KEY", "x-api-key", "tokens", "accessToken", "refresh_token", "pwd", "passphrase", "Authorization", "sessionCookies", "privateKey", "client_secret", "passwordHash"];
    const kept = ["tokenCount", "maxTokens", "max_tokens", "promptTokens", "completion_tokens", "totalTokens", "prompt_tokens_details", "tokenizer", "idempotencyKey", "cacheKey", "accessKeyId", "passwordLength", "secretName", "author", "monkey"];
    expect(hidden.filter((k) => !isSecretKey(k))).toEqual([]);
    expect(kept.filter((k) => isSecretKey(k))).toEqual([]);
    expect(redact({ tokens: 12, usage: { tokens: { prompt: 92, completion: 38 } }, auth: { tokens: ["tok-a"] } })).toEqual({
      tokens: 12,
      usage: { tokens: { prompt: 92, completion: 38 } },
      auth: { tokens: "[redacted]" },
    });
  });

  it("an engine's secretKeys reach its worker and its operators: an edit's operator.requested and state.edited hide them", async () => {
    const wf = workflow("custom-keys", { state: z.object({ person: z.object({ ssn: z.string(), name: z.string() }).default({ ssn: "", name: "" }) }), interruptBefore: ["use"] })
      .node("use", (_s, ctx) => {
        ctx.log.info("checked", { ssn: "078-05-1120" });
        return {};
      }, { next: "END" })
      .compile();
    const engine = await harness.engine([wf], { secretKeys: ["ssn"] });
    const run = await engine.start(wf);
    await run.wait();
    const op = engine.operator("ann");
    await op.updateState(run.id, { person: { ssn: "078-05-1120", name: "Ann" } });
    await op.updateState(run.id, [{ op: "replace", path: "/person/ssn", value: "219-09-9999" }]);
    const [interrupt] = await run.pendingInterrupts();
    await op.resolve(interrupt!.id, { decision: "approve" });
    expect((await run.wait()).status).toBe("succeeded");
    const events = await engine.store.readEvents({ runId: run.id });
    const text = JSON.stringify(events);
    expect(text).not.toMatch(/078-05-1120|219-09-9999/);
    expect(events.filter((e) => e.type === "operator.requested" || e.type === "state.edited" || e.type === "node.log").length).toBeGreaterThanOrEqual(5);
    expect((await run.state()).person).toEqual({ ssn: "219-09-9999", name: "Ann" });
  });
});
