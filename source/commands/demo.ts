import { Worker, WorkflowRegistry, createEngine } from "../../engine/index.js";
import { defineCommand } from "../cli/command.js";
import { FIXTURE_NAMES, OPENING, fixturePaths, loadFixtures, nextDemoRun, useRecordedModelUnlessConfigured, type DemoRun } from "../cli/demo-runs.js";
import { UsageError, signalExit } from "../cli/errors.js";
import { packageRoot } from "../cli/typescript.js";
import { requireTerminal } from "./console.js";

/** Past this many unfinished runs the demo stops adding more, so an unattended demo stays small. */
const MAX_ACTIVE = 20;

export const demo = defineCommand({
  name: "demo",
  usage: "demo [--every SECONDS] [--store URL]",
  summary: "a worker, the example workflows and the console, in one process, offline",
  details: `Creates (or reuses) ./pitwall.db, starts a worker with the example workflows' actions,
starts a mix of runs (some wait for approval, one fails and is retried, one is long), keeps
starting new ones every few seconds (--every, default 8), and opens the console on the store.
q quits the console and stops the worker cleanly. PITWALL_LATENCY_SCALE (default 8 here)
stretches the simulated model latency.`,
  flags: { every: { type: "number" } },
  args: { min: 0, max: 0 },
  createsStore: true,
  inProcess: true,
  stopsOnSignal: true,
  async run({ flags, global, store, actions }) {
    if (flags.every !== undefined && !(flags.every >= 1)) throw new UsageError("--every must be at least 1 (seconds between new runs)");
    requireTerminal();
    process.env.PITWALL_LATENCY_SCALE ??= "8";
    const root = packageRoot();
    useRecordedModelUnlessConfigured(root);
    const registry = (await actions(FIXTURE_NAMES.map((name) => fixturePaths(root, name).actions)))!;
    const workflows = loadFixtures(root, registry);
    const s = await store();
    const engine = createEngine({ store: s, worker: false, actions: registry, actor: "operator:demo", secretKeys: global.secretKeys });
    const worker = new Worker(s, new WorkflowRegistry(s, registry, [...workflows.values()]), { concurrency: 8, secretKeys: global.secretKeys });
    const begin = async (run: DemoRun) => {
      await engine.start(workflows.get(run.fixture)!, run.input);
      worker.nudge();
    };

    const { runs: active } = await s.listRuns({ status: ["queued", "running", "paused"], limit: MAX_ACTIVE });
    worker.start();
    if (active.length < OPENING.length) for (const run of OPENING) await begin(run);
    const everyMs = (flags.every ?? 8) * 1000;
    const timer = setInterval(() => {
      void (async () => {
        const { runs } = await s.listRuns({ status: ["queued", "running", "paused"], limit: MAX_ACTIVE });
        if (runs.length < MAX_ACTIVE) await begin(nextDemoRun());
      })().catch(() => undefined);
    }, everyMs);

    try {
      const { runConsole } = await import("../console/index.js");
      return signalExit(await runConsole({ store: s, actor: global.actor, readOnly: false, storeLabel: `${s.description} · demo`, secretKeys: global.secretKeys }));
    } finally {
      clearInterval(timer);
      await worker.stop();
    }
  },
});
