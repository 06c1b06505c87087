import { ConflictError, RunExistsError, ValidationError } from "../errors.js";
import { canonicalJson } from "../graph/canonical.js";
import type { WorkflowDefinition } from "../graph/definition.js";
import type { CompiledWorkflow } from "../graph/model.js";
import { RUN_ID_PATTERN, newId } from "../ids.js";
import { newRun } from "../runtime/new-run.js";
import type { State } from "../state/ops.js";
import { readState } from "../state/read.js";
import { StateValidator } from "../state/schema.js";
import type { RunRecord } from "../store/records.js";
import type { Store } from "../store/store.js";
import { storeWorkflow } from "./workflows.js";
import { checkDeadlineSeconds } from "../runtime/deadlines.js";
import { checkTags } from "../tags.js";

/** A checked workflow definition, without the code of its actions (as `checkWorkflowText` gives it). */
export interface WorkflowVersion {
  definition: WorkflowDefinition;
  version: string;
  /** Its sub-workflows' definitions, stored with it. */
  children?: ReadonlyMap<string, { definition: WorkflowDefinition; version: string }>;
}

export interface StartRunOptions {
  id?: string;
  actor: string;
  interruptBefore?: string[] | null;
  interruptAfter?: string[] | null;
  /** Names to find the run by (`runs --tag`), checked by `checkTags`. */
  tags?: Record<string, string>;
  /** Canceled unless it ended this long after it was made; default the workflow's `limits.deadlineSeconds`. */
  deadlineSeconds?: number;
  /**
   * The signal this start is made to deliver (signal-with-start): its run's `run.created` says
   * so, and tells this start's run from another's made by the same actor with the same input at
   * the same moment, which a Redis store takes for this one sent again.
   */
  signal?: { id: string; name: string };
  /** The schedule starting it, and the time it starts it for (recorded in its `run.created`). */
  schedule?: { id: string; at: number; backfill?: boolean };
}

/** Stores a workflow's version and its sub-workflows' (idempotent), compiled or as checked from JSON. */
export async function storeVersion(store: Store, workflow: CompiledWorkflow | WorkflowVersion): Promise<void> {
  if ("initialState" in workflow) return storeWorkflow(store, workflow);
  for (const w of [workflow, ...(workflow.children?.values() ?? [])]) {
    await store.putWorkflow({ version: w.version, name: w.definition.name, definition: w.definition, createdAt: Date.now() });
  }
}

/**
 * What `startRun` checks before it writes anything — the run id, the nodes to interrupt at, the
 * input against the state schema — with the starting state it makes of the input. A command that
 * would create a store file to start a run checks first, so that a refused start leaves nothing.
 */
export function checkStart(workflow: CompiledWorkflow | WorkflowVersion, input: unknown, options: Omit<StartRunOptions, "actor">): State {
  if (options.id !== undefined && !RUN_ID_PATTERN.test(options.id)) {
    throw new ValidationError(`run id ${JSON.stringify(options.id)} may only use letters, digits, '.', '_' and '-' (at most 128)`);
  }
  checkInterruptNodes(workflow.definition, options);
  if (options.tags !== undefined) checkTags(options.tags);
  if (options.deadlineSeconds !== undefined) checkDeadlineSeconds(options.deadlineSeconds);
  return "initialState" in workflow ? workflow.initialState(input) : new StateValidator(workflow.definition.state).parseInput(input);
}

/** Refuses interrupt lists naming a node the workflow does not have. */
export function checkInterruptNodes(definition: WorkflowDefinition, lists: Pick<StartRunOptions, "interruptBefore" | "interruptAfter">): void {
  for (const node of [...(lists.interruptBefore ?? []), ...(lists.interruptAfter ?? [])]) {
    if (!Object.hasOwn(definition.nodes, node)) throw new ValidationError(`workflow ${definition.name} has no node "${node}" to interrupt at`);
  }
}

/**
 * Stores a workflow's version (and its sub-workflows') and creates a queued run of it, after
 * validating the input against its state schema. The run is executed by whichever worker can:
 * a JSON workflow needs no code here, only in the workers that load its actions.
 */
