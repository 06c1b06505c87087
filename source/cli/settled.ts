import type { RunRecord, Store } from "../../engine/index.js";
import { childRunState, runStatus } from "./format.js";

/** The sub-workflow run a settled run waits on, if it does (it paused for an operator). */
export async function heldBy(store: Store, run: RunRecord): Promise<RunRecord | undefined> {
  return run.waitingOn ? await store.getRun(run.waitingOn) : undefined;
}

/** A settled run for scripts: its status and why, and the sub-workflow run holding it. */
export function settledValue(run: RunRecord, held: RunRecord | undefined): Record<string, unknown> {
  return { runId: run.id, status: run.status, reason: run.reason, error: run.error, ...(held ? { waitingFor: { runId: held.id, status: held.status, reason: held.reason } } : {}) };
}

/** `run R paused (approval)`, `run R failed: ...`, `..., waiting for its sub-workflow run C, ...`. */
export function settledText(run: RunRecord, held: RunRecord | undefined): string {
  // Waiting for a signal, it says at which nodes, and how one is sent.
  const signal = run.status === "paused" && run.reason === "signal" ? ` at ${run.current.join(", ")} (pitwall signal ${run.id} NAME)` : "";
  return `run ${run.id} ${held ? run.status : runStatus(run)}${signal}${run.error ? `: ${run.error.message}` : ""}${held ? `, waiting for its sub-workflow run ${held.id}, ${childRunState(held)}` : ""}`;
}
