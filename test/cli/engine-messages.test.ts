import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { cliHarness, workflowOf } from "../support/cli.js";

/** Messages that come from the engine (engine/state, engine/graph): they name what is wrong. */
describe("engine messages a person reads through the CLI", () => {
  const cli = cliHarness();

  // A nullable object (`"type": ["object", "null"]`) is a union: the failing field inside its
  // object branch is named, not the union.
  it("an invalid field inside a nullable object is named by its own path", async () => {
    const operation = { kind: "delete", target: "s3://b/", olderThanDays: 90, limit: "ten" };
    const r = await cli.run(["start", workflowOf("sensitive-operation"), "--input", JSON.stringify({ operation })]);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/^pitwall start: run input is invalid at \$\.operation\.limit: expected integer, got string "ten"/);
  });

  // JSON Patch failures are said in words, not rfc6902's error class names.
  it("a JSON Patch operation that cannot be applied says why in words", async () => {
    const { runId } = await cli.json<{ runId: string }>(["start", workflowOf("travel-planner")]);
    const [test, missing] = await Promise.all([
      cli.run(["fork", runId, "0", "--patch", '[{"op":"test","path":"/nights","value":99}]']),
      cli.run(["fork", runId, "0", "--patch", '[{"op":"remove","path":"/nope"}]']),
    ]);
    expect([test.code, missing.code]).toEqual([2, 2]);
    expect(test.stderr).not.toMatch(/TestError/);
    expect(missing.stderr).not.toMatch(/MissingError/);
    expect(missing.stderr).toMatch(/\/nope/);
  });

  // A type name that is not one lists the types; a missing field says it is missing.
  it("a workflow with an unknown state type and a missing required field says which and what is allowed", async () => {
    const file = join(cli.dir, "bad-types.json");
    writeFileSync(
      file,
      JSON.stringify({
        name: "bad-types",
        state: { n: { type: "wat" }, out: { type: "string", default: "" } },
        start: "a",
        nodes: { a: { kind: "tool", tool: "lookup", output: "out", next: "END" } },
      }),
    );
    const r = await cli.run(["validate", file]);
    expect(r.code).toBe(2);
    expect(r.stdout).toMatch(/^\S+bad-types\.json:1:\d+: \$\.state\.n\.type: BAD_STATE_SCHEMA: .*"wat".*(string|integer)/m);
    expect(r.stdout).toMatch(/^\S+bad-types\.json:1:\d+: \$\.nodes\.a\.instruction: INVALID_FIELD: .*(missing|required)/m);
  });
});

describe("an agent's tool call waiting for approval", () => {
  const cli = cliHarness();

  // "edit" on a tool approval needs the edited arguments (the response): with only a state patch
  // the tool would run with the model's own arguments.
  it("refuses decision edit without the edited arguments", async () => {
    const env = { PITWALL_LLM_SCRIPT: join(workflowOf("support-triage"), "..", "script.json") };
    const { runId } = await cli.json<{ runId: string }>(["start", workflowOf("support-triage")], env);
    await cli.run(["worker", "--once", "--actions", join(workflowOf("support-triage"), "..", "actions.ts")], env);
    const [approval] = await cli.json<{ id: string; request: { data: { tool: string } } }[]>(["interrupts", "--run", runId]);
    expect(approval!.request.data.tool).toBe("issueRefund");
    const r = await cli.run(["resolve", approval!.id, "--decision", "edit", "--patch", '{"draft":"edited"}'], env);
    expect(r.code).toBe(2);
  });
});
