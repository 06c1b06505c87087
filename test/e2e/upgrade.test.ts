import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { z } from "zod";
import { createEngine, openStore, workflow, type EventRecord, type InterruptRecord, type RunRecord } from "../../engine/index.js";
import { cliHarness } from "../support/cli.js";
import { RedisServer } from "../support/redis-server.js";

/** v1 asks for approval, then ships with a bug; v2 ships, to a channel of its own (a new key with a default). */
const ACTIONS = `export default { rel: {
  shipBuggy: () => { throw new Error("bug in ship"); },
  ship: (s) => ({ log: ["shipped to " + s.channel] }),
} };
`;

function release(ship: string, extra: { state?: Record<string, unknown>; review?: string; name?: string } = {}) {
  return JSON.stringify({
    name: extra.name ?? "release",
    state: { log: { type: "array", items: { type: "string" }, reducer: "append", default: [] }, ...extra.state },
    start: extra.review ?? "review",
    nodes: {
      [extra.review ?? "review"]: { kind: "approval", question: "Ship it?", routes: { approve: "ship", reject: "END" } },
      ship: { action: ship, next: "END", retry: { maxAttempts: 1 } },
    },
  });
}

describe("pitwall upgrade: a run moved in place onto a fixed version", () => {
  const cli = cliHarness();
  const redis = new RedisServer();
  beforeAll(async () => {
    await redis.start();
    const files: Record<string, string> = {
      "rel.mjs": ACTIONS,
      "v1.json": release("rel.shipBuggy"),
      "v2.json": release("rel.ship", { state: { channel: { type: "string", default: "stable" } } }),
      "renamed.json": release("rel.ship", { review: "check" }),
      "strict.json": release("rel.ship", { state: { ticket: { type: "string" } } }),
      "other.json": release("rel.ship", { name: "another" }),
      "broken.json": '{ "name": "release", ',
    };
    for (const [name, text] of Object.entries(files)) writeFileSync(join(cli.dir, name), text);
  });
  afterAll(() => redis.dispose());

  async function upgradeFlow(store: string[]) {
    const run = (args: string[]) => cli.run([...args, ...store]);
    const json = <T>(args: string[]) => cli.json<T>([...args, ...store]);
    const started = await run(["start", "v1.json"]);
    expect(started.code, started.stderr).toBe(0);
    const runId = started.stdout.trim();
    await run(["worker", "--once", "--actions", "rel.mjs"]);
    const before = await json<RunRecord & { upgrades: unknown[] }>(["show", runId]);
    expect(before).toMatchObject({ status: "paused", reason: "interrupt", upgrades: [] });
    expect((await run(["show", runId])).stdout).not.toMatch(/^upgraded/m);

    // Every bad input: one line naming what is wrong, a non-zero exit, nothing written.
    const refusals: [string[], number, string | RegExp][] = [
      [["upgrade", "run-none", "--workflow", "v2.json"], 2, "pitwall upgrade: run run-none not found\n"],
      [["upgrade", runId], 2, "pitwall upgrade: upgrade needs --workflow FILE: the version to move the run to\n"],
      [["upgrade", runId, "--workflow", "other.json"], 2, `pitwall upgrade: run ${runId} is a run of workflow release; an upgrade moves it to another version of that workflow, not to another\n`],
      [["upgrade", runId, "--workflow", "renamed.json"], 2, new RegExp(`^pitwall upgrade: version \\w{12} of workflow release has no node "review", which run ${runId} runs next from checkpoint ${before.headN}: keep the node in the new version, or fork run ${runId} from another checkpoint \\(pitwall fork --workflow\\)\n$`)],
      [["upgrade", runId, "--workflow", "strict.json"], 2, new RegExp(`^pitwall upgrade: the state of checkpoint ${before.headN} under version \\w{12} is invalid at \\$\\.ticket: .*; a patch given with the upgrade is checked against the new version, so it can reshape the state to fit\n$`)],
      [["upgrade", runId, "--workflow", "broken.json"], 2, /^pitwall upgrade: broken\.json is invalid: /],
      [["upgrade", runId, "--workflow", "missing.json"], 2, /^pitwall upgrade: cannot read workflow missing\.json: /],
    ];
    // Each is refused before it writes anything: they run at once.
    const results = await Promise.all(refusals.map(([args]) => run(args)));
    for (const [i, [args, code, stderr]] of refusals.entries()) {
      const r = results[i]!;
      expect([r.code, r.stdout], args.join(" ")).toEqual([code, ""]);
      if (typeof stderr === "string") expect(r.stderr).toBe(stderr);
      else expect(r.stderr).toMatch(stderr);
      expect(r.stderr.trim().split("\n")).toHaveLength(1);
    }
    expect(await json<RunRecord>(["show", runId])).toMatchObject({ version: before.version, headN: before.headN, eventCount: before.eventCount });

    const upgraded = await json<{ commandId: string; effect: string; from: string; to: string; checkpointId: string }>(["upgrade", runId, "--workflow", "v2.json", "--reason", "ship fixed", "--as", "ann"]);
    expect(upgraded).toMatchObject({ commandId: expect.stringMatching(/^cmd-/), unchanged: false, from: before.version, checkpointId: `${runId}:${before.headN + 1}` });

    // Again: the run is on that version already. Nothing is written — no command, no event, its updatedAt as it was — and it says so.
    const written = async () => ({ run: await json<RunRecord>(["show", runId]), events: (await run(["events", runId, "--json"])).stdout });
    const moved = await written();
    const again = await run(["upgrade", runId, "--workflow", "v2.json", "--reason", "again"]);
    expect([again.code, again.stdout, again.stderr]).toEqual([0, `run ${runId} is on version ${upgraded.to.slice(0, 12)} already; nothing to do\n`, ""]);
    expect(await json(["upgrade", runId, "--workflow", "v2.json"])).toEqual({ effect: `run ${runId} is on version ${upgraded.to.slice(0, 12)} already; nothing to do`, unchanged: true, from: upgraded.to, to: upgraded.to });
    expect(await written()).toEqual(moved);
    // runs --version selects runs by the start of the version they are on now.
    const listed = async (prefix: string) => (await json<RunRecord[]>(["runs", "--version", prefix])).map((r) => r.id);
    expect(await listed(upgraded.to.slice(0, 6))).toContain(runId);
    expect(await listed(before.version.slice(0, 6))).not.toContain(runId);
    const patched = await run(["upgrade", runId, "--workflow", "v2.json", "--set", "channel=beta"]);
    expect([patched.code, patched.stderr]).toEqual([2, `pitwall upgrade: run ${runId} is on version ${upgraded.to.slice(0, 12)} already: edit its state with pitwall edit\n`]);
    expect(await written()).toEqual(moved);
    expect(upgraded.effect).toBe(`run ${runId} moved from version ${before.version.slice(0, 12)} to version ${upgraded.to.slice(0, 12)}; its state fitted to the new schema (checkpoint ${upgraded.checkpointId})`);
    const shown = await run(["show", runId]);
    expect(shown.stdout).toContain(`release (version ${upgraded.to.slice(0, 12)})`);
    // show lists the move: from, to, when, who, why, and the checkpoint that fitted the state.
    const short = (v: string) => v.slice(0, 12);
    expect(shown.stdout).toMatch(new RegExp(`^upgraded  ${short(before.version)} → ${short(upgraded.to)} at \\d\\d:\\d\\d:\\d\\d\\.\\d{3} \\(\\d+[smhd] ago\\) by operator:ann \\("ship fixed"\\); state fitted \\(checkpoint ${upgraded.checkpointId}\\)$`, "m"));
    expect((await json<{ upgrades: unknown[] }>(["show", runId])).upgrades).toEqual([
      { from: before.version, to: upgraded.to, at: expect.any(Number), actor: "operator:ann", reason: "ship fixed", checkpointId: upgraded.checkpointId },
    ]);
    const events = await run(["events", runId, "--type", "run.upgraded,state.edited"]);
    expect(events.stdout).toContain(`from version ${before.version.slice(0, 12)} to ${upgraded.to.slice(0, 12)}, state fitted (checkpoint ${upgraded.checkpointId}) (ship fixed)`);
    expect(events.stdout).toContain(`checkpoint ${upgraded.checkpointId}: + $.channel: "stable"`);
    // --json prints one event a line.
    const logged = (await run(["events", runId, "--type", "run.upgraded", "--json"])).stdout.trim().split("\n").map((line) => JSON.parse(line) as EventRecord);
    expect(logged.map((e) => [e.actor, e.payload])).toEqual([[expect.stringMatching(/^operator:/), { from: before.version, to: upgraded.to, reason: "ship fixed", checkpointId: upgraded.checkpointId }]]);

    // Approved, it goes on under the new version.
    const [ask] = await json<InterruptRecord[]>(["interrupts", "--run", runId]);
    expect((await run(["resolve", ask!.id, "--approve"])).code).toBe(0);
    await run(["worker", "--once", "--actions", "rel.mjs"]);
    const ended = await json<RunRecord>(["show", runId]);
    expect(ended).toMatchObject({ status: "succeeded", version: upgraded.to });
    expect(await json(["state", runId])).toEqual({ log: ["shipped to stable"], channel: "stable" });

    const refused = await run(["upgrade", runId, "--workflow", "v1.json"]);
    expect([refused.code, refused.stderr]).toEqual([3, `pitwall upgrade: run ${runId} has ended (succeeded) and stays on its version: fork it onto the new one from its last checkpoint (pitwall fork ${runId} ${ended.headN} --workflow FILE), or go on from it (pitwall start FILE --from ${runId})\n`]);
  }

  it("on SQLite: refused inputs write nothing; the upgraded run, approved, finishes with the fixed version's behaviour", async () => {
    await upgradeFlow([]);
  }, 90_000);

  it("on Redis: the same", async () => {
    await upgradeFlow(["--store", `${redis.url}/0?prefix=upgrade:`]);
  }, 90_000);

  it("batch upgrade: a dry run lists the runs it would move and those the version cannot take, with why; --yes moves each", async () => {
    const store = ["--store", `sqlite:${join(cli.dir, "batch.db")}`];
    const run = (args: string[]) => cli.run([...args, ...store]);
    const json = <T>(args: string[]) => cli.json<T>([...args, ...store]);
    const ids: string[] = [];
    for (let i = 0; i < 3; i++) ids.push((await run(["start", "v1.json", "--tag", "wave=1"])).stdout.trim());
    const other = (await run(["start", "other.json", "--tag", "wave=1"])).stdout.trim();
    await run(["worker", "--once", "--actions", "rel.mjs"]);
    const [paused, ended, breaking] = ids as [string, string, string];
    await run(["cancel", ended, "--reason", "not this one"]);
    await run(["break", breaking, "ship"]);
    const noShip = JSON.stringify({ name: "release", state: { log: { type: "array", items: { type: "string" }, reducer: "append", default: [] } }, start: "review", nodes: { review: { kind: "approval", question: "Ship it?", routes: { approve: "END", reject: "END" } } } });
    writeFileSync(join(cli.dir, "no-ship.json"), noShip);
    const v1 = (await json<RunRecord>(["show", paused])).version;

    const refused = await json<{ runs: { runId: string; status: string; why?: string }[] }>(["batch", "upgrade", "no-ship.json", "--tag", "wave=1"]);
    expect(new Map(refused.runs.map((r) => [r.runId, [r.status, r.why]]))).toEqual(
      new Map([
        [paused, ["would", undefined]],
        [breaking, ["skipped", expect.stringMatching(new RegExp(`has no node "ship", on which run ${breaking} has a breakpoint: clear it first`))]],
      ]),
    );
    const usage = await run(["batch", "upgrade", "v2.json", "--workflow", "another"]);
    expect([usage.code, usage.stderr]).toEqual([2, "pitwall batch: batch upgrade moves runs of workflow release (v2.json), and --workflow selects only another\n"]);
    expect((await run(["batch", "upgrade", "--tag", "wave=1"])).stderr).toBe("pitwall batch: batch upgrade needs the workflow file of the version: batch upgrade <workflow.json> ...\n");

    const plan = await run(["batch", "upgrade", "v2.json", "--tag", "wave=1"]);
    expect(plan.stdout.split("\n")[0]).toBe("would upgrade 2 runs:");
    const done = await json<{ dryRun: boolean; runs: { runId: string; status: string; effects?: string[] }[] }>(["batch", "upgrade", "v2.json", "--tag", "wave=1", "--reason", "ship fixed", "--yes"]);
    expect(done.dryRun).toBe(false);
    expect(done.runs.map((r) => r.runId).sort()).toEqual([paused, breaking].sort());
    for (const r of done.runs) expect(r.effects).toEqual([expect.stringMatching(new RegExp(`^run ${r.runId} moved from version \\w{12} to version \\w{12}; its state fitted`))]);
    for (const id of [ended, other]) expect(done.runs.some((r) => r.runId === id)).toBe(false);
    // The ended run stays on the version it ended on.
    expect((await json<RunRecord>(["show", ended])).version).toBe(v1);
    const again = await json<{ runs: { status: string; why?: string }[] }>(["batch", "upgrade", "v2.json", "--tag", "wave=1"]);
    expect(again.runs.map((r) => r.why)).toEqual([expect.stringMatching(/^it is on version \w{12} already$/), expect.stringMatching(/^it is on version \w{12} already$/)]);

    await run(["unbreak", breaking, "ship"]);
    expect((await run(["batch", "approve", "--tag", "wave=1", "--yes"])).code).toBe(0);
    await run(["worker", "--once", "--actions", "rel.mjs"]);
    for (const id of [paused, breaking]) expect(await json(["state", id])).toEqual({ log: ["shipped to stable"], channel: "stable" });
  }, 90_000);

  it("--version selects runs by the start of their version: runs lists them, and batch upgrade --version OLD moves only the runs still on it", async () => {
    const store = ["--store", `sqlite:${join(cli.dir, "versions.db")}`];
    const run = (args: string[]) => cli.run([...args, ...store]);
    const json = <T>(args: string[]) => cli.json<T>([...args, ...store]);
    writeFileSync(join(cli.dir, "v1b.json"), release("rel.shipBuggy", { state: { note: { type: "string", default: "" } } }));
    const start = async (file: string) => (await run(["start", file])).stdout.trim();
    const [old1, old2, otherOld] = [await start("v1.json"), await start("v1.json"), await start("v1b.json")];
    await run(["worker", "--once", "--actions", "rel.mjs"]);
    expect((await run(["upgrade", old2, "--workflow", "v2.json"])).code).toBe(0);
    const versionOf = async (id: string) => (await json<RunRecord>(["show", id])).version;
    const [v1, v1b, v2] = [await versionOf(old1), await versionOf(otherOld), await versionOf(old2)];
    const ids = async (...flags: string[]) => (await json<RunRecord[]>(["runs", ...flags])).map((r) => r.id).sort();
    expect(await ids("--version", v1.slice(0, 4))).toEqual([old1]);
    expect(await ids("--version", v1.slice(0, 8).toUpperCase())).toEqual([old1]);
    expect(await ids("--version", `${v1.slice(0, 6)},${v1b.slice(0, 6)}`)).toEqual([old1, otherOld].sort());
    expect(await ids("--version", v1.slice(0, 6), "--version", v2.slice(0, 6))).toEqual([old1, old2].sort());
    expect(await ids("--version", v1, "--status", "succeeded")).toEqual([]);
    const table = (await run(["runs", "--version", v2.slice(0, 6)])).stdout;
    expect(table).toMatch(new RegExp(`^${old2} +release +${v2.slice(0, 8)} +paused`, "m"));

    const plan = await json<{ runs: { runId: string; status: string }[] }>(["batch", "upgrade", "v2.json", "--version", v1.slice(0, 6)]);
    expect(plan.runs).toEqual([{ runId: old1, status: "would" }]);
    const done = await run(["batch", "upgrade", "v2.json", "--version", v1.slice(0, 6), "--reason", "the rest of v1", "--yes"]);
    expect([done.code, done.stderr]).toEqual([0, "upgraded 1 run\n"]);
    expect([await versionOf(old1), await versionOf(old2), await versionOf(otherOld)]).toEqual([v2, v2, v1b]);
    expect(await ids("--version", v1.slice(0, 6))).toEqual([]);
    expect((await json<{ runs: unknown[] }>(["batch", "upgrade", "v2.json", "--version", v1.slice(0, 6), "--yes"])).runs).toEqual([]);
  }, 90_000);

  it("show lists a run's last 10 upgrades, and says how many came before them; --json has them all", async () => {
    const file = join(cli.dir, "many.db");
    const asking = (question: string) => workflow("flip", { state: z.object({}) }).approval("ask", { question, routes: { approve: "END", reject: "END" } }).compile();
    const [a, b] = [asking("A?"), asking("B?")];
    const store = await openStore(`sqlite:${file}`, { create: true });
    const engine = createEngine({ store, workflows: [a, b], worker: false });
    let runId: string;
    try {
      const run = await engine.start(a);
      runId = run.id;
      // Queued, it moves without a worker.
      for (let i = 0; i < 12; i++) await engine.operator("ann").upgrade(run.id, { workflow: i % 2 === 0 ? b : a, reason: `move ${i + 1}` });
    } finally {
      await engine.close();
      await store.close();
    }
    const shown = (await cli.run(["show", runId, "--store", `sqlite:${file}`])).stdout.split("\n").filter((line) => line.startsWith("upgraded"));
    expect(shown[0]).toBe(`upgraded  2 times before these (pitwall events ${runId} --type run.upgraded)`);
    expect(shown.slice(1).map((line) => /\("(move \d+)"\)$/.exec(line)?.[1])).toEqual(Array.from({ length: 10 }, (_, i) => `move ${i + 3}`));
    const { upgrades } = await cli.json<{ upgrades: { from: string; to: string; reason: string }[] }>(["show", runId, "--store", `sqlite:${file}`]);
    expect(upgrades.map((u) => [u.from, u.to, u.reason])).toEqual(Array.from({ length: 12 }, (_, i) => (i % 2 === 0 ? [a.version, b.version, `move ${i + 1}`] : [b.version, a.version, `move ${i + 1}`])));
  });
});
