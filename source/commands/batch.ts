import { isPitwallError, planBatch, runBatch, selectRuns, selects, type BatchAction, type BatchPlan, type BatchResult, type RunRecord, type RunSelection } from "../../engine/index.js";
import { defineCommand } from "../cli/command.js";
import { EXIT, UsageError, countFlag, describeError, exitCodeOf, type ExitCode } from "../cli/errors.js";
import { readJsonArgument } from "../cli/inputs.js";
import type { Output } from "../cli/output.js";
import { SELECTION_FLAGS, SELECTION_USAGE, selectionOf } from "../cli/run-selection.js";
import { checkedVersion } from "../cli/workflow-file.js";

const ACTIONS = ["cancel", "retry", "signal", "approve", "reject", "upgrade"] as const;
type ActionName = (typeof ACTIONS)[number];

/** What each action does, in the words of its listing: `would cancel 3 runs`, `canceled 3 runs`. */
const VERBS: Record<ActionName, { would: string; did: string }> = {
  cancel: { would: "cancel", did: "canceled" },
  retry: { would: "retry the failed or canceled tasks of", did: "retried the tasks of" },
  signal: { would: "signal", did: "signaled" },
  approve: { would: "approve the pending interrupts of", did: "approved the pending interrupts of" },
  reject: { would: "reject the pending interrupts of", did: "rejected the pending interrupts of" },
  upgrade: { would: "upgrade", did: "upgraded" },
};

/** The actions that take an argument after their name: what it is, for the messages that ask for it. */
const ARGUMENT: Partial<Record<ActionName, string>> = { signal: "the signal's name: batch signal <name> ...", upgrade: "the workflow file of the version: batch upgrade <workflow.json> ..." };

/** At most this many runs unless --limit says otherwise: a batch larger than that is likely a selection mistyped. */
const DEFAULT_LIMIT = 1_000;

export const batch = defineCommand({
  name: "batch",
  usage: `batch (cancel --reason TEXT | retry | signal <name> [--data JSON|@file] | approve [--node NODE] | reject --reason TEXT [--node NODE] | upgrade <workflow.json>) ${SELECTION_USAGE} [--reason TEXT] [--limit N] [--yes]`,
  summary: "cancel, retry, signal, approve, reject or upgrade every run a selection names (Temporal's batch operations)",
  details: `The runs are selected as \`runs\` selects them (--status, --workflow, --version, --tag,
--orphaned, --descendants-of; at least one is needed, so that no batch acts on every run by mistake), at most
--limit (default ${DEFAULT_LIMIT}), most recently updated first.
Without --yes nothing is sent: it lists the runs it would act on (and those it would leave, saying
why) and says to add --yes. With --yes each run gets its own command, as the single-run command
would send it (cancel, retry of every failed or canceled task of its current step, signal;
approve or reject: its pending interrupts that offer the decision, at --node only when given, all
answered by one command; upgrade: the run moves in place onto the version in the file, as
pitwall upgrade moves it); a run refused (it ended meanwhile, another operator acted first) does
not stop the others.
batch upgrade takes the file as its argument (--workflow selects runs by name here): it selects
only runs of the file's workflow, and, without --status, those queued, running, paused or failed; a run
the version cannot take (pitwall upgrade would refuse it: it is running, a node it is at is gone,
its state does not fit) is listed as left, with the refusal's reason; --version OLD moves only the
runs still on the old version (one on the file's version already is left). Each run's
outcome is printed; the exit code is 0 when none failed, else that of the first failure (3 for a
conflict, 1 otherwise).
--json prints { "action", "dryRun", "more", "runs": [{ "runId", "status": "would" | "done" |
"skipped" | "failed", "effects"?, "commandIds"?, "why"?, "error"? }] }.`,
  flags: { ...SELECTION_FLAGS, reason: { type: "string" }, data: { type: "string" }, node: { type: "string" }, limit: { type: "number" }, yes: { type: "boolean" } },
  args: { min: 1, max: 2 },
  async run({ args, flags, out, store, operator }) {
    const action = actionOf(args, flags);
    const given = selectionOf(flags);
    if (!selects(given)) throw new UsageError("batch needs a selection: --status, --workflow, --version, --tag, --orphaned or --descendants-of (it never acts on every run by default)");
    const selection = action.kind === "upgrade" ? upgradeSelection(given, action.workflow.definition.name, args[1]!) : given;
    const limit = countFlag("limit", flags.limit) ?? DEFAULT_LIMIT;
    const s = await store();
    const { runs, more } = await selectRuns(s, selection, limit);
    if (more) out.note(`acting on the ${limit} most recently updated runs of the selection; there are more (--limit N, or run the batch again)`);
    const name = args[0] as ActionName;
    if (!flags.yes) return await printPlan(out, name, runs, await planBatch(s, runs, action), more);
    const results = await runBatch(await operator(), s, runs, action);
    return await printResults(out, name, results, more);
  },
});

