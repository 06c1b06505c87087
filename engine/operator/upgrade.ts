import { ConflictError, NotFoundError, StaleFenceError, ValidationError } from "../errors.js";
import type { CompiledWorkflow } from "../graph/model.js";
import { checkpointId } from "../ids.js";
import { Batch } from "../runtime/batch.js";
import { EventFactory } from "../runtime/event-factory.js";
import { diffStates, summarizeDiff } from "../state/diff.js";
import { opsBetween, type State } from "../state/ops.js";
import { applyStatePatch } from "../state/patch.js";
import { readState } from "../state/read.js";
import { StateValidator } from "../state/schema.js";
import { jsonBytes } from "../state/snapshot.js";
import type { CheckpointRecord, RunRecord } from "../store/records.js";
import type { Store } from "../store/store.js";
import { acceptance } from "../worker/commands.js";
import { checkArgs, newCommand, outcomeOf, requested, type CommandOutcome, type CommandWriter } from "./command-records.js";
import { checkNodesKept, checkRoutesTaken, fitState } from "./fork-version.js";
import { mustGetRun } from "./must-get.js";
import { storeVersion, type WorkflowVersion } from "./start.js";
import { checkPendingWrites, checkRetryable, checkSameWorkflow, checkUpgradable, checkWaitsKept } from "./upgrade-checks.js";
import { WorkflowVersions, reducerOf } from "./workflow-versions.js";

export interface UpgradeOptions {
  /** The version to move the run to: another version of the run's workflow. */
  workflow: CompiledWorkflow | WorkflowVersion;
  /** A state edit made with the move, checked against the new version (to reshape a state that does not fit it). */
  patch?: unknown;
  reason?: string;
}

/** What an upgrade did: the versions it moved the run between, and the checkpoint that fitted its state, if one was written. */
export interface UpgradeResult extends Record<string, unknown> {
  from: string;
  to: string;
  checkpointId?: string;
}

/**
 * What `Operator.upgrade` did: moved the run, recorded as an `upgrade` command (`unchanged:
 * false`); or nothing at all, the run being on that version already (`unchanged: true`: no
 * command, no event, the run as it was, as a batch upgrade leaves such a run).
 */
export type UpgradeOutcome = (CommandOutcome<UpgradeResult> & { unchanged: false }) | { unchanged: true; effect: string; result: UpgradeResult };

/**
 * Moves a run nobody executes (queued, paused, failed) onto another version of its workflow, in
 * place (`Operator.upgrade`): recorded as an `upgrade` command on the run, applied and answered in
 * the same write that records it, made only while the run's status, head and fencing token are
 * those it was checked against. Refused, with nothing written, when the run is not in a state to
 * move or the new version could not go on from its head checkpoint. A run on that version already
 * is left as it is, with nothing written.
 */
export async function upgradeRun(writer: CommandWriter, versions: WorkflowVersions, runId: string, options: UpgradeOptions): Promise<UpgradeOutcome> {
  const { store } = writer;
  const target = options.workflow;
  if (options.patch !== undefined) checkArgs({ patch: options.patch });
  for (let attempt = 0; ; attempt++) {
    const run = await mustGetRun(store, runId);
    const batch = await prepareUpgrade(writer, versions, run, target, options);
    if (batch === undefined) return { unchanged: true, effect: `run ${run.id} is on version ${run.version.slice(0, 12)} already; nothing to do`, result: { from: run.version, to: run.version } };
    await storeVersion(store, target);
    try {
      // Fenced out, as every command applied to a run nobody holds: a worker stalled behind a lease
      // that ran out must not write to the run under the version it claimed it on.
      await store.commit(batch.toCommit(run.id, run.fence, { fenceOut: true, expectStatus: [run.status], expectHead: run.head }));
    } catch (error) {
      // A worker claimed the run meanwhile, or it moved on (an answer, an edit): look again.
      if (!(error instanceof StaleFenceError || error instanceof ConflictError) || attempt >= 8) throw error;
      continue;
    }
    const command = batch.submit[0]!;
    return { ...(outcomeOf({ ...command, ...batch.commands[0]! }) as CommandOutcome<UpgradeResult>), unchanged: false };
  }
}

/**
 * Why `run` cannot move to `workflow` now, in the words the upgrade's refusal would say (undefined:
 * it can, as the run is now, or it is on that version already): a batch's dry run lists it, and
 * leaves the run.
 */
export async function upgradeRefusal(store: Store, run: RunRecord, workflow: CompiledWorkflow | WorkflowVersion): Promise<string | undefined> {
  try {
    await prepareUpgrade({ store, actor: "check", secretKeys: [] }, new WorkflowVersions(store), run, workflow, { workflow });
    return undefined;
  } catch (error) {
    if (error instanceof ValidationError || error instanceof ConflictError || error instanceof NotFoundError) return error.message;
    throw error;
  }
}

/**
 * The upgrade's one write, once every check passed; throws, having written nothing, when one
 * fails. None for a run on the version already: there is nothing to write, whatever its status.
 */
