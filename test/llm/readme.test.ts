import { readFileSync } from "node:fs";
import { resolve } from "node:path";
import { describe, expect, it } from "vitest";
import { ScriptedProvider, checkWorkflowText, loadActionModules, type ModelScript } from "../../engine/index.js";

const readme = readFileSync(resolve("README.md"), "utf8");
const FIXTURE = resolve("fixtures/support-triage");

function block(language: string, after: string): string {
  const start = readme.indexOf(after);
  expect(start, `README has "${after}"`).toBeGreaterThan(0);
  const open = readme.indexOf("```" + language, start);
  const body = readme.indexOf("\n", open) + 1;
  return readme.slice(body, readme.indexOf("```", body));
}

describe("the README's LLM nodes section", () => {
  it("shows node kinds that are valid in the support-triage workflow", async () => {
    const nodes = JSON.parse(block("json", "**The node kinds**")) as Record<string, unknown>;
    const fixture = JSON.parse(readFileSync(`${FIXTURE}/workflow.json`, "utf8")) as { nodes: Record<string, unknown> };
    const doc = { ...fixture, nodes: { ...fixture.nodes, ...nodes } };
    const actions = await loadActionModules([`${FIXTURE}/actions.ts`]);
    expect(checkWorkflowText(JSON.stringify(doc), { actions }).problems).toEqual([]);
  });

  it("shows a valid script for the scripted provider", () => {
    const script = JSON.parse(block("json", "**The scripted provider is not a model.**")) as ModelScript;
    expect(() => new ScriptedProvider("README.md", script)).not.toThrow();
  });
});
