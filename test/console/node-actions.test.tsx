import { chmodSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, afterEach, describe, expect, it } from "vitest";
import { readState, type RunRecord } from "../../engine/index.js";
import { fixture, settle, type Fixture } from "./fixtures.js";
import { closeAll, openConsole, type ConsoleHarness } from "./harness.js";

let fx: Fixture | undefined;
let ui: ConsoleHarness | undefined;
afterEach(async () => ([ui, fx] = await closeAll(ui, fx)));

const scripts = mkdtempSync(join(tmpdir(), "pitwall-node-editors-"));
afterAll(() => rmSync(scripts, { recursive: true, force: true }));

/** An $EDITOR that edits the file it is given with sed. */
function sedEditor(name: string, expression: string): string {
  const file = join(scripts, name);
  writeFileSync(file, `#!/bin/sh\nsed -i '${expression}' "$1"\n`);
  chmodSync(file, 0o755);
  return file;
}

async function until(f: Fixture, runId: string, test: (run: RunRecord) => boolean): Promise<RunRecord> {
  const deadline = Date.now() + 5_000;
  for (;;) {
    const run = (await f.store.getRun(runId))!;
    if (test(run)) return run;
    if (Date.now() > deadline) throw new Error(`run ${runId} is ${run.status}/${run.reason}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

describe("node actions", () => {
  it("kills a running task only after a confirmation that defaults to Cancel, then retries it and cancels the run", async () => {
    fx = fixture();
    const handle = await fx.engine.start("slow");
    await until(fx, handle.id, (r) => r.status === "running" && r.current.includes("crunch"));
    ui = await openConsole({ store: fx.store, initial: { kind: "run", runId: handle.id } });
    await ui.waitFor("▶● crunch 42%"); // the progress it reports, live
    await ui.waitFor("ctrl-k kill");

    await ui.press("ctrl-k");
    let frame = await ui.waitFor("Kill crunch");
    expect(frame).toMatch(/\[Cancel\]\s+Kill task /);
    await ui.press("enter");
    await ui.waitFor("kill canceled; nothing sent");
    expect((await fx.store.getRun(handle.id))!.status).toBe("running");

    await ui.press("ctrl-k");
    await ui.waitFor("Kill crunch");
    await ui.type("stuck");
    await ui.press("tab");
    await ui.waitFor("[Kill task]");
    await ui.press("enter");
    await ui.waitFor("killing crunch");
    await until(fx, handle.id, (r) => r.status === "paused" && r.reason === "killed");
    await ui.waitFor("⊘ crunch");

    await ui.press("R");
    frame = await ui.waitFor("Retry crunch");
    expect(frame).toContain("Runs again in step 1: crunch");
    await ui.press("tab", "enter");
    await ui.waitFor("retrying; will run again: crunch");
    await until(fx, handle.id, (r) => r.status === "running");

    await ui.press("C");
    await ui.waitFor(`Cancel run ${handle.id}`);
    // The explanation is wider than the screen: broken between words, not cut.
    expect(ui.frame()).toContain("child runs canceled.\n▌   This cannot be undone.");
    await ui.press("tab", "enter");
    await ui.waitFor("a reason is required");
    await ui.type("not needed");
    await ui.press("enter");
    await ui.waitFor(`run ${handle.id} canceled`);
    expect((await until(fx, handle.id, (r) => r.status === "canceled")).status).toBe("canceled");
    await ui.waitFor("⊘ canceled");
    const commands = await fx.store.listCommands({ runId: handle.id });
    expect(commands.map((c) => [c.type, c.actor, c.reason])).toEqual([
      ["kill", "operator:tester", "stuck"],
      ["retry", "operator:tester", null],
      ["cancel", "operator:tester", "not needed"],
    ]);
  });

  it("sets a breakpoint on the selected node; the run pauses before it; b clears it", async () => {
    fx = fixture();
    const run = await settle(fx.engine, "travel-planner");
    ui = await openConsole({ store: fx.store, initial: { kind: "run", runId: run.id } });
    await ui.waitFor(" approve · step 4: waiting");
    await ui.press("j");
    await ui.waitFor(" book · has not run — action book");
    await ui.press("b");
    await ui.waitFor('breakpoint set before "book"');
    await ui.waitFor("○ book ◉");
    const [pending] = await fx.store.listInterrupts({ runId: run.id, status: "pending" });
    await fx.engine.operator("ann").resolve(pending!.id, { decision: "approve" });
    await until(fx, run.id, (r) => r.status === "paused" && r.reason === "breakpoint");
    await ui.waitFor("‖ paused");
    await ui.press("b");
    await ui.waitFor('breakpoint on "book" removed');
    expect((await fx.store.getRun(run.id))!.breakpoints).toEqual([]);
  });

  it("says so when an action key applies to nothing selected (kill on a node that is not running)", async () => {
    fx = fixture();
    const run = await settle(fx.engine, "task-queue");
    ui = await openConsole({ store: fx.store, initial: { kind: "run", runId: run.id, tab: 1 } });
    await ui.waitFor("1 Graph");
    await ui.press("ctrl-k");
    await ui.waitFor("ctrl-k (kill): nothing here it applies to");
  });

  it("forks a new run from the selected checkpoint and opens it", async () => {
    fx = fixture();
    const run = await settle(fx.engine, "task-queue");
    ui = await openConsole({ store: fx.store, initial: { kind: "run", runId: run.id, tab: 3 } });
    await ui.waitFor("checkpoints");
    await ui.press("g", "j", "j");
    await ui.press("F");
    await ui.waitFor(`Fork run ${run.id} from checkpoint 2`);
    await ui.press("tab", "enter");
    const frame = await ui.waitFor(`fork of ${run.id}:2`);
    const forked = (await fx.store.listRuns({})).runs.filter((r) => r.forkOf?.runId === run.id);
    expect(forked).toHaveLength(1);
    expect(frame).toContain(forked[0]!.id);
  });

  it("forks from a checkpoint with its state edited in $EDITOR (E): diff shown, the fork runs on from the edited state", async () => {
    fx = fixture();
    const run = await settle(fx.engine, "task-queue");
    ui = await openConsole({ store: fx.store, initial: { kind: "run", runId: run.id, tab: 3 }, editorCommand: sedEditor("draft.sh", 's/"draft"/"edited draft"/') });
    await ui.waitFor("checkpoints");
    await ui.press("g", "j", "j");
    await ui.press("E");
    const frame = await ui.waitFor("Apply this change?");
    expect(frame).toContain('~ $.tasks[0] "draft" → "edited draft"');
    await ui.press("tab", "enter");
    await ui.waitFor(`fork of ${run.id}:2`);
    const [forked] = (await fx.store.listRuns({})).runs.filter((r) => r.forkOf?.runId === run.id);
    const ended = await fx.engine.run(forked!.id).wait({ until: "end", timeoutMs: 5_000 });
    expect(ended.status).toBe("succeeded");
    expect((await readState(fx.store, forked!.id, ended.headN)).tasks).toEqual(["edited draft", "summary"]);
    expect((await readState(fx.store, run.id, run.headN)).tasks).toEqual(["draft", "summary"]); // the source is untouched
  });

  it("retries a failed node with the state edited in $EDITOR first (E)", async () => {
    fx = fixture();
    const run = await settle(fx.engine, "failing");
    expect(run.status).toBe("failed");
    ui = await openConsole({ store: fx.store, initial: { kind: "run", runId: run.id }, editorCommand: sedEditor("lang.sh", 's/"ja"/"fr"/') });
    await ui.waitFor("R retry");
    await ui.press("E");
    const frame = await ui.waitFor("Apply this change?");
    expect(frame).toContain('~ $.lang "ja" → "fr"');
    await ui.press("tab", "enter");
    await ui.waitFor("retrying with the edited state; will run again: call");
    const ended = await fx.engine.run(run.id).wait({ until: "end", timeoutMs: 5_000 });
    expect(ended.status).toBe("succeeded");
    expect((await readState(fx.store, run.id, ended.headN)).lang).toBe("fr (answered)");
  });

  it("acts on the attempt selected in the timeline", async () => {
    fx = fixture();
    const handle = await fx.engine.start("slow");
    await until(fx, handle.id, (r) => r.status === "running" && r.current.includes("crunch"));
    ui = await openConsole({ store: fx.store, initial: { kind: "run", runId: handle.id, tab: 4 } });
    await ui.waitFor("s1 crunch #1");
    await ui.press("ctrl-k");
    await ui.waitFor("Kill crunch");
    await ui.press("tab", "enter");
    await until(fx, handle.id, (r) => r.reason === "killed");
    await ui.waitFor(/s1 crunch #1 .*⊘/);
  });
});
