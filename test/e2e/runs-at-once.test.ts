import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { openStore } from "../../engine/index.js";
import { cliHarness } from "../support/cli.js";
import { RedisServer } from "../support/redis-server.js";

describe("a run held back by its workflow's limits.runsAtOnce, as the CLI shows it", () => {
  const cli = cliHarness();
  const redis = new RedisServer();
  beforeAll(() => redis.start());
  afterAll(() => redis.dispose());

  it.each(["sqlite", "redis"])("validate and graph name the limit; runs and show say a queued run waits for a slot ($0 store)", async (kind) => {
    const store = kind === "sqlite" ? `sqlite:${join(cli.dir, "at-once.db")}` : `${redis.url}/0?prefix=at-once:`;
    const env = { PITWALL_STORE: store };
    const file = join(cli.dir, "order.json");
    writeFileSync(file, JSON.stringify({ name: "order", state: {}, start: "pack", limits: { runsAtOnce: 1 }, nodes: { pack: { kind: "wait", seconds: 600, next: "END" } } }));

    expect((await cli.run(["validate", file], env)).stdout).toMatch(/^\S+order\.json: valid workflow order \(version \w+, 1 node, at most 1 run at once\)\n$/);
    expect((await cli.run(["graph", file], env)).stdout).toContain("\n  at most 1 run at once (limits.runsAtOnce)\n");

    const first = await cli.json<{ runId: string }>(["start", file], env);
    const second = await cli.json<{ runId: string }>(["start", file], env);
    // A worker of the store takes the first (as a worker would, through the store's claim).
    const opened = await openStore(store);
    try {
      expect((await opened.claimRun({ owner: "m1", leaseMs: 60_000, runsAtOnce: { order: 1 } }))?.run.id).toBe(first.runId);
      expect(await opened.claimRun({ owner: "m1", leaseMs: 60_000, runsAtOnce: { order: 1 } })).toBeUndefined();
    } finally {
      await opened.close();
    }

    const listed = await cli.run(["runs"], env);
    expect(listed.stdout).toMatch(new RegExp(`^${second.runId} +order +\\w+ +queued \\(limit: 1 of order running\\) `, "m"));
    expect(listed.stdout).toMatch(new RegExp(`^${first.runId} +order +\\w+ +running `, "m"));
    const shown = await cli.run(["show", second.runId], env);
    expect(shown.stdout).toMatch(
      /^waiting {3}for a slot \(limit: 1 of order running\): workflow order lets 1 run of any of its versions run at once \(limits\.runsAtOnce of its newest version\), and 1 is running; a worker takes this one when one of them ends or waits \(a timer, a person, a child run\)$/m,
    );
    expect((await cli.json<{ unclaimed: string }>(["show", second.runId], env)).unclaimed).toBe("limit: 1 of order running");
    // The running one is not held back by anything.
    expect((await cli.run(["show", first.runId], env)).stdout).not.toMatch(/^waiting/m);
    // A worker that ends when nothing is left to run says what it left, and why.
    const once = await cli.run(["worker", "--once"], env);
    expect(once.code).toBe(0);
    expect(once.stderr).toContain("1 queued run of order held back by its limits.runsAtOnce (1; 1 running): a worker takes it as places free");
    // The first run's worker stops renewing its lease: its run keeps the place, and show says so.
    const lapsing = await openStore(store);
    try {
      const held = await lapsing.getRun(first.runId);
      await lapsing.renewLease(first.runId, "m1", held!.fence, 1);
    } finally {
      await lapsing.close();
    }
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect((await cli.run(["runs"], env)).stdout).toMatch(new RegExp(`^${second.runId} +order +\\w+ +queued \\(limit: 1 of order running, 1 with a lease run out\\) `, "m"));
    expect((await cli.run(["show", second.runId], env)).stdout).toMatch(
      new RegExp(`^waiting {3}for a slot \\(limit: 1 of order running, 1 with a lease run out\\): .*, and 1 is running: run ${first.runId}, whose lease ran out, holds its place until a live worker that can run it takes it over, or an operator cancels it \\(pitwall cancel ${first.runId}\\)$`, "m"),
    );
  }, 60_000);

  it("pitwall run FILE holds the runs of an older version to the newest stored version's limit", async () => {
    const store = `sqlite:${join(cli.dir, "run-older.db")}`;
    const env = { PITWALL_STORE: store };
    const order = (limits: object) => ({ name: "order", state: {}, start: "pack", ...limits, nodes: { pack: { kind: "wait", seconds: 1, next: "END" } } });
    const older = join(cli.dir, "older.json");
    const limited = join(cli.dir, "limited.json");
    writeFileSync(older, JSON.stringify(order({})));
    writeFileSync(limited, JSON.stringify(order({ limits: { runsAtOnce: 1 } })));
    // The older version stored first, then the limited one, whose run holds the one place.
    await cli.json(["start", older], env);
    const holder = await cli.json<{ runId: string }>(["start", limited], env);
    const opened = await openStore(store);
    try {
      expect((await opened.claimRun({ owner: "m1", leaseMs: 60_000, runId: holder.runId, runsAtOnce: { order: 1 } }))?.run.id).toBe(holder.runId);
      const running = cli.spawn(["run", older], env);
      // Its own run, and the older run queued before, would end within a second or two if claimed.
      await new Promise((resolve) => setTimeout(resolve, 4_000));
      const runs = (await opened.listRuns({})).runs;
      expect(runs).toHaveLength(3);
      expect(runs.filter((r) => r.id !== holder.runId).map((r) => r.status)).toEqual(["queued", "queued"]);
      running.child.kill("SIGKILL");
    } finally {
      await opened.close();
    }
  }, 60_000);
});
