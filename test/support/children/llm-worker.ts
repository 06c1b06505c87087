// A worker process for the agent crash test:
//   node llm-worker.js <store file> <ledger file> <lease ms> <answer delay ms> <fixture folder>
// It runs fixtures/support-triage with its scripted model; every tool run appends a JSON line
// { tool, key, pid } to the ledger, so the test can count side effects across processes.
// It prints {"ready":id} once it works.
import { appendFileSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { ScriptedProvider, Worker, actionRegistry, createEngine, extendRegistry, openStore, type ModelScript, type Tool } from "../../../engine/index.js";
import actions, { tools } from "../../../fixtures/support-triage/actions.js";

const [file, ledger, lease, delay, fixture] = process.argv.slice(2);
if (!file || !ledger || !lease || !delay || !fixture) {
  console.error("usage: llm-worker.ts <store file> <ledger file> <lease ms> <answer delay ms> <fixture folder>");
  process.exit(2);
}

const scriptFile = join(fixture, "script.json");
const script = JSON.parse(readFileSync(scriptFile, "utf8")) as ModelScript;
const counted: Record<string, Tool> = {};
for (const [name, tool] of Object.entries(tools) as [string, Tool][]) {
  counted[name] = {
    ...tool,
    run: async (args, ctx) => {
      const result: unknown = await tool.run(args, ctx);
      appendFileSync(ledger, `${JSON.stringify({ tool: name, key: ctx.idempotencyKey, pid: process.pid })}\n`);
      return result;
    },
  };
}
const registry = extendRegistry(actionRegistry(actions), { tools: counted, model: new ScriptedProvider(scriptFile, { ...script, delayMs: Number(delay) }) });

const store = await openStore(`sqlite:${file}`);
const id = `llm-child-${process.pid}`;
const engine = createEngine({ store, actions: registry, worker: false });
const worker = new Worker(store, engine.registry, { id, leaseMs: Number(lease), pollMs: 50 });
worker.start();
console.log(JSON.stringify({ ready: id }));