async function prepareUpgrade(writer: CommandWriter, versions: WorkflowVersions, run: RunRecord, target: CompiledWorkflow | WorkflowVersion, options: UpgradeOptions): Promise<Batch | undefined> {
  const { store } = writer;
  checkSameWorkflow(run, target.definition);
  const version = target.version;
  if (version === run.version && options.patch === undefined) return undefined;
  checkUpgradable(run);
  if (version === run.version) throw new ValidationError(`run ${run.id} is on version ${version.slice(0, 12)} already: edit its state with pitwall edit`);
  const head = run.head ? await store.getCheckpoint(run.head) : undefined;
  if (!head) throw new NotFoundError("checkpoint", String(run.head));
  const definition = target.definition;
  const [tasks, pending, current] = await Promise.all([
    store.listTasks(run.id, { step: head.step + 1 }),
    store.listInterrupts({ runId: run.id }),
    versions.get(run.version),
  ]);
  checkRetryable(run, tasks);
  checkNodesKept(definition, version, head, run, "upgrade");
  checkRoutesTaken(definition, version, head, run, "upgrade");
  checkWaitsKept(run, current.definition, definition, version, tasks, pending);
  const validator = new StateValidator(definition.state);
  const before = await readState(store, run.id, head.n);
  // The patch is made on the state as the new version starts it: its new keys with their defaults (`--set cfg.level=2` into a new `cfg`).
  const defaults = Object.entries(definition.state).filter(([key, schema]) => !Object.hasOwn(before, key) && schema.default !== undefined);
  const base = defaults.length === 0 ? before : { ...Object.fromEntries(defaults.map(([key, schema]) => [key, structuredClone(schema.default)])), ...before };
  const patched = options.patch === undefined ? before : applyStatePatch(base, options.patch, validator, (key) => reducerOf(definition, key)).state;
  const state = fitState(validator, patched, head, version, "upgrade");
  const patchedKeys = new Set([...Object.keys(before), ...Object.keys(patched)].filter((key) => JSON.stringify(before[key]) !== JSON.stringify(patched[key])));
  checkPendingWrites(run, definition, version, tasks, validator, state, patchedKeys);

  const command = newCommand(writer, run.id, "upgrade", { version, ...(options.patch !== undefined ? { patch: options.patch } : {}) }, options.reason);
  const events = new EventFactory(run.id, writer.actor, writer.secretKeys);
  const batch = new Batch();
  batch.submit.push(command);
  batch.event(requested(command, writer.secretKeys));
  const checkpoint = fitCheckpoint(run, head, before, state, definition.nodes, writer.actor);
  batch.patchRun({ version });
  batch.event(events.run("run.upgraded", { from: run.version, to: version, ...(options.reason ? { reason: options.reason } : {}), ...(checkpoint ? { checkpointId: checkpoint.id } : {}) }));
  if (checkpoint) {
    batch.checkpoint = checkpoint;
    const { diff, truncated } = summarizeDiff(diffStates(before, state));
    batch.event(events.run("state.edited", { checkpointId: checkpoint.id, diff, ...(truncated ? { truncated } : {}) }));
  }
  const result: UpgradeResult = { from: run.version, to: version, ...(checkpoint ? { checkpointId: checkpoint.id } : {}) };
  batch.answer(acceptance(command, upgradeEffect(run, result), result, writer.actor));
  return batch;
}

/**
 * The `update` checkpoint that fits the run's state to the new schema (its new keys' defaults,
 * the patch given), so that its history shows the change rather than a stored state rewritten;
 * none when the state stands as it is. The plan stands; the node visits of nodes the new version
 * lacks are dropped, as a fork onto it drops them.
 */
function fitCheckpoint(run: RunRecord, head: CheckpointRecord, before: State, after: State, nodes: Record<string, unknown>, actor: string): CheckpointRecord | undefined {
  const delta = opsBetween(before, after);
  if (delta.length === 0) return undefined;
  const n = head.n + 1;
  const visits = Object.fromEntries(Object.entries(head.control.visits).filter(([node]) => Object.hasOwn(nodes, node)));
  return {
    id: checkpointId(run.id, n),
    runId: run.id,
    n,
    step: head.step,
    parentId: head.id,
    source: "update",
    actor,
    nodes: [],
    next: head.next,
    control: { ...head.control, visits },
    delta,
    snapshotN: head.snapshotN,
    createdAt: Date.now(),
    bytes: jsonBytes(delta),
  };
}

/** What an upgrade did, in words: the move, the state edit it made, and what the run waits for now. */
function upgradeEffect(run: RunRecord, result: UpgradeResult): string {
  const short = (v: string) => v.slice(0, 12);
  const notes = [
    result.checkpointId ? `its state fitted to the new schema (checkpoint ${result.checkpointId})` : undefined,
    run.waitingOn ? `its sub-workflow run ${run.waitingOn} stays on its own version (upgrade that run on its own)` : undefined,
    run.status === "failed" ? `it stays failed until a retry (pitwall retry ${run.id} NODE) runs it under the new version` : undefined,
  ].filter((note) => note !== undefined);
  return `run ${run.id} moved from version ${short(result.from)} to version ${short(result.to)}${notes.length > 0 ? `; ${notes.join("; ")}` : ""}`;
}
