import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { createEngine, openStore, workflow } from "../../engine/index.js";
import { cliHarness } from "../support/cli.js";

const loop = workflow("short-loop", { state: z.object({ n: z.number().default(0) }) })
  .node("work", (s) => ({ n: s.n + 1 }), { route: (s) => (s.n >= 40 ? "done" : "again"), routes: { again: "work", done: "END" } })
  .compile();

/** Where each line's time starts: the same column on every line when the numbers before it are padded alike. */
function timeColumns(text: string): number[] {
  return text.trimEnd().split("\n").map((l) => l.search(/\d\d:\d\d:\d\d\.\d{3}/));
}

describe("pitwall events: columns that stay put", () => {
  const cli = cliHarness();

  it("pads #SEQ to the widest of the listing, and a follower to a fixed minimum, so that nothing shifts when it gains a digit", async () => {
    const store = await openStore(`sqlite:${join(cli.dir, "pitwall.db")}`, { create: true });
    const engine = createEngine({ store, workflows: [loop] });
    let runId: string;
    try {
      const run = await engine.start(loop);
      runId = run.id;
      await run.wait();
    } finally {
      await engine.close();
      await store.close();
    }
    const all = (await cli.run(["events"])).stdout;
    const lines = all.trim().split("\n");
    const last = Number(/^#(\d+)/.exec(lines.at(-1)!)![1]);
    expect(last).toBeGreaterThan(100);
    expect(lines[0]).toMatch(/^#1 {4}\d\d:/);
    expect(new Set(timeColumns(all))).toEqual(new Set([`#${last}  `.length]));

    const ofRun = (await cli.run(["events", runId])).stdout;
    expect(ofRun.split("\n")[0]).toMatch(/^ {3}1 {2}#1 {4}\d\d:/);
    expect(new Set(timeColumns(ofRun))).toEqual(new Set([`1234  #${last}  `.length]));

    const follow = cli.spawn(["events", "--follow", "--after", "0"]);
    await follow.waitForLine((l) => l.startsWith(`#${last} `));
    follow.child.kill("SIGINT");
    expect((await follow.exited).code).toBe(0);
    expect(follow.stdout.split("\n")[0]).toMatch(/^#1 {7}\d\d:/);
    expect(new Set(timeColumns(follow.stdout))).toEqual(new Set(["#123456  ".length]));
  });
});
