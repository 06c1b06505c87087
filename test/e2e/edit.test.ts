import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import type { CheckpointRecord, InterruptRecord } from "../../engine/index.js";
import { BIN, actionsOf, cliHarness, workflowOf } from "../support/cli.js";

/**
 * A stand-in for a person in $EDITOR: logs what it was shown and the file's name, then saves the state with
 * `operation.limit` set by its mode — 0 (invalid) first and 20 once it sees an error, always 0,
 * an empty file, invalid JSON, or it fails.
 */
const EDITOR_SCRIPT = `
import { appendFileSync, readFileSync, writeFileSync } from "node:fs";
import { basename } from "node:path";
const file = process.argv[2];
const text = readFileSync(file, "utf8");
appendFileSync(process.env.EDIT_LOG, JSON.stringify({ file: basename(file), text }) + "\\n");
const mode = process.env.EDIT_MODE;
if (mode === "fail") process.exit(1);
if (mode === "empty") { writeFileSync(file, ""); process.exit(0); }
if (mode === "broken") {
  // Cuts the last brace; shown that error, adds a stray line; shown that one, saves it again unchanged with a note of its own on top.
  const lines = text.split("\\n");
  if (!text.includes("ERROR:")) writeFileSync(file, text.replace(/}\\s*$/, ""));
  else if (!text.includes("oops")) writeFileSync(file, [...lines.slice(0, lines.indexOf("{") + 1), "oops", ...lines.slice(lines.indexOf("{") + 1)].join("\\n"));
  else writeFileSync(file, "// my note\\n" + text);
  process.exit(0);
}
const state = JSON.parse(text.split("\\n").filter((l) => !l.startsWith("//")).join("\\n"));
state.operation.limit = mode === "fix" && text.includes("ERROR:") ? 20 : 0;
writeFileSync(file, JSON.stringify(state, null, 2));
`;

