import { execFileSync } from "node:child_process";
import { mkdirSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { describe, expect, it } from "vitest";
import { actionRegistry, checkWorkflowText } from "../../engine/index.js";

const readme = readFileSync(resolve("README.md"), "utf8");

function codeBlock(language: string, after: string): string {
  const start = readme.indexOf(after);
  const open = readme.indexOf("```" + language, start);
  const body = readme.indexOf("\n", open) + 1;
  return readme.slice(body, readme.indexOf("```", body));
}

describe("the README", () => {
  it("has a TypeScript quick start that runs as printed", () => {
    const code = codeBlock("ts", "## Quick start");
    // Inside the package, so that `import ... from "pitwall"` resolves through its exports as it
    // does for a user; to the sources under test (the "pitwall-source" condition), not a build.
    mkdirSync(resolve(".tmp"), { recursive: true });
    const dir = mkdtempSync(join(resolve(".tmp"), "readme-"));
    const file = join(dir, "quickstart.ts");
    writeFileSync(file, code);
    const out = execFileSync(process.execPath, ["--conditions=pitwall-source", "--import", "tsx", file], { encoding: "utf8", cwd: resolve("."), timeout: 30_000 });
    expect(out).toMatch(/^succeeded \{/);
    expect(out).toContain("tasks: [ 'draft', 'step 1', 'step 2' ]");
  });

  it("shows the same workflow as valid JSON", () => {
    const json = codeBlock("json", "The same workflow as data");
    const noop = () => ({});
    const { problems, definition } = checkWorkflowText(json, { actions: actionRegistry({ tasks: { init: noop, work: noop, check: noop } }) });
    expect(problems).toEqual([]);
    expect(definition?.name).toBe("task-queue");
  });
});
