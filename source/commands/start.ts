import { MAX_WAIT_MS, RunHandle, loadWorkflowFile, startRun, type RunRecord } from "../../engine/index.js";
import { defineCommand } from "../cli/command.js";
import { EXIT, UsageError } from "../cli/errors.js";
import { runStatus } from "../cli/format.js";
import { listFlag, readJsonArgument } from "../cli/inputs.js";
import { checkedVersion } from "../cli/workflow-file.js";

export const start = defineCommand({
  name: "start",
  usage: "start <workflow.json> [--input JSON|@file] [--actions MODULE ...] [--wait [--timeout SECONDS]] [--interrupt-before NODE ...] [--interrupt-after NODE ...]",
  summary: "store a workflow and start a run of it; prints the run id",
  details: `The input is a partial state, validated against the workflow's state schema.
A worker (pitwall worker, or the demo) executes the run; with --actions (or actions in the
config file) the workflow's actions are checked now.
--wait waits until the run ends or pauses for an operator; exit 1 if it failed or was canceled.
--json prints { "runId" } (with --wait also "status", "reason", "error").`,
  flags: {
    input: { type: "string" },
    actions: { type: "string", isMultiple: true },
    wait: { type: "boolean" },
    timeout: { type: "number" },
    interruptBefore: { type: "string", isMultiple: true },
    interruptAfter: { type: "string", isMultiple: true },
  },
  args: { min: 1, max: 1 },
  createsStore: true,
  async run({ args, flags, out, global, store, actions }) {
    const registry = await actions(flags.actions);
    // With actions, the workflow is compiled against them (so a missing action is caught now);
    // without, only its definition is needed here: the workers load the code.
    const workflow = registry ? loadWorkflowFile(args[0]!, registry) : checkedVersion(args[0]!);
    const input = flags.input === undefined ? {} : readJsonArgument("input", flags.input);
    if (flags.timeout !== undefined && !flags.wait) throw new UsageError("--timeout goes with --wait");
    const interruptBefore = listFlag("interrupt-before", flags.interruptBefore);
    const interruptAfter = listFlag("interrupt-after", flags.interruptAfter);
    if (flags.timeout !== undefined && !(flags.timeout > 0 && flags.timeout * 1000 <= MAX_WAIT_MS)) {
      throw new UsageError(`--timeout ${flags.timeout}: give seconds, more than 0 and at most ${MAX_WAIT_MS / 1000}`);
    }
    const opened = await store();
    const runId = await startRun(opened, workflow, input, {
      actor: global.actor,
      ...(interruptBefore.length ? { interruptBefore } : {}),
      ...(interruptAfter.length ? { interruptAfter } : {}),
    });
    const handle = new RunHandle(opened, runId);
    if (!flags.wait) {
      if (out.json) out.value({ runId: handle.id });
      else out.line(handle.id);
      return EXIT.ok;
    }
    if (!out.json) out.line(handle.id);
    const settled = (run: RunRecord) => out.value({ runId: run.id, status: run.status, reason: run.reason, error: run.error });
    let run: RunRecord;
    try {
      run = await handle.wait(flags.timeout !== undefined ? { timeoutMs: flags.timeout * 1000 } : {});
    } catch (error) {
      // A script still learns which run it started (and how far it got) when the wait times out.
      const now = out.json ? await opened.getRun(runId) : undefined;
      if (now) settled(now);
      throw error;
    }
    if (out.json) settled(run);
    else out.note(`run ${run.id} ${runStatus(run)}${run.error ? `: ${run.error.message}` : ""}`);
    return run.status === "failed" || run.status === "canceled" ? EXIT.failed : EXIT.ok;
  },
});
