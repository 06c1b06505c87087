import { MAX_WAIT_MS, WaitTimeoutError, UNCLAIMED_MS, runsAtOnceOf, unclaimedWhy, formatProblemIn, RunExistsError, RunHandle, checkStart, continueRun, TERMINAL_RUN_STATUSES, startRun, type RunRecord, type Store } from "../../engine/index.js";
import type { Output } from "../cli/output.js";
import { plural } from "../text/plain.js";
import { defineCommand } from "../cli/command.js";
import { EXIT, TimedOutError, UsageError } from "../cli/errors.js";
import { age, runStatus } from "../cli/format.js";
import { heldBy, settledText, settledValue } from "../cli/settled.js";
import { listFlag, secondsFlag, startInput, tagFlags } from "../cli/inputs.js";
import { checkedVersion, compiledFile } from "../cli/workflow-file.js";
import { outageNotes } from "../cli/outage-notes.js";
import { waitingFor, waitsForSlot } from "../text/waiting-text.js";

export const start = defineCommand({
  name: "start",
  usage: "start <workflow.json> [--id ID | --from RUN] [--input JSON|@file] [--actions MODULE ...] [--wait [--until settled|end] [--timeout SECONDS]] [--interrupt-before NODE ...] [--interrupt-after NODE ...] [--tag NAME=VALUE ...] [--deadline LENGTH]",
  summary: "store a workflow and start a run of it; prints the run id",
  details: `The input is a partial state, validated against the workflow's state schema.
A worker (pitwall worker, or the demo) executes the run; with --actions (or actions in the
config file) the workflow's actions are checked now.
--wait waits until the run ends or pauses for an operator; exit 1 if it failed, was canceled or
paused on a failure (retries-exhausted, poison, killed, or an at-most-once node's recovery
interrupt); exit 4 if --timeout ran out first (the run goes on); exit 0 if it paused for a person's answer (an approval, interrupt or breakpoint). --until end waits on through pauses until the run ends (an operator answers,
retries or cancels it meanwhile).
--id ID names the run (letters, digits, '.', '_' and '-', at most 128), so that a start whose
reply was lost can be run again: when a run with that id exists and is a start of the same
workflow (by name) from the same input and interrupt lists, it is taken as this start (exit 0, a
note on stderr, --wait waits for it); a run with that id of another workflow or input is a
conflict (exit 3).
--from RUN goes on from a run that has ended (a conversation's next turn): its final state, with
the input applied as an update through the reducers (a message appended), runs the workflow again
from its start node, as a new run recorded as a fork of RUN's last checkpoint.
--deadline 24h (or seconds, 90m, 2d) cancels the run, as actor timeout, if it has not ended that
long after it starts (its nodes aborted, its child runs canceled); default the workflow's
limits.deadlineSeconds.
--tag NAME=VALUE (repeated, at most 16) tags the run, to find it by (pitwall runs --tag); a run
started --from another keeps that run's tags, these added.
--json prints { "runId" } (with --id also "existed"; with --wait also "status", "reason", "error").`,
  flags: {
    id: { type: "string" },
    from: { type: "string" },
    input: { type: "string" },
    actions: { type: "string", isMultiple: true },
    wait: { type: "boolean" },
    timeout: { type: "number" },
    until: { type: "string" },
    interruptBefore: { type: "string", isMultiple: true },
    interruptAfter: { type: "string", isMultiple: true },
    tag: { type: "string", isMultiple: true },
    deadline: { type: "string" },
  },
  args: { min: 1, max: 1 },
  createsStore: true,
  async run({ args, flags, out, global, store, actions }) {
    const registry = await actions(flags.actions);
    // With actions, the workflow is compiled against them (so a missing action is caught now);
    // without, only its definition is needed here: the workers load the code.
    const file = args[0]!;
    const workflow = registry ? compiledFile(file, registry) : checkedVersion(file);
    // What validate warns of (a loop that may not end, routes without a default) is said here too.
    for (const warning of workflow.warnings) out.note(formatProblemIn(file, warning));
    const input = startInput(flags.input);
    if (flags.timeout !== undefined && !flags.wait) throw new UsageError("--timeout goes with --wait");
    if (flags.until !== undefined && !flags.wait) throw new UsageError("--until goes with --wait");
    if (flags.until !== undefined && flags.until !== "settled" && flags.until !== "end") throw new UsageError(`--until ${flags.until}: give settled (the default: until it ends or pauses) or end`);
    const interruptBefore = listFlag("interrupt-before", flags.interruptBefore);
    const interruptAfter = listFlag("interrupt-after", flags.interruptAfter);
    const tags = tagFlags(flags.tag);
    if (flags.timeout !== undefined && !(flags.timeout > 0 && flags.timeout * 1000 <= MAX_WAIT_MS)) {
      throw new UsageError(`--timeout ${flags.timeout}: give seconds, more than 0 and at most ${MAX_WAIT_MS / 1000}`);
    }
    // Checked before the store is opened: a refused start creates no store file.
    const options = {
      ...(flags.id !== undefined ? { id: flags.id } : {}),
      ...(interruptBefore.length ? { interruptBefore } : {}),
      ...(interruptAfter.length ? { interruptAfter } : {}),
      ...(tags ? { tags } : {}),
      ...(flags.deadline !== undefined ? { deadlineSeconds: secondsFlag("deadline", flags.deadline) } : {}),
    };
    if (flags.from !== undefined && options.id !== undefined) {
      throw new UsageError("--from takes no --id: the new run's id is made for it");
    }
    // Going on from a run, the input is an update of its state, checked once that is read.
    if (flags.from === undefined) checkStart(workflow, input, options);
    const opened = await store();
    let runId: string;
    let existed: RunRecord | undefined;
    try {
      runId = flags.from !== undefined ? await continueRun(opened, workflow, flags.from, input, { actor: global.actor, secretKeys: global.secretKeys, ...options }) : await startRun(opened, workflow, input, { actor: global.actor, ...options });
    } catch (error) {
      // A start retried after its reply was lost finds its own run: done already, not a conflict.
      if (!(error instanceof RunExistsError && error.sameStart)) throw error;
      existed = error.run;
      runId = existed.id;
      const version = existed.version === workflow.version ? "" : `; it is on version ${existed.version.slice(0, 8)}, not this file's ${workflow.version.slice(0, 8)}, and keeps it`;
      out.note(`run ${runId} was started before (${age(existed.createdAt)} ago, now ${runStatus(existed)}): not started again${version}`);
    }
    if (!existed) await noteOtherVersions(out, opened, workflow.definition.name, workflow.version);
    // With --id a script learns whether this start made the run.
    const made = flags.id !== undefined ? { existed: existed !== undefined } : {};
    const handle = new RunHandle(opened, runId);
    if (!flags.wait) {
      if (out.json) out.value({ runId: handle.id, ...made });
      else out.line(handle.id);
      return EXIT.ok;
    }
    if (!out.json) out.line(handle.id);
    // A run waiting on a sub-workflow that paused for an operator has settled too: say on what.
    const child = (run: RunRecord) => heldBy(opened, run);
    const settled = (run: RunRecord, held: RunRecord | undefined) => out.value({ ...settledValue(run, held), ...made });
    // Nobody may be running a worker: say so once, rather than wait in silence, and what the
    // workers' heartbeats say is missing (the rule `show` and the console follow) — as soon as
    // the run has waited that long: a run started before (--id) may have waited long enough already.
    const waitedMs = existed ? Date.now() - existed.updatedAt : 0;
    const unclaimed = out.json
      ? undefined
      : setTimeout(() => {
          void Promise.all([opened.getRun(runId), opened.listWorkers()]).then(async ([now, workers]) => {
            const atOnce = now ? (await runsAtOnceOf(opened, [now.workflow])).get(now.workflow) : undefined;
            const why = now && now.startedAt === null ? unclaimedWhy(now, Date.now(), workers, atOnce) : undefined;
            if (why) out.note(waitsForSlot(why, atOnce) ? `run ${runId} waits ${waitingFor(why, now!, atOnce)}` : `run ${runId}: ${why}`);
          }, () => undefined);
        }, Math.max(0, UNCLAIMED_MS + 500 - waitedMs));
    let run: RunRecord;
    try {
      const deadline = flags.timeout !== undefined ? Date.now() + flags.timeout * 1000 : undefined;
      const onStoreFailure = outageNotes(out, `still waiting for run ${runId}: the wait goes on once it answers`, `still waiting for run ${runId}`);
      const budget = () => ({ onStoreFailure, ...(deadline !== undefined ? { timeoutMs: Math.max(1, deadline - Date.now()) } : {}) });
      run = await handle.wait(budget());
      if (flags.until === "end" && !TERMINAL_RUN_STATUSES.includes(run.status)) {
        // Waiting on in silence would look like a hang: say once what the run waits for.
        if (!out.json) out.note(`${settledText(run, await child(run))}; waiting for it to end`);
        run = await handle.wait({ ...budget(), until: "end" });
      }
    } catch (error) {
      if (!(error instanceof WaitTimeoutError)) throw error;
      // A script still learns which run it started (and how far it got) when the wait times out.
      const now = await opened.getRun(runId);
      if (out.json && now) settled(now, await child(now));
      throw new TimedOutError(`run ${runId} did not ${flags.until === "end" ? "end" : "settle"} within ${flags.timeout} s (it is ${now ? runStatus(now) : "gone"}; it goes on without this wait)`);
    } finally {
      clearTimeout(unclaimed);
    }
    const held = await child(run);
    // Paused on a failure (retries spent, workers lost, a node killed, an at-most-once node cut
    // off), or held up by a child run paused so, is a failure an operator must look at: `start
    // --wait && deploy` must not go on. Paused for a person's answer is the run at work. The
    // engine's PAUSE_IS_FAILURE and INTERRUPT_IS_FAILURE decide which.
    const failedPause = await handle.pausedOnFailure();
    if (out.json) settled(run, held);
    else out.note(`${settledText(run, held)}${failedPause?.run.id === run.id && failedPause.why !== run.reason ? `: ${failedPause.why}` : ""}`);
    return run.status === "failed" || run.status === "canceled" || failedPause ? EXIT.failed : EXIT.ok;
  },
});

/**
 * Runs keep the version they started on: when the file was edited since runs of it started, say
 * that those go on as they were (a person editing a workflow to fix a bug expects to be told).
 */
async function noteOtherVersions(out: Output, store: Store, workflow: string, version: string): Promise<void> {
  const { runs } = await store.listRuns({ workflow, status: ["queued", "running", "paused"], limit: 1000 });
  const others = runs.filter((r) => r.version !== version);
  if (others.length === 0) return;
  const versions = new Set(others.map((r) => r.version.slice(0, 8)));
  out.note(
    `${plural(others.length, "unfinished run")} of ${workflow} ${others.length === 1 ? "is" : "are"} on ${versions.size === 1 ? "another version" : "other versions"} (${[...versions].join(", ")}) and ${others.length === 1 ? "keeps it" : "keep theirs"}; this run is on ${version.slice(0, 8)} (pitwall upgrade RUN --workflow FILE moves a run onto it in place, pitwall batch upgrade FILE many)`,
  );
}
