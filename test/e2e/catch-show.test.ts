import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { cliHarness } from "../support/cli.js";

describe("a caught failure, as the command line shows it", () => {
  const cli = cliHarness();

  it("show lists the task as caught, events say where the failure went, and the run ends by its catch", async () => {
    const actions = join(cli.dir, "actions.mjs");
    writeFileSync(actions, `export default { charge: () => { throw Object.assign(new Error("card declined"), { code: "DECLINED" }); }, refund: () => ({ log: ["refunded"] }) };\n`);
    const file = join(cli.dir, "order.json");
    writeFileSync(
      file,
      JSON.stringify({
        name: "order",
        state: { log: { type: "array", items: { type: "string" }, default: [], reducer: "append" }, error: { type: ["object", "null"], default: null } },
        start: "charge",
        nodes: { charge: { action: "charge", next: "END", catch: { next: "refund", on: ["DECLINED"], output: "error" } }, refund: { action: "refund", next: "END" } },
      }),
    );
    const ran = await cli.run(["run", file, "--actions", actions, "--json"]);
    expect(ran.code, ran.stderr).toBe(0);
    const result = JSON.parse(ran.stdout) as { runId: string; status: string; state: { log: string[]; error: { code: string } } };
    expect([result.status, result.state.log, result.state.error.code]).toEqual(["succeeded", ["refunded"], "DECLINED"]);
    const show = await cli.run(["show", result.runId]);
    expect(show.stdout).toMatch(/charge .*failed .*caught: card declined/);
    const events = await cli.run(["events", result.runId]);
    expect(events.stdout).toMatch(/task\.failed .*charge +attempt 1: card declined \(caught → refund\)/);
  });
});
