import { join } from "node:path";
import { loadWorkflowFile, type ActionRegistry, type CompiledWorkflow } from "../../engine/index.js";

export const FIXTURE_NAMES = ["travel-planner", "task-queue", "sensitive-operation", "research-fanout", "long-compute", "support-triage"] as const;
export type FixtureName = (typeof FIXTURE_NAMES)[number];

export interface DemoRun {
  fixture: FixtureName;
  input: Record<string, unknown>;
}

/**
 * The runs the demo opens with: two trips and a risky operation that wait for approval, a
 * research fan-out paused mid-way, a queue that runs through, one whose first task keeps failing
 * until its retries run out, a long computation (about a minute), and a support ticket handled
 * by a model whose agent asks before it refunds.
 */
export const OPENING: readonly DemoRun[] = [
  { fixture: "travel-planner", input: { destination: "Lisbon", nights: 4 } },
  { fixture: "task-queue", input: {} },
  { fixture: "long-compute", input: { limit: 20_000_000_000 } },
  { fixture: "sensitive-operation", input: {} },
  { fixture: "task-queue", input: { objective: "Summarize last quarter's support tickets", failures: 3 } },
  { fixture: "research-fanout", input: {} },
  { fixture: "travel-planner", input: { destination: "Kyoto", nights: 7, budget: 4000 } },
  { fixture: "support-triage", input: {} },
];

const DESTINATIONS = ["Porto", "Oslo", "Marrakesh", "Montréal", "Hanoi", "Valparaíso", "Tbilisi"];
const OBJECTIVES = ["Compare three vector databases", "Draft release notes for v2.3", "Triage this week's bug reports", "Plan a team offsite"];
const QUESTIONS = ["Should we open an office in Lyon?", "Is a usage-based price right for us?", "Which CRM should sales move to?"];

function pick<T>(items: readonly T[]): T {
  return items[Math.floor(Math.random() * items.length)]!;
}

/** A new run every few seconds, mostly ones that finish on their own. */
export function nextDemoRun(): DemoRun {
  const roll = Math.random();
  if (roll < 0.35) return { fixture: "task-queue", input: { objective: pick(OBJECTIVES), failures: Math.random() < 0.3 ? 1 : 0 } };
  if (roll < 0.55) return { fixture: "travel-planner", input: { destination: pick(DESTINATIONS), nights: 2 + Math.floor(Math.random() * 8) } };
  if (roll < 0.7) return { fixture: "research-fanout", input: { question: pick(QUESTIONS) } };
  if (roll < 0.8) return { fixture: "long-compute", input: { limit: 1_000_000_000 + Math.floor(Math.random() * 4) * 1_000_000_000 } };
  if (roll < 0.9) return { fixture: "support-triage", input: {} };
  return { fixture: "sensitive-operation", input: {} };
}

/**
 * Offline, support-triage's model is its recorded script (not a model: it replays answers); with
 * PITWALL_LLM_BASE_URL or PITWALL_LLM_API_KEY set, the demo talks to that endpoint instead.
 */
export function useRecordedModelUnlessConfigured(root: string, env: NodeJS.ProcessEnv = process.env): void {
  if (env.PITWALL_LLM_BASE_URL || env.PITWALL_LLM_API_KEY || env.PITWALL_LLM_SCRIPT) return;
  env.PITWALL_LLM_SCRIPT = join(root, "fixtures", "support-triage", "script.json");
}

export function fixturePaths(root: string, name: FixtureName) {
  return { workflow: join(root, "fixtures", name, "workflow.json"), actions: join(root, "fixtures", name, "actions.ts") };
}

export function loadFixtures(root: string, actions: ActionRegistry): Map<FixtureName, CompiledWorkflow> {
  return new Map(FIXTURE_NAMES.map((name) => [name, loadWorkflowFile(fixturePaths(root, name).workflow, actions)]));
}
