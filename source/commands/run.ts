import { once } from "node:events";
import {
  RunHandle,
  Worker,
  WorkflowRegistry,
  actionRegistry,
  checkStart,
  extendRegistry,
  formatProblemIn,
  startRun,
  type CompiledWorkflow,
  type RunRecord,
} from "../../engine/index.js";
import { defineCommand, isMemoryStore } from "../cli/command.js";
import { EXIT, UsageError } from "../cli/errors.js";
import { readJsonArgument } from "../cli/inputs.js";
import { modelOfEnvironment } from "../cli/model.js";
import { json } from "../cli/output.js";
import { compiledFile } from "../cli/workflow-file.js";
import { heldBy, settledText, settledValue } from "../cli/settled.js";
import { clean } from "../text/plain.js";

export const run = defineCommand({
  name: "run",
  usage: "run <workflow.json> [--input JSON|@file] [--actions MODULE ...]",
  summary: "run a workflow in this process to its end or first pause, and print its state",
  details: `Stores the workflow, starts a run of it and executes it here, with the actions modules given
(or those of the config file) and the model of PITWALL_LLM_* (as a worker), until it ends or
pauses for an operator (LangGraph's invoke). Prints the state it reached on stdout, and the run's
id and how it settled on stderr. Only runs of this workflow (and its sub-workflows) are executed
here, so other workers' runs in the same store are left to them.
Any store works, --store memory: too (nothing is kept). On a file or Redis store the run stays
there: a paused run is answered with pitwall resolve and goes on with pitwall worker; Ctrl-C
leaves it for a worker.
Exit 1 if the run failed, was canceled or paused on a failure (as start --wait); 0 if it ended or
paused for a person's answer.
--json prints { "runId", "status", "reason", "error", "waitingFor"?, "state" }.`,
  flags: {
    input: { type: "string" },
    actions: { type: "string", isMultiple: true },
  },
  args: { min: 1, max: 1 },
  createsStore: true,
  inProcess: true,
  stopsOnSignal: true,
  exitsWhenDone: true,
  async run({ args, flags, out, global, store, actions, signal }) {
    const file = args[0]!;
    const loaded = await actions(flags.actions);
    const model = modelOfEnvironment();
    const registry = extendRegistry(loaded ?? actionRegistry({}), model ? { model } : {});
    const workflow = compiledFile(file, registry);
    for (const warning of workflow.warnings) out.note(formatProblemIn(file, warning));
    const input = flags.input === undefined ? {} : readJsonArgument("input", flags.input);
    if (input === null) throw new UsageError("--input null: give a JSON object, the run's starting state (or leave --input out)");
    checkStart(workflow, input, {});
    const s = await store();
    // The worker of this command takes runs of this workflow's versions only.
    const mine = new Set(versionsOf(workflow));
    const workflows = new (class extends WorkflowRegistry {
      override async runnableVersions(maxAgeMs = 1000): Promise<string[]> {
        // The store's versions all the same: a newer one's limits.runsAtOnce holds for this one's runs too.
        await this.listStored(maxAgeMs);
        return [...mine];
      }
    })(s, registry, [workflow]);
    const worker = new Worker(s, workflows, { onError: (message) => out.note(clean(message)) });
    worker.start();
    try {
      const runId = await startRun(s, workflow, input, { actor: global.actor });
      worker.nudge();
      if (!out.json) out.note(`run ${runId}`);
      const handle = new RunHandle(s, runId);
      const settled = await Promise.race([handle.wait(), signal.aborted ? undefined : once(signal, "abort").then(() => undefined)]);
      if (!settled) {
        out.note(`run ${runId} left unfinished: ${isMemoryStore(global.store) ? "it is gone with this process's memory: store" : "a worker on this store (pitwall worker) goes on with it"}`);
        return EXIT.failed;
      }
      return await report(settled, handle);
    } finally {
      await worker.stop();
    }

    async function report(settled: RunRecord, handle: RunHandle) {
      const held = await heldBy(s, settled);
      const state = await handle.state();
      const failedPause = await handle.pausedOnFailure();
      if (out.json) out.value({ ...settledValue(settled, held), state });
      else {
        out.line(json(state, 2));
        out.note(settledText(settled, held));
      }
      if (settled.status === "paused" && isMemoryStore(global.store)) {
        out.note("the store is memory:, so the paused run is gone when this command exits: run it on a file store (the default) to answer it (pitwall resolve, then pitwall worker)");
      }
      return settled.status === "failed" || settled.status === "canceled" || failedPause ? EXIT.failed : EXIT.ok;
    }
  },
});

/** A workflow's version and its sub-workflows', at any depth. */
function versionsOf(workflow: CompiledWorkflow): string[] {
  return [workflow.version, ...[...workflow.children.values()].flatMap(versionsOf)];
}