describe("pitwall resolve --edit (like kubectl edit)", () => {
  const cli = cliHarness();

  async function pausedRun() {
    const runId = (await cli.run(["start", workflowOf("sensitive-operation")])).stdout.trim();
    await cli.run(["worker", "--once", "--actions", actionsOf("sensitive-operation")]);
    const [ask] = await cli.json<InterruptRecord[]>(["interrupts", "--run", runId]);
    return { runId, interruptId: ask!.id };
  }

  function editor(mode: string) {
    const script = join(cli.dir, "editor.mjs");
    writeFileSync(script, EDITOR_SCRIPT);
    const log = join(cli.dir, `edits-${mode}-${Date.now()}.log`);
    writeFileSync(log, "");
    return {
      env: { EDITOR: `"${process.execPath}" "${script}"`, VISUAL: "", EDIT_MODE: mode, EDIT_LOG: log },
      opened: () => readFileSync(log, "utf8").trim().split("\n").filter(Boolean).map((l) => JSON.parse(l) as { file: string; text: string }),
      shown() {
        return this.opened().map((o) => o.text);
      },
    };
  }

  it("reopens the editor with the validation error on top, then applies the corrected state", async () => {
    const { runId, interruptId } = await pausedRun();
    const ed = editor("fix");
    const r = await cli.run(["resolve", interruptId, "--edit", "--json"], ed.env);
    expect(r.code).toBe(0);
    expect(JSON.parse(r.stdout)).toMatchObject({ interruptId, runId, decision: "edit", checkpointId: expect.any(String) });
    const [first, second] = ed.shown();
    expect(ed.shown()).toHaveLength(2);
    expect(first).toMatch(new RegExp(`^// State of run ${runId}, paused at execute`));
    expect(first).toContain('"limit": 500');
    expect(second).toMatch(/\/\/ ERROR: edited state is invalid at \$\.operation\.limit: /);
    expect(second).toContain('"limit": 0');
    // Named after what is edited, for the editor's title.
    expect(ed.opened().map((o) => o.file)).toEqual(["state.json", "state.json"]);

    await cli.run(["worker", "--once", "--actions", actionsOf("sensitive-operation")]);
    expect(await cli.json(["state", runId])).toMatchObject({ operation: { limit: 20 }, result: "deleted 20 objects under s3://acme-backups/nightly/" });
  });

  it("an empty file cancels: nothing is resolved", async () => {
    const { runId, interruptId } = await pausedRun();
    const r = await cli.run(["resolve", interruptId, "--edit"], editor("empty").env);
    expect(r.code).toBe(0);
    expect(r.stderr).toBe(`edit canceled, no changes made; interrupt ${interruptId} is still pending\n`);
    expect(await cli.json<InterruptRecord[]>(["interrupts", "--run", runId])).toHaveLength(1);
  });

  it("saving the same invalid state again gives up with the error (exit 2), and a failing editor changes nothing", async () => {
    const { runId, interruptId } = await pausedRun();
    const before = await cli.json<CheckpointRecord[]>(["checkpoints", runId]);
    const ed = editor("stubborn");
    const r = await cli.run(["resolve", interruptId, "--edit"], ed.env);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/^pitwall resolve: edited state is invalid at \$\.operation\.limit: .*saved unchanged; nothing was applied\)\n$/);
    expect(ed.shown()).toHaveLength(2);
    // For a script it is the validation error it is, with its issues, as --set would give.
    const asJson = await cli.run(["resolve", interruptId, "--edit", "--json"], editor("stubborn").env);
    expect(asJson.code).toBe(2);
    expect(JSON.parse(asJson.stderr)).toMatchObject({ error: { code: "VALIDATION", issues: [expect.objectContaining({ path: "$.operation.limit" })] } });
    // Every JSON error names the line of the file as it was saved that time, `//` lines counted:
    // the reopened file has the error's lines on top, which the first save did not.
    const broken = editor("broken");
    const cut = await cli.run(["resolve", interruptId, "--edit"], broken.env);
    const [opened, afterCut, afterOops] = broken.shown();
    expect(broken.shown()).toHaveLength(3);
    const savedLines = [opened!.replace(/}\s*$/, ""), afterCut!.replace(/^\{$/m, "{\noops"), `// my note\n${afterOops}`].map((text) => text.split("\n"));
    expect(afterCut).toContain(`// ERROR: not valid JSON at line ${savedLines[0]!.length}, `);
    expect(afterOops).toContain(`// ERROR: not valid JSON at line ${savedLines[1]!.indexOf("oops") + 1}, column 1: `);
    expect([cut.code, cut.stderr]).toEqual([2, expect.stringMatching(new RegExp(`^pitwall resolve: not valid JSON at line ${savedLines[2]!.indexOf("oops") + 1}, column 1: .*saved unchanged`))]);

    const failed = await cli.run(["resolve", interruptId, "--edit"], editor("fail").env);
    expect(failed.code).toBe(2);
    expect(failed.stderr).toMatch(/exited with code 1; nothing was changed\n$/);
    const missing = await cli.run(["resolve", interruptId, "--edit"], { EDITOR: "pitwall-no-such-editor", VISUAL: "" });
    expect(missing.code).toBe(2);
    // After the shell's own words (the editor shares the terminal).
    expect(missing.stderr.trimEnd().split("\n").at(-1)).toBe('pitwall resolve: editor "pitwall-no-such-editor" ($EDITOR) was not found: set $VISUAL or $EDITOR to an editor installed here; nothing was changed');
    expect(await cli.json(["checkpoints", runId])).toEqual(before);
    expect(await cli.json<InterruptRecord[]>(["interrupts", "--run", runId])).toHaveLength(1);
  });

  it("pitwall edit changes a paused run's state outside any interrupt: --set, --patch, --editor; bad edits write nothing", async () => {
    const { runId, interruptId } = await pausedRun();
    const before = await cli.json<CheckpointRecord[]>(["checkpoints", runId]);
    const bad = await Promise.all([
      cli.run(["edit", runId, "--set", "operation.limit=lots"]),
      cli.run(["edit", runId]),
      cli.run(["edit", "run-nope", "--set", "operation.limit=1"]),
      cli.run(["edit", runId, "--set", "operation.limit=1", "--editor"]),
      cli.run(["edit", runId, "--patch", '[{"op":"bogus","path":"/a"}]']),
      cli.run(["edit", runId, "--set", "request.x=1"]),
    ]);
    expect(bad.map((r) => [r.code, r.stderr.split("\n").length])).toEqual([[2, 2], [2, 2], [2, 2], [2, 2], [2, 2], [2, 2]]);
    // Said once, in words (not twice, nor in JavaScript's words).
    expect(bad[4]!.stderr).toBe('pitwall edit: patch operation 0 has op "bogus": use one of add, remove, replace, move, copy, test\n');
    expect(bad[5]!.stderr).toBe('pitwall edit: patch operation 0 (add /request/x) cannot be applied: /request holds a string, which cannot hold "x"\n');
    expect(bad[0]!.stderr).toMatch(/^pitwall edit: edited state is invalid at \$\.operation\.limit/);
    expect(bad[2]!.stderr).toBe("pitwall edit: run run-nope not found\n");
    // Every failing field of the (nullable) object is named, not only the first.
    const patch = [{ op: "replace", path: "/operation/kind", value: "purge" }, { op: "replace", path: "/operation/olderThanDays", value: "7" }, { op: "replace", path: "/operation/limit", value: 20000 }];
    const many = await cli.run(["edit", runId, "--patch", JSON.stringify(patch)]);
    expect([many.code, many.stderr]).toEqual([
      2,
      'pitwall edit: edited state is invalid at $.operation.kind: "purge" is not one of "delete", "archive" ($.operation.olderThanDays: expected integer, got string "7"; $.operation.limit: must be at most 10000, got 20000)\n',
    ]);
    expect(await cli.json(["checkpoints", runId])).toEqual(before);

    const set = await cli.json<{ effect: string; checkpointId: string }>(["edit", runId, "--set", "operation.limit=7", "--reason", "smaller batch"]);
    expect(set.effect).toMatch(/^state edited \(checkpoint /);
    expect(await cli.json(["state", runId])).toMatchObject({ operation: { limit: 7 } });
    const same = await cli.run(["edit", runId, "--set", "operation.limit=7"]);
    expect([same.code, same.stdout]).toEqual([0, "the edit changes nothing in the state; nothing was written\n"]);

    const ed = editor("fix"); // saves limit 0 (refused), then 20 once it sees the error
    const edited = await cli.run(["edit", runId, "--editor"], ed.env);
    expect([edited.code, edited.stdout]).toEqual([0, expect.stringMatching(/^state edited \(checkpoint /)]);
    expect(ed.shown()[0]).toMatch(new RegExp(`^// State of run ${runId}\\.`));
    expect(await cli.json(["state", runId])).toMatchObject({ operation: { limit: 20 } });
    expect(await cli.json<InterruptRecord[]>(["interrupts", "--run", runId])).toEqual([expect.objectContaining({ id: interruptId })]);
  });

  it("an edit over another operator's change reopens the editor on the state as it is now; an ended run is refused before the editor opens", async () => {
    const { runId } = await pausedRun();
    // The first time, another operator sets the limit while this one edits; the second time this
    // one (shown the state as it now is, and why) makes the change again.
    const script = join(cli.dir, "racing-editor.mjs");
    writeFileSync(
      script,
      `import { execFileSync } from "node:child_process";
import { appendFileSync, readFileSync, writeFileSync } from "node:fs";
const file = process.argv[2];
const text = readFileSync(file, "utf8");
appendFileSync(process.env.EDIT_LOG, JSON.stringify(text) + "\\n");
const state = JSON.parse(text.split("\\n").filter((l) => !l.startsWith("//")).join("\\n"));
if (!text.includes("ERROR:")) execFileSync(process.execPath, [${JSON.stringify(BIN)}, "edit", process.env.RUN, "--set", "operation.limit=7", "--as", "bob"]);
state.operation.limit = text.includes("ERROR:") ? 30 : 25;
writeFileSync(file, JSON.stringify(state, null, 2));
`,
    );
    const log = join(cli.dir, "racing.log");
    writeFileSync(log, "");
    const env = { EDITOR: `"${process.execPath}" "${script}"`, VISUAL: "", EDIT_LOG: log, RUN: runId };
    const r = await cli.run(["edit", runId, "--editor"], env);
    expect([r.code, r.stdout]).toEqual([0, expect.stringMatching(/^state edited/)]);
    const [, second] = readFileSync(log, "utf8").trim().split("\n").map((l) => JSON.parse(l) as string);
    expect(second).toMatch(/\/\/ ERROR: .*the value at \/operation\/limit is 7, not 500 .*this is the state now, make your change again/);
    expect(second).toContain('"limit": 7');
    expect(await cli.json(["state", runId])).toMatchObject({ operation: { limit: 30 } });

    await cli.run(["cancel", runId, "--reason", "done with it"]);
    const ended = await cli.run(["edit", runId, "--editor"], env);
    expect([ended.code, ended.stderr]).toEqual([3, `pitwall edit: run ${runId} has ended (canceled); fork it to change its state\n`]);
    expect(readFileSync(log, "utf8").trim().split("\n")).toHaveLength(2); // the editor did not open again
  });

  it("edit --as-node on a run paused before that node skips it; show and events say it was skipped", async () => {
    const file = join(cli.dir, "skippable.json");
    writeFileSync(file, JSON.stringify({ name: "skippable", state: { note: { type: "string", default: "" } }, start: "a", nodes: { a: { kind: "wait", seconds: 0, next: "b" }, b: { kind: "wait", seconds: 3600, next: "END" } } }));
    const runId = (await cli.run(["start", file, "--interrupt-before", "b"])).stdout.trim();
    await cli.run(["worker", "--once"]);
    const edited = await cli.run(["edit", runId, "--set", "note=by hand", "--as-node", "b"]);
    expect([edited.code, edited.stdout]).toEqual([0, expect.stringMatching(/^resolved int-\S+ with skip and a state edit \(checkpoint \S+\) \(b will not run\)\n$/)]);
    expect((await cli.run(["worker", "--once"])).code).toBe(0);
    expect((await cli.run(["show", runId])).stdout).toMatch(/^\s*2 +b +skipped +1 /m);
    expect((await cli.run(["events", runId, "--type", "task.succeeded"])).stdout).toMatch(/task\.succeeded .* b skipped by an operator: it did not run$/m);
    expect(await cli.json(["state", runId])).toEqual({ note: "by hand" });
    // Its checkpoints name the edit at the node it answered, and the node as skipped, not as run.
    const nodes = (await cli.run(["checkpoints", runId])).stdout.trim().split("\n").slice(1).map((line) => line.split(/ {2,}/)[5]);
    expect(nodes).toEqual(["-", "a", "at b", "b (skipped)"]);
  });

  it("checkpoints says what runs next is planned on resume after a pause after a node and an edit made as it, and - where the run ended", async () => {
    const file = join(cli.dir, "after-a.json");
    writeFileSync(file, JSON.stringify({ name: "after-a", state: { note: { type: "string", default: "" } }, start: "a", nodes: { a: { kind: "wait", seconds: 0, next: "b" }, b: { kind: "wait", seconds: 0, next: "END" } } }));
    const runId = (await cli.run(["start", file, "--interrupt-after", "a"])).stdout.trim();
    await cli.run(["worker", "--once"]);
    expect((await cli.run(["edit", runId, "--set", "note=by hand", "--as-node", "a"])).code).toBe(0);
    const next = async () => (await cli.run(["checkpoints", runId])).stdout.trim().split("\n").slice(1).map((line) => line.split(/ {2,}/)[6]);
    expect(await next()).toEqual(["a", "(on resume)", "(on resume)"]);
    const [pending] = await cli.json<InterruptRecord[]>(["interrupts", "--run", runId]);
    expect((await cli.run(["resolve", pending!.id, "--approve"])).code).toBe(0);
    await cli.run(["worker", "--once"]);
    expect(await next()).toEqual(["a", "(on resume)", "(on resume)", "-"]);
    // The edit is listed as made as the node: its write, whose edges the run followed.
    expect((await cli.run(["checkpoints", runId])).stdout).toMatch(/^2 +\S+ +1 +update +operator:\S+ +as a +\(on resume\)/m);
    // The JSON keeps the plan as recorded: empty until the run went on.
    expect((await cli.json<CheckpointRecord[]>(["checkpoints", runId])).map((c) => c.next)).toEqual([["a"], [], [], []]);
  });

  it("fork --workflow moves a run that failed on a bug onto the fixed version of its workflow", async () => {
    const actions = join(cli.dir, "fixable-actions.mjs");
    writeFileSync(actions, "export default { first: () => ({ log: ['a'] }), buggy: () => { throw new Error('bug'); }, fixed: () => ({ log: ['b'] }) };\n");
    const version = (action: string, extra: Record<string, unknown> = {}) => ({
      name: "fixable",
      state: { log: { type: "array", items: { type: "string" }, reducer: "append", default: [] }, ...extra },
      start: "a",
      nodes: { a: { action: "first", next: "b" }, b: { action, next: "END" } },
    });
    const v1 = join(cli.dir, "fixable-v1.json");
    const v2 = join(cli.dir, "fixable-v2.json");
    writeFileSync(v1, JSON.stringify(version("buggy")));
    writeFileSync(v2, JSON.stringify(version("fixed", { retried: { type: "boolean", default: true } })));
    const runId = (await cli.run(["start", v1])).stdout.trim();
    await cli.run(["worker", "--once", "--actions", actions]);
    const forked = await cli.run(["fork", runId, "1", "--workflow", v2, "--reason", "bug fixed"]);
    expect(forked.code).toBe(0);
    expect(forked.stderr).toMatch(/^forked from checkpoint \S+:1 as run \S+ on version [0-9a-f]{12}$/m);
    const forkId = forked.stdout.trim();
    await cli.run(["worker", "--once", "--actions", actions]);
    expect(await cli.json(["state", forkId])).toEqual({ log: ["a", "b"], retried: true });
    const other = join(cli.dir, "other.json");
    writeFileSync(other, JSON.stringify({ ...version("fixed"), name: "other" }));
    const refused = await cli.run(["fork", runId, "1", "--workflow", other]);
    expect([refused.code, refused.stderr]).toEqual([2, `pitwall fork: run ${runId} is a run of workflow fixable; a fork may move it to another version of that workflow, not to other\n`]);
  });
});
