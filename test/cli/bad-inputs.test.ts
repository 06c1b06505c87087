import { existsSync, truncateSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import type { EventRecord, InterruptRecord } from "../../engine/index.js";
import { inline } from "../../source/text/plain.js";
import { cliHarness, workflowOf } from "../support/cli.js";

/** A node that asks for a JSON answer with ctx.interrupt and stores it; its description is hostile text. */
const ASK_WORKFLOW = {
  name: "ask-json",
  description: "asks \u001b]0;pwned\u0007\u001b[2J for a number",
  state: { answer: { type: ["object", "null"], default: null } },
  start: "ask",
  nodes: { ask: { action: "ask.ask", next: "END" } },
};
const ASK_ACTIONS = `export default { ask: { ask: async (_s, ctx) => {
  await ctx.call("lookup", async () => 7);
  const answer = await ctx.interrupt({ question: "How many?", decisions: ["approve", "reject"],
    responseSchema: { type: "object", properties: { n: { type: "integer" } }, required: ["n"] } });
  return { answer: { decision: answer.decision, response: answer.response } };
} } };
`;

describe("pitwall: bad input gets one line naming the problem, and nothing is written", () => {
  const cli = cliHarness();
  const oneLine = (stderr: string) => stderr.trimEnd().split("\n");

  it("a flag without its value, or options without a command, is a usage error naming the flag", async () => {
    const cases: [string[], string][] = [
      [["runs", "--as"], "pitwall runs: --as needs a value"],
      [["runs", "--store"], "pitwall runs: --store needs a value"],
      [["fork", "run-x", "1", "--patch"], "pitwall fork: --patch needs a value"],
      [["--as", "runs"], 'pitwall: --as needs a value (it took "runs", which is a command) (pitwall --help lists the commands and options)'],
      [["--bogus"], "pitwall: unknown option --bogus (pitwall --help lists the commands and options)"],
    ];
    const results = await Promise.all(cases.map(([args]) => cli.run(args)));
    expect(results.map((r) => [r.code, r.stdout, r.stderr])).toEqual(cases.map(([, message]) => [2, "", `${message}\n`]));
  });

  it("what a workflow file or an error quotes is printed without its escape sequences: no cleared screen, retitled window or forged line", async () => {
    const file = join(cli.dir, "escapes.json");
    writeFileSync(file, JSON.stringify({ name: "e", start: "a", nodes: { a: { action: "x\u001b]0;ACT\u0007", next: "END", "\u001b[2J\u001b[Hlooks fine\u001b]0;TITLE\u0007": 1 } } }));
    const [validated, started] = await Promise.all([cli.run(["validate", file]), cli.run(["start", file])]);
    for (const r of [validated, started]) {
      expect(r.code).toBe(2);
      expect(r.stdout + r.stderr).not.toMatch(/[\u001b\u0007]/);
    }
    expect(validated.stdout + validated.stderr).toContain('unknown field "looks fine"');
  });

  it("a device or an oversized file named where a file is read is refused before reading, not read until memory runs out", async () => {
    const huge = join(cli.dir, "huge.json");
    writeFileSync(huge, "");
    truncateSync(huge, 65 * 1024 * 1024 + 1);
    writeFileSync(join(cli.dir, "sub.json"), JSON.stringify({ name: "sub", state: {}, start: "s", nodes: { s: { kind: "subgraph", workflow: "/dev/zero", next: "END" } } }));
    const [device, big, sub] = await Promise.all([
      cli.run(["start", workflowOf("task-queue"), "--input", "@/dev/zero"]),
      cli.run(["validate", huge]),
      cli.run(["validate", join(cli.dir, "sub.json")]),
    ]);
    expect([device.code, device.stderr]).toEqual([2, "pitwall start: --input: cannot read /dev/zero: it is a device, not a file\n"]);
    expect(big.code).toBe(2);
    expect(big.stderr + big.stdout).toContain("it holds 65.0 MiB; files read as text may hold at most 64 MiB");
    expect(sub.code).toBe(2);
    expect(sub.stdout + sub.stderr).toContain("cannot read sub-workflow /dev/zero: it is a device, not a file");
    expect(existsSync(join(cli.dir, "pitwall.db"))).toBe(false);
  });

  it("under --json an error is one JSON object on stderr, with a code a script can branch on", async () => {
    await cli.createStore();
    const cases: [string[], Record<string, unknown>][] = [
      [["runs", "--as", "--json"], { command: "runs", code: "USAGE", message: "--as needs a value", exitCode: 2 }],
      [["--json", "nope"], { code: "USAGE", message: 'unknown command "nope" (pitwall --help lists them)', exitCode: 2 }],
      [["show", "run-nope", "--json"], { command: "show", code: "NOT_FOUND", message: "run run-nope not found", exitCode: 2 }],
      [["runs", "--json", "--store", "sqlite:/nonexistent-dir/x.db"], { command: "runs", code: "STORE", exitCode: 1, transient: false }],
    ];
    const results = await Promise.all(cases.map(([args]) => cli.run(args)));
    for (const [i, result] of results.entries()) {
      expect(result.stdout).toBe("");
      expect(result.stderr.endsWith("\n") && result.stderr.trimEnd().split("\n").length === 1).toBe(true);
      const { error } = JSON.parse(result.stderr) as { error: Record<string, unknown> };
      expect(error).toMatchObject(cases[i]![1]);
      expect(result.code).toBe(error.exitCode);
    }
  });

  it("diff names the unknown run, not a checkpoint of it; a UTF-8 byte-order mark in a workflow file is accepted", async () => {
    await cli.createStore();
    const diff = await cli.run(["diff", "run-nope", "1"]);
    expect([diff.code, diff.stderr]).toEqual([2, "pitwall diff: run run-nope not found\n"]);
    const file = join(cli.dir, "bom.json");
    writeFileSync(file, `\uFEFF${JSON.stringify(ASK_WORKFLOW)}`);
    const validated = await cli.run(["validate", file]);
    expect([validated.code, validated.stdout]).toEqual([0, expect.stringContaining("valid workflow ask-json (version")]);
  });

  it("graph prints a workflow's text without the terminal control sequences it contains", async () => {
    const file = join(cli.dir, "ask.json");
    writeFileSync(file, JSON.stringify(ASK_WORKFLOW));
    const drawn = await cli.run(["graph", file]);
    expect(drawn.code).toBe(0);
    expect(drawn.stdout).toContain("asks");
    expect(drawn.stdout).not.toMatch(/[\u0000-\u0008\u000b-\u001f\u007f-\u009f]/);
    const bare = join(cli.dir, "ask-workflow");
    writeFileSync(bare, JSON.stringify(ASK_WORKFLOW));
    expect(await cli.run(["graph", bare])).toMatchObject({ code: 0, stdout: drawn.stdout });
    expect(await cli.run(["graph", join(cli.dir, "missing")])).toMatchObject({ code: 2, stderr: expect.stringContaining("missing") });
  });

  it("cuts long values between characters, never inside an emoji", () => {
    expect(inline("🎉".repeat(10), 5)).toBe("🎉🎉🎉🎉…");
  });

  it("start --wait --json still prints the run it started when the wait times out, and exits 4, not as a failed run", async () => {
    const r = await cli.run(["start", workflowOf("task-queue"), "--wait", "--timeout", "0.2", "--json"]);
    expect(r.code).toBe(4);
    expect(JSON.parse(r.stdout)).toMatchObject({ runId: expect.stringMatching(/^run-/), status: "queued" });
    expect(JSON.parse(r.stderr)).toMatchObject({
      error: { command: "start", code: "TIMEOUT", message: expect.stringMatching(/^run run-\w+ did not settle within 0.2 s \(it is queued; it goes on without this wait\)$/), exitCode: 4 },
    });
  });

  it("worker --once says which queued runs it left behind and why", async () => {
    const file = join(cli.dir, "ask.json");
    writeFileSync(file, JSON.stringify(ASK_WORKFLOW));
    await cli.run(["start", file]);
    writeFileSync(join(cli.dir, "other.mjs"), "export default { other: { x: () => ({}) } };\n");
    const worker = await cli.run(["worker", "--once", "--actions", join(cli.dir, "other.mjs")]);
    expect(worker.code).toBe(0);
    expect(worker.stderr).toMatch(/^\S+Z WARN  \d+ queued runs? of ask-json \(version \w+\) left for a worker that can run (it|them): .*action "ask\.ask" is not exported/m);
  });

  it("a start refused for its input or its interrupt nodes creates no store file", async () => {
    const file = join(cli.dir, "never-created.db");
    const refused = await Promise.all([
      cli.run(["start", workflowOf("task-queue"), "--input", '{"nope": 1}'], { PITWALL_STORE: `sqlite:${file}` }),
      cli.run(["start", workflowOf("task-queue"), "--interrupt-before", "ghost"], { PITWALL_STORE: `sqlite:${file}` }),
    ]);
    expect(refused.map((r) => r.code)).toEqual([2, 2]);
    expect(refused[0]!.stderr).toBe("pitwall start: run input is invalid at $: unknown key nope\n");
    expect(existsSync(file)).toBe(false);
  });

  it("a worker that runs on says once which queued runs it cannot take and why, rather than leaving them waiting without a word", async () => {
    const file = join(cli.dir, "ask-left.json");
    writeFileSync(file, JSON.stringify({ ...ASK_WORKFLOW, name: "ask-left" }));
    writeFileSync(join(cli.dir, "other.mjs"), "export default { other: { x: () => ({}) } };\n");
    await cli.run(["start", file]);
    const worker = cli.spawn(["worker", "--actions", join(cli.dir, "other.mjs")]);
    const deadline = Date.now() + 15_000;
    while (!/left for a worker/.test(worker.stderr) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
    worker.child.kill("SIGINT");
    const { code, stderr } = await worker.exited;
    expect(code).toBe(0);
    expect(stderr).toMatch(/^\S+Z WARN  1 queued run of ask-left \(version \w+\) left for a worker that can run it: .*action "ask\.ask" is not exported/m);
    expect(stderr.match(/of ask-left \(version \w+\) left for a worker/g)).toHaveLength(1);
  });

  it("a worker's line for a run that stopped says why: the failed node's error, what a paused run waits on", async () => {
    const file = join(cli.dir, "boom.json");
    const actions = join(cli.dir, "boom.mjs");
    writeFileSync(file, JSON.stringify({ name: "boom", start: "explode", nodes: { explode: { action: "explode", retry: { maxAttempts: 1, onExhausted: "fail" } } } }));
    writeFileSync(actions, "export default { explode: () => { throw new Error('kaboom'); } };\n");
    const { runId } = await cli.json<{ runId: string }>(["start", file]);
    const worker = await cli.run(["worker", "--once", "--actions", actions]);
    expect(worker.stdout).toMatch(new RegExp(`^\\S+Z WARN  run ${runId} failed: explode: node "explode" failed after 1 attempt: kaboom$`, "m"));
  });

  it("resolve --respond goes with the decision given beside it; --edit without an editor or a terminal is refused", async () => {
    const file = join(cli.dir, "ask.json");
    const actions = join(cli.dir, "ask-actions.mjs");
    writeFileSync(file, JSON.stringify(ASK_WORKFLOW));
    writeFileSync(actions, ASK_ACTIONS);
    const { runId } = await cli.json<{ runId: string }>(["start", file]);
    await cli.run(["worker", "--once", "--actions", actions]);
    const [ask] = await cli.json<InterruptRecord[]>(["interrupts", "--run", runId]);
    const eventsBefore = (await cli.run(["events", runId, "--json"])).stdout;
    const shown = (await cli.run(["show", runId])).stdout;
    expect(shown).toMatch(/^step +1 · checkpoint 0 · \d+ events · at ask$/m);
    expect(shown).toMatch(/^1 +ask +interrupted .*\n1 +ask · lookup +succeeded /m);

    const noEditor = await cli.run(["resolve", ask!.id, "--edit"], { VISUAL: "", EDITOR: "" });
    expect([noEditor.code, oneLine(noEditor.stderr)]).toEqual([2, [expect.stringMatching(/^pitwall resolve: the editor would be vi, which needs a terminal/)]]);
    const both = await cli.run(["resolve", ask!.id, "--approve", "--reject"]);
    expect([both.code, both.stderr]).toEqual([2, "pitwall resolve: give exactly one of --approve, --reject, --respond, --edit, --decision (got --approve, --reject)\n"]);
    // A decision the interrupt does not offer is refused for that, not for the answer's shape.
    const notOffered = await cli.run(["resolve", ask!.id, "--respond", "hello"]);
    expect([notOffered.code, oneLine(notOffered.stderr)]).toEqual([2, [`pitwall resolve: decision "respond" is not allowed for interrupt ${ask!.id} (allowed: approve, reject)`]]);
    const invalid = await cli.run(["resolve", ask!.id, "--approve", "--respond", '{"n":"three"}']);
    expect([invalid.code, oneLine(invalid.stderr)]).toEqual([2, [expect.stringMatching(/^pitwall resolve: response to interrupt .* is invalid at \$\.n/)]]);
    expect((await cli.run(["events", runId, "--json"])).stdout.split("\n").filter((l) => !l.includes('"operator.'))).toEqual(eventsBefore.split("\n"));

    const answered = await cli.json<{ decision: string }>(["resolve", ask!.id, "--approve", "--respond", '{"n":3}']);
    expect(answered.decision).toBe("approve");
    await cli.run(["worker", "--once", "--actions", actions]);
    expect(await cli.json(["state", runId])).toEqual({ answer: { decision: "approve", response: { n: 3 } } });
    const events = (await cli.run(["events", runId, "--json", "--type", "interrupt.resolved"])).stdout.trim().split("\n").map((l) => JSON.parse(l) as EventRecord);
    expect(events).toHaveLength(1);
  });

  it("prints state and events whose text holds escape codes, C1 controls and bidi overrides without passing them to the terminal", async () => {
    const hostile = "red\u001b[31m csi\u009b2J rtl\u202eevil next\u0085line";
    writeFileSync(join(cli.dir, "say.json"), JSON.stringify({ name: "say", state: { note: { type: "string", default: "" } }, start: "say", nodes: { say: { action: "say.say", next: "END" } } }));
    writeFileSync(join(cli.dir, "say.mjs"), `export default { say: { say: (_s, ctx) => (ctx.log.info(${JSON.stringify(hostile)}), { note: ${JSON.stringify(hostile)} }) } };\n`);
    const { runId } = await cli.json<{ runId: string }>(["start", join(cli.dir, "say.json")]);
    await cli.run(["worker", "--once", "--actions", join(cli.dir, "say.mjs")]);
    const outputs = await Promise.all([["state", runId], ["state", runId, "--json"], ["events", runId, "--json"], ["events", runId], ["diff", runId, "1"], ["show", runId, "--json"]].map((args) => cli.run(args)));
    for (const r of outputs) {
      expect(r.code).toBe(0);
      expect(r.stdout).not.toMatch(/[\u0000-\u0009\u000b-\u001f\u007f-\u009f\u202a-\u202e]/);
    }
    expect(JSON.parse(outputs[1]!.stdout)).toEqual({ note: hostile });
  });
});