export async function startRun(store: Store, workflow: CompiledWorkflow | WorkflowVersion, input: unknown, options: StartRunOptions): Promise<string> {
  const id = options.id ?? newId("run");
  const state = checkStart(workflow, input, { ...options, id });
  await storeVersion(store, workflow);
  const interruptBefore = options.interruptBefore ?? null;
  const interruptAfter = options.interruptAfter ?? null;
  const start = { workflow: workflow.definition.name, state, interruptBefore, interruptAfter };
  let existing: RunRecord | undefined;
  // A start under a given id says which start it is: two alike in one millisecond are one write to Redis.
  const request = options.id !== undefined && !options.signal ? newId("start", 8) : undefined;
  try {
    const { events } = await store.createRun(
      newRun({
        id,
        workflow: { name: start.workflow, version: workflow.version },
        state,
        actor: options.actor,
        interruptBefore,
        interruptAfter,
        next: [workflow.definition.start],
        ...(options.tags ? { tags: options.tags } : {}),
        deadlineSeconds: options.deadlineSeconds ?? workflow.definition.limits.deadlineSeconds,
        ...(options.signal ? { signal: options.signal } : {}),
        ...(request ? { request } : {}),
        ...(options.schedule ? { schedule: options.schedule } : {}),
      }),
    );
    // No events: the store took this as a write sent again after its reply was lost. Redis knows
    // that by the input checkpoint alone, which another start with this id and input has too when
    // made in the same millisecond: a run that is not this start's is one that existed.
    const run = events.length === 0 && options.id !== undefined ? await store.getRun(id) : undefined;
    if (run && (run.version !== workflow.version || (await howItDiffers(store, run, start)) !== undefined || !(await madeFor(store, run, options.signal?.id ?? request)))) existing = run;
  } catch (error) {
    existing = error instanceof ConflictError && options.id !== undefined ? await store.getRun(id) : undefined;
    if (!existing) throw error;
  }
  if (existing) {
    const differs = await howItDiffers(store, existing, start);
    throw new RunExistsError(existing, differs === undefined, `run ${id} already exists${differs ? `, ${differs}: give another id` : ": started before with this workflow and input"}`);
  }
  return id;
}

/** Whether `run` was made by this start: its `run.created` names the start's request, or the signal it delivers (any run is, when it names neither). */
async function madeFor(store: Store, run: RunRecord, request: string | undefined): Promise<boolean> {
  if (!request) return true;
  const [created] = await store.readEvents({ runId: run.id, types: ["run.created"], limit: 1 });
  const payload = created?.payload as { signal?: { id: string }; request?: string } | undefined;
  return (payload?.signal?.id ?? payload?.request) === request;
}

/**
 * How a run differs from a start that would have made it: of another workflow, from another
 * input (its checkpoint 0), or with other interrupt lists. Undefined when it is the same start,
 * retried. The version is not compared: a run keeps the version it started on, and a retry after
 * the workflow's file was fixed is still the same request (the caller is told the run's version).
 */
async function howItDiffers(
  store: Store,
  run: RunRecord,
  start: { workflow: string; state: State; interruptBefore: string[] | null; interruptAfter: string[] | null },
): Promise<string | undefined> {
  if (run.workflow !== start.workflow) return `a run of workflow ${run.workflow}, not ${start.workflow}`;
  if (run.parentRunId !== null || run.forkOf !== null) return `a ${run.forkOf ? `fork of run ${run.forkOf.runId}` : `sub-workflow run of run ${run.parentRunId}`}, not a start`;
  const lists = (list: string[] | null) => canonicalJson(list && list.length > 0 ? list : null);
  if (lists(run.interruptBefore) !== lists(start.interruptBefore) || lists(run.interruptAfter) !== lists(start.interruptAfter)) return "started with other interrupt lists";
  if (canonicalJson(await readState(store, run.id, 0)) !== canonicalJson(start.state)) return "started from another input";
  return undefined;
}
