import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { cliHarness } from "../support/cli.js";

const WORKFLOW = {
  name: "count",
  state: { n: { type: "integer", default: 0 } },
  start: "add",
  nodes: { add: { action: "count.add", next: "END" } },
};

describe("actions modules written in TypeScript, in a project that is not an ES package", () => {
  const cli = cliHarness();

  it("loads a .ts module with type annotations and a relative import, with no package.json around it", async () => {
    const dir = join(cli.dir, "plain-project");
    mkdirSync(dir);
    writeFileSync(join(dir, "workflow.json"), JSON.stringify(WORKFLOW));
    writeFileSync(join(dir, "step.ts"), "export const step: number = 2;\n");
    writeFileSync(
      join(dir, "actions.ts"),
      'import { step } from "./step.js";\nconst add = (s: { n: number }) => ({ n: s.n + step });\nexport default { count: { add } };\n',
    );
    const validated = await cli.run(["validate", join(dir, "workflow.json"), "--actions", join(dir, "actions.ts")]);
    expect([validated.code, validated.stdout]).toEqual([0, expect.stringContaining("valid workflow count")]);

    const { runId } = await cli.json<{ runId: string }>(["start", join(dir, "workflow.json")]);
    const worker = await cli.run(["worker", "--once", "--actions", join(dir, "actions.ts")]);
    expect(worker.stdout).toMatch(new RegExp(`run ${runId} succeeded: after 1 step\\n`));
    expect(await cli.json(["state", runId])).toEqual({ n: 2 });
  });
});
