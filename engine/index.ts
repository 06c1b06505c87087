// The public API of pitwall's engine. The console and the CLI use nothing else.
export { createEngine, Engine, MAX_WAIT_MS, RunHandle, type EngineOptions, type StartOptions, type StateAt, type UpdateAt, type FollowOptions } from "./engine.js";
export { workflow, WorkflowBuilder, type NodeOptions, type EdgeOptions, type WorkflowOptions } from "./graph/builder.js";
export { END, DECISIONS, NODE_KINDS, nodeTargets, asList, type WorkflowDefinition, type NodeDefinition, type RetryPolicy } from "./graph/definition.js";
export type {
  ActionRegistry,
  CallContext,
  CallOptions,
  CompiledWorkflow,
  CompiledNode,
  InterruptAnswer,
  InterruptDeadlineOptions,
  InterruptOptions,
  NodeContext,
  NodeFunction,
  NodeResult,
  Router,
  StateOf,
} from "./graph/model.js";
export { actionRegistry, defineActions, extendRegistry, loadActionModules, type Actions } from "./graph/actions.js";
export { defineTool, type BoundTool, type Tool, type ToolContext } from "./llm/tools.js";
export {
  countTokens,
  describeCall,
  shownTask,
  emptyTokens,
  runCalls,
  type CallView,
  type ModelCallInput,
  type RecordedMessage,
  type RunTokens,
  type TokenCount,
  type ToolCallInput,
} from "./llm/call-record.js";
export { readRunCalls } from "./operator/run-calls.js";
export type { ChatMessage, ModelCallInfo, ModelProvider, ModelRequest, ModelResponse, ToolCall, ToolSpec, Usage } from "./llm/types.js";
export { OpenAICompatibleProvider, DEFAULT_BASE_URL, DEFAULT_MODEL, type OpenAICompatibleOptions } from "./llm/openai.js";
export { ScriptedProvider, type ModelScript } from "./llm/scripted.js";
export { modelFromEnv, MODEL_ENV } from "./llm/env.js";
export { ModelError, type ModelErrorCode } from "./llm/errors.js";
export { checkWorkflowText, loadWorkflowFile, loadWorkflowText, loadWorkflowValue } from "./graph/load.js";
export { parseJsonText } from "./graph/parse-json.js";
export { checkWorkflow, type CheckedChild, type CheckResult } from "./graph/check.js";
export { formatProblem, formatProblemIn, moreProblems, PROBLEM_CODES, type Problem, type ProblemCode } from "./graph/problems.js";
export { renderGraph, nodeOrder, edgesOf, describeNode, runsAtOnceText } from "./graph/render.js";
export { renderMermaid, renderDot } from "./graph/render-formats.js";
export { inlineSubWorkflows } from "./graph/inline.js";
export { workflowVersion, canonicalJson } from "./graph/canonical.js";
export {
  PitwallError,
  ValidationError,
  ConflictError,
  RunExistsError,
  StaleFenceError,
  NotFoundError,
  WaitTimeoutError,
  StoreError,
  WorkflowError,
  isPitwallError,
  errorMessage,
  fileProblem,
  type ErrorCode,
} from "./errors.js";
export { readTextFile, MAX_TEXT_FILE_BYTES } from "./text-file.js";
export { Operator, defaultActor, type OperatorOptions, type CommandOutcome, type SignalResult } from "./operator/operator.js";
export type { OwnerWaiting } from "./operator/owner-watch.js";
export type { SignalStart } from "./operator/signal-with-start.js";
export { currentStep, diffCheckpoints, findCheckpoint, followRun, readAllEvents, type CheckpointRef } from "./operator/reads.js";
export { storeWorkflow } from "./operator/workflows.js";
export { newestFirst, newestVersions } from "./operator/workflow-versions.js";
export type { UpgradeOptions, UpgradeOutcome, UpgradeResult } from "./operator/upgrade.js";
export { runUpgrades, type RunUpgrade } from "./operator/run-upgrades.js";
export type { ForkOptions, ForkResult } from "./operator/fork.js";
export type { ForkSignals } from "./operator/fork-signals.js";
export { pruneRuns, type PruneOptions, type PruneResult, type PrunedRun } from "./operator/prune.js";
export { deleteWithDescendants, runDescendants } from "./operator/descendants.js";
export { selectRuns, selects, type RunSelection } from "./operator/select-runs.js";
export { planBatch, runBatch, type BatchPlan, type BatchAction, type BatchResult } from "./operator/batch.js";
export { PAUSE_IS_FAILURE, INTERRUPT_IS_FAILURE } from "./operator/run-wait.js";
export { outlastingSubscription, type OutageListener } from "./operator/store-outage.js";
export { checkStart, startRun, storeVersion, type StartRunOptions, type WorkflowVersion } from "./operator/start.js";
export { checkTags, hasTags, type RunTags } from "./tags.js";
export { Schedules, checkScheduleFields, type ScheduleSpec } from "./operator/schedules.js";
export { BACKFILL_TAG, SCHEDULE_TAG, fireInstant, scheduleRunId, type Fired } from "./operator/schedule-fire.js";
export { MAX_BACKFILL_TIMES, type BackfillBound, type BackfillOptions, type BackfillTime } from "./operator/schedule-backfill.js";
export { checkCron, checkTimezone, nextCronTime, zonedInstant, zonedTime } from "./operator/cron-times.js";
export { MISSED_AFTER_MS } from "./worker/schedule-watch.js";
export { continueRun } from "./operator/continue-run.js";
export { FORK_ANSWER_MS, answerAbandonedForks } from "./operator/abandoned-forks.js";
export { LEFT_COMMAND_MS, answerLeftCommands } from "./operator/left-commands.js";
export { Worker, type StopOptions, type WorkerOptions, type WorkerStats } from "./worker/worker.js";
export type { WorkerNotice, WorkerNoticeKind } from "./worker/notices.js";
export { UNCLAIMED_MS, runsAtOnceOf, unclaimedWhy, type RunsAtOnce } from "./worker/unclaimed.js";
export { nodesRunOnRetry } from "./worker/commands.js";
export type { ExecutionEnd } from "./runtime/executor.js";
export { WorkflowRegistry } from "./worker/registry.js";
export { MemoryStore } from "./store/memory/memory-store.js";
export { SqliteStore, type SqliteStoreOptions } from "./store/sqlite/sqlite-store.js";
export type { BackupResult, Durability } from "./store/sqlite/store-types.js";
export { openStore, describeStoreUrl, storeUrlWarning, type OpenStoreOptions } from "./store/open.js";
export type { Store, Commit, Claim, ClaimOptions, RunFilter, EventQuery, TaskRange, Deadline, SubscribeOptions, NewRun } from "./store/store.js";
export { STORE_WRITES } from "./store/store.js";
export * from "./store/records.js";
export { secondsPast } from "./seconds-past.js";
export { checkDeletion, formatBytes, leaseRanOut, workerLive } from "./store/rules.js";
export { leftBehindText, runsLeftBehind, type LeftBehind } from "./worker/left-behind.js";
export { answerUnansweredCommands } from "./worker/command-sweep.js";
export type { EventPayloads, EventType } from "./runtime/events.js";
export { EVENT_TYPES } from "./runtime/events.js";
export { diffStates, summarizeDiff, type DiffEntry } from "./state/diff.js";
export { readState } from "./state/read.js";
export { StateValidator, checkJson } from "./state/schema.js";
export { MAX_DEPTH } from "./state/limits.js";
export { valueAtPath } from "./state/paths.js";
export { redact, isSecretKey, DEFAULT_SECRET_KEYS } from "./runtime/redact.js";
export { START } from "./runtime/planner.js";
export { SKIPPED } from "./runtime/step.js";
export { CHILD_FAILED } from "./actions/subgraph.js";
export { nextRetry, type RetryWait } from "./runtime/retry.js";
export { countTries, resumesText, triesOf, tryCountText, type TryCount } from "./runtime/tries.js";
export { checkSignalName } from "./runtime/signal-inbox.js";
export type { State, ChannelOp } from "./state/ops.js";
export { editPatch, isStaleEdit, type StatePatch } from "./state/patch.js";
export { DEFAULT_SNAPSHOT_POLICY, type SnapshotPolicy } from "./state/snapshot.js";
export { closest, didYouMean } from "./suggest.js";
