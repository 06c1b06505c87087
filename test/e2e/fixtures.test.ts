import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import type { InterruptRecord, RunRecord } from "../../engine/index.js";
import { actionsOf, cliHarness, workflowOf } from "../support/cli.js";

const NAMES = ["travel-planner", "task-queue", "sensitive-operation", "research-fanout", "long-compute"] as const;

describe("every example workflow runs to its end through the command line", () => {
  const cli = cliHarness();

  it("with the store and actions modules from pitwall.config.json, resolving approvals and retrying", async () => {
    writeFileSync(join(cli.dir, "pitwall.config.json"), JSON.stringify({ store: "sqlite:./fixtures.db", actions: NAMES.map(actionsOf) }));
    const noEnv = { PITWALL_STORE: "" };
    const run = (args: string[]) => cli.run(args, noEnv);
    const json = <T>(args: string[]) => cli.json<T>(args, noEnv);

    const ids = Object.fromEntries(
      await Promise.all(NAMES.map(async (name) => [name, (await json<{ runId: string }>(["start", workflowOf(name)])).runId] as const)),
    ) as Record<(typeof NAMES)[number], string>;
    const flaky = (await json<{ runId: string }>(["start", workflowOf("task-queue"), "--input", '{"failures": 3}'])).runId;
    expect((await run(["worker", "--once"])).code).toBe(0);

    const statuses = async () => {
      const runs = await json<RunRecord[]>(["runs"]);
      return Object.fromEntries(runs.map((r) => [r.id, r.status === "paused" ? `paused (${r.reason})` : r.status]));
    };
    expect(await statuses()).toMatchObject({
      [ids["task-queue"]]: "succeeded",
      [ids["long-compute"]]: "succeeded",
      [flaky]: "paused (retries-exhausted)",
    });
    // Why a paused run waits is on its page whole: the failed task's error.
    expect((await run(["show", flaky])).stdout).toMatch(/^failed +work: .+$/m);
    const pending = await json<InterruptRecord[]>(["interrupts"]);
    expect(pending.map((i) => [i.runId, i.node]).sort()).toEqual(
      [
        [ids["travel-planner"], "approve"],
        [ids["sensitive-operation"], "execute"],
        [ids["research-fanout"], "pricing"],
      ].sort(),
    );

    const answer = (runId: string, ...args: string[]) => run(["resolve", pending.find((i) => i.runId === runId)!.id, ...args]);
    const answers = await Promise.all([
      answer(ids["travel-planner"], "--approve"),
      answer(ids["sensitive-operation"], "--decision", "edit", "--set", "operation.limit=10"),
      answer(ids["research-fanout"], "--reject", "--reason", "no budget"),
      run(["retry", flaky, "work"]),
    ]);
    expect(answers.map((a) => a.code)).toEqual([0, 0, 0, 0]);
    // The decisions taken, with who took them and why.
    const decided = await json<InterruptRecord[]>(["interrupts", "--status", "resolved"]);
    expect(decided.map((i) => [i.node, i.resolution?.decision, i.resolution?.reason ?? null]).sort()).toEqual(
      [["approve", "approve", null], ["execute", "edit", null], ["pricing", "reject", "no budget"]].sort(),
    );
    expect((await run(["interrupts", "--status", "resolved"])).stdout).toMatch(/^int-\S+ +run-\S+ +pricing .* reject +operator:\S+ .* no budget /m);
    expect((await run(["interrupts", "--status", "done"])).stderr).toBe('pitwall interrupts: --status "done": use pending, resolved or all\n');
    expect((await run(["worker", "--once"])).code).toBe(0);

    expect(Object.values(await statuses())).toEqual(Array(6).fill("succeeded"));
    expect(await json(["state", ids["travel-planner"]])).toMatchObject({ booking: expect.stringMatching(/^confirmed /) });
    expect(await json(["state", ids["sensitive-operation"]])).toMatchObject({ result: "deleted 10 objects under s3://acme-backups/nightly/" });
    expect(await json(["state", ids["research-fanout"]])).toMatchObject({ findings: { pricing: expect.stringContaining("free sources only") } });
    expect(await json(["state", ids["long-compute"]])).toMatchObject({ stats: { primes: 1_270_607 } });
    expect(await json(["state", flaky])).toMatchObject({ done: true });
  });

  it("a broken config file is bad input, named with what is wrong", async () => {
    writeFileSync(join(cli.dir, "broken.json"), JSON.stringify({ store: "sqlite:./x.db", action: ["a.ts"] }));
    const r = await cli.run(["runs", "--config", "broken.json"]);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/^pitwall runs: config .*broken\.json: \$: unknown key action \(allowed: store, durability, actions, secretKeys\)\n$/);
    writeFileSync(join(cli.dir, "typo.json"), JSON.stringify({ store: "sqlite:./x.db", durability: "disk", actions: ["a.ts", ""] }));
    const wrong = await cli.run(["runs", "--config", "typo.json"]);
    expect([wrong.code, wrong.stderr]).toEqual([2, expect.stringMatching(/^pitwall runs: config .*typo\.json: \$\.durability: "disk" is not one of "process", "os"\n$/)]);
    const missing = await cli.run(["runs", "--config", "absent.json"]);
    expect([missing.code, missing.stderr]).toEqual([2, expect.stringMatching(/config .*absent\.json: cannot read it: no such file/)]);
  });
});