function actionOf(args: string[], flags: { reason?: string | undefined; data?: string | undefined; node?: string | undefined }): BatchAction {
  const [name, argument] = args;
  if (!ACTIONS.includes(name as ActionName)) throw new UsageError(`batch ${name}: not an action (${ACTIONS.join(", ")})`);
  const takes = ARGUMENT[name as ActionName];
  if (takes === undefined && argument !== undefined) throw new UsageError(`batch ${name} takes no argument after it (${JSON.stringify(argument)})`);
  if (takes !== undefined && argument === undefined) throw new UsageError(`batch ${name} needs ${takes}`);
  if (name !== "signal" && flags.data !== undefined) throw new UsageError("--data is a signal's: only batch signal takes it");
  if (name !== "approve" && name !== "reject" && flags.node !== undefined) throw new UsageError("--node says which interrupts to answer: only batch approve and reject take it");
  const reason = flags.reason !== undefined ? { reason: flags.reason } : {};
  switch (name as ActionName) {
    case "cancel":
      if (!flags.reason?.trim()) throw new UsageError("batch cancel needs --reason TEXT");
      return { kind: "cancel", reason: flags.reason };
    case "retry":
      return { kind: "retry", ...reason };
    case "approve":
    case "reject":
      if (name === "reject" && !flags.reason?.trim()) throw new UsageError("batch reject needs --reason TEXT (each run's node is told why)");
      return { kind: "resolve", decision: name as "approve" | "reject", ...(flags.node !== undefined ? { node: flags.node } : {}), ...reason };
    case "signal":
      return { kind: "signal", name: argument!, ...(flags.data !== undefined ? { data: readJsonArgument("data", flags.data) } : {}), ...reason };
    case "upgrade":
      return { kind: "upgrade", workflow: checkedVersion(argument!), ...reason };
  }
}

/**
 * What a batch upgrade acts on: the selection's runs of the file's workflow (a run of another
 * could not move to it), those queued, running, paused or failed unless --status says otherwise.
 */
function upgradeSelection(selection: RunSelection, workflow: string, file: string): RunSelection {
  const named = selection.workflows ?? [];
  if (named.length > 0 && !named.includes(workflow)) {
    throw new UsageError(`batch upgrade moves runs of workflow ${workflow} (${file}), and --workflow selects only ${named.join(", ")}`);
  }
  const status = (selection.status?.length ?? 0) > 0 || selection.orphaned ? selection.status : (["queued", "running", "paused", "failed"] as const);
  return { ...selection, workflows: [workflow], ...(status ? { status } : {}) };
}

async function printPlan(out: Output, name: ActionName, runs: readonly RunRecord[], planned: readonly BatchPlan[], more: boolean): Promise<ExitCode> {
  if (out.json) {
    out.value({ action: name, dryRun: true, more, runs: planned });
    return EXIT.ok;
  }
  if (runs.length === 0) {
    out.note("no runs match the selection: nothing to do");
    return EXIT.ok;
  }
  const acted = planned.filter((p) => p.status === "would").length;
  out.line(`would ${VERBS[name].would} ${count(acted)}${acted < runs.length ? ` (${runs.length - acted} left as they are)` : ""}:`);
  await out.table(
    ["RUN", "WORKFLOW", "STATUS", ""],
    runs.map((run, i) => {
      const plan = planned[i]!;
      return [run.id, run.workflow, run.reason ? `${run.status} (${run.reason})` : run.status, plan.status === "skipped" ? `left: ${plan.why}` : ""];
    }),
  );
  out.note(acted > 0 ? `nothing sent: add --yes to ${VERBS[name].would} ${acted === 1 ? "it" : "them"}` : "nothing sent, and nothing would be");
  return EXIT.ok;
}

async function printResults(out: Output, name: ActionName, results: readonly BatchResult[], more: boolean): Promise<ExitCode> {
  const failed = results.filter((r): r is Extract<BatchResult, { status: "failed" }> => r.status === "failed");
  if (out.json) {
    out.value({
      action: name,
      dryRun: false,
      more,
      runs: results.map((r) =>
        r.status === "failed" ? { runId: r.runId, status: r.status, error: { code: isPitwallError(r.error) ? r.error.code : "ERROR", message: describeError(r.error) } } : r,
      ),
    });
  } else if (results.length === 0) {
    out.note("no runs match the selection: nothing to do");
  } else {
    await out.table(
      ["RUN", "OUTCOME"],
      results.map((r) => [r.runId, r.status === "done" ? r.effects.join("; ") : r.status === "skipped" ? `skipped: ${r.why}` : `failed: ${describeError(r.error)}`]),
    );
    const done = results.filter((r) => r.status === "done").length;
    const skipped = results.length - done - failed.length;
    out.note(`${VERBS[name].did} ${count(done)}${skipped > 0 ? `; ${skipped} left as they are` : ""}${failed.length > 0 ? `; ${failed.length} failed` : ""}`);
  }
  return failed.length > 0 ? exitCodeOf(failed[0]!.error) : EXIT.ok;
}

const count = (n: number) => `${n} run${n === 1 ? "" : "s"}`;
