import { ValidationError } from "../errors.js";
import { checkDeadlineSeconds } from "../runtime/deadlines.js";
import type { CompiledWorkflow } from "../graph/model.js";
import { derivedId } from "../ids.js";
import { newRun } from "../runtime/new-run.js";
import { diffStates, summarizeDiff } from "../state/diff.js";
import { applyStatePatch } from "../state/patch.js";
import { readState } from "../state/read.js";
import { StateValidator } from "../state/schema.js";
import { TERMINAL_RUN_STATUSES, type CommandRecord, type RunRecord } from "../store/records.js";
import type { Store } from "../store/store.js";
import { acceptance } from "../worker/commands.js";
import { checkArgs, newCommand, outcomeOf, recordCommand, refuseCommand, type CommandOutcome, type CommandWriter } from "./command-records.js";
import { carriedText, signalsToCarry, tallySignals, type ForkSignals, type SignalTally } from "./fork-signals.js";
import { checkNodesKept, checkRoutesTaken, fitState } from "./fork-version.js";
import { checkTags } from "../tags.js";
import { mustGetRun } from "./must-get.js";
import { findCheckpoint, type CheckpointRef } from "./reads.js";
import { checkInterruptNodes, storeVersion, type WorkflowVersion } from "./start.js";
import { reducerOf, type WorkflowVersions } from "./workflow-versions.js";

export interface ForkOptions {
  patch?: unknown;
  reason?: string;
  workflow?: CompiledWorkflow | WorkflowVersion;
  restart?: boolean;
  interruptBefore?: string[] | null;
  interruptAfter?: string[] | null;
  /** Tags added to those the fork keeps of its source. */
  tags?: Record<string, string>;
  /** Canceled unless it ended this long after it was made; default its workflow's `limits.deadlineSeconds` (not the source's deadline). */
  deadlineSeconds?: number;
  /**
   * `"carry"` (the default, but for a `restart`): the fork's inbox starts with the signals of
   * its source that its history has not taken (`signalsToCarry`); `"none"` (a `restart`'s
   * default, a new turn): empty.
   */
  signals?: ForkSignals;
}

/** What a fork answers with: its run, and how many signals it carried into its inbox. */
export type ForkResult = { runId: string; carriedSignals: number };

/**
 * A new run whose history begins at a checkpoint of another (`Operator.fork`), recorded as a
 * `fork` command on the source run, which is not changed otherwise.
 */
export async function forkRun(writer: CommandWriter, versions: WorkflowVersions, runId: string, checkpoint: CheckpointRef, options: ForkOptions): Promise<CommandOutcome<ForkResult>> {
  const { store } = writer;
  const source = await mustGetRun(store, runId);
  // The fork is found by what its source was: it keeps its tags (checked before anything is recorded).
  const tags = checkTags({ ...source.tags, ...options.tags });
  const from = await findCheckpoint(store, runId, checkpoint);
  const target = options.workflow;
  if (target && target.definition.name !== source.workflow) {
    throw new ValidationError(`run ${runId} is a run of workflow ${source.workflow}; a fork may move it to another version of that workflow, not to ${target.definition.name}`);
  }
  const version = target?.version ?? source.version;
  if (target && !options.restart) checkNodesKept(target.definition, version, from, source);
  // Checked before the command is recorded: a fork refused for a node it lacks leaves no trace.
  const forkDefinition = target ? target.definition : (await versions.get(version)).definition;
  if (!options.restart) checkRoutesTaken(forkDefinition, version, from, source);
  checkInterruptNodes(forkDefinition, options);
  if (options.deadlineSeconds !== undefined) checkDeadlineSeconds(options.deadlineSeconds);
  checkArgs(options);
  const signals = checkForkSignals(options.signals) ?? (options.restart ? "none" : "carry");
  // Before the command is recorded: a fork refused for carrying too many leaves no trace.
  const carried = signals === "carry" ? await signalsToCarry(store, source, from) : [];
  const command = newCommand(
    writer,
    source.id,
    "fork",
    {
      checkpointId: from.id,
      ...(options.patch !== undefined ? { patch: options.patch } : {}),
      ...(target ? { version } : {}),
      ...(options.restart ? { restart: true } : {}),
      ...(options.signals !== undefined ? { signals } : {}),
      // What the run made will hold, in the command: whichever process answers the fork says it.
      ...(carried.length > 0 ? { carriedSignals: tallySignals(carried) } : {}),
    },
    options.reason,
  );
  await recordCommand(writer, command);
  try {
    const { definition, validator } = target ? { definition: target.definition, validator: new StateValidator(target.definition.state) } : await versions.get(version);
    const sourceState = await readState(store, runId, from.n);
    const patched = options.patch === undefined ? sourceState : applyStatePatch(sourceState, options.patch, validator, (key) => reducerOf(definition, key)).state;
    // Checked against the version the fork runs also when it is the source's own: a run upgraded
    // since that checkpoint was written runs another version than the one that wrote it.
    const state = fitState(validator, patched, from, version);
    // Stored only once the fork is known to be made: a refused one leaves no version that the
    // console's U (the newest stored) or a schedule could take for a deployment.
    if (target) await storeVersion(store, target);
    const diff = diffStates(sourceState, state);
    const id = derivedId("run", command.id);
    const accepted = acceptance(command, forkEffect(command, id, await subWorkflowNote(store, source)), forkResult(command, id), writer.actor);
    // The run and the command's answer in one write, made only while the command is pending: a
    // worker that took this fork for abandoned meanwhile (and refused it) leaves no run behind.
    await store.createRun({
      ...newRun({
        id,
        workflow: { name: source.workflow, version },
        state,
        actor: writer.actor,
        secretKeys: writer.secretKeys,
        // A fork is a run of its own, not a child: it outlives its source and is deleted on its own.
        forkOf: { runId: source.id, checkpointId: from.id },
        // Restarted, it plans from the start node (newRun's own plan); its steps count on.
        ...(options.restart
          ? { next: [definition.start] }
          : {
              control: target ? { ...from.control, visits: Object.fromEntries(Object.entries(from.control.visits).filter(([node]) => Object.hasOwn(definition.nodes, node))) } : from.control,
              next: from.next,
            }),
        step: from.step,
        tags,
        deadlineSeconds: options.deadlineSeconds ?? definition.limits.deadlineSeconds,
        interruptBefore: options.interruptBefore !== undefined ? options.interruptBefore : source.interruptBefore,
        interruptAfter: options.interruptAfter !== undefined ? options.interruptAfter : source.interruptAfter,
        carriedSignals: carried,
        ...(diff.length > 0 ? { edited: summarizeDiff(diff) } : {}),
        ...(options.reason ? { reason: options.reason } : {}),
      }),
      answering: accepted,
    });
    return outcomeOf({ ...command, ...accepted.answer }) as CommandOutcome<ForkResult>;
  } catch (error) {
    // Answered already: by the write above, its reply lost, or by a worker in this process's place.
    const answered = await store.getCommand(command.id).catch(() => undefined);
    if (answered && answered.status !== "pending") return outcomeOf(answered) as CommandOutcome<ForkResult>;
    await refuseCommand(writer, command, error).catch(() => undefined);
    throw error;
  }
}

/** The arguments a fork is recorded with (`forkRun`). */
interface ForkArgs {
  checkpointId: string;
  restart?: boolean;
  version?: string;
  carriedSignals?: SignalTally;
}

/** What a fork did, in the same words whichever process answered it (`note`: `subWorkflowNote`). */
export function forkEffect(command: CommandRecord, runId: string, note?: string): string {
  const { checkpointId, restart, version, carriedSignals } = command.args as unknown as ForkArgs;
  const how = restart ? `continued from checkpoint ${checkpointId} as run ${runId}, from the start node` : `forked from checkpoint ${checkpointId} as run ${runId}`;
  const carried = carriedSignals?.count ? `; ${carriedText(carriedSignals, command.runId)}` : "";
  return `${how}${version ? ` on version ${version.slice(0, 12)}` : ""}${carried}${note ? `; note: ${note}` : ""}`;
}

/** What a fork answers with, the same whichever process answered it. */
export function forkResult(command: CommandRecord, runId: string): ForkResult {
  return { runId, carriedSignals: (command.args as unknown as ForkArgs).carriedSignals?.count ?? 0 };
}

/** Refuses a `signals` option that is neither of its values (a caller in plain JavaScript). */
function checkForkSignals(signals: unknown): ForkSignals | undefined {
  if (signals === undefined || signals === "carry" || signals === "none") return signals;
  throw new ValidationError(`signals must be "carry" (the fork's inbox starts with the signals its history has not taken) or "none" (empty), not ${JSON.stringify(signals)}`);
}

/**
 * For a fork of a sub-workflow's run: its parent does not wait on the fork, which is a run of its
 * own (no parent), however fixed; what gets the parent going is said instead. An operator forking
 * a child run onto a fixed version expects the parent to go on with it, and nothing else tells
 * them it will not. (Not refused: a child run forked on its own, to try a fix, is of use.)
 */
export async function subWorkflowNote(store: Store, source: RunRecord | undefined): Promise<string | undefined> {
  if (!source?.parentRunId) return undefined;
  const [parent, task] = await Promise.all([store.getRun(source.parentRunId), source.parentTaskId ? store.getTask(source.parentTaskId) : undefined]);
  const of = `run ${source.id} is a sub-workflow run of run ${source.parentRunId}${task ? ` (node ${task.node})` : ""}: the fork is a run of its own`;
  const waiting = parent && !TERMINAL_RUN_STATUSES.includes(parent.status) && !TERMINAL_RUN_STATUSES.includes(source.status);
  if (!waiting) return `${of}, which run ${source.parentRunId} does not wait on`;
  return `${of}; run ${parent.id} still waits on run ${source.id}, not on the fork: to have it go on, retry or cancel run ${source.id}, or fork run ${parent.id}`;
}
