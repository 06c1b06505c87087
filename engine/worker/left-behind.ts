import { leaseRanOut } from "../store/rules.js";
import type { Store } from "../store/store.js";
import { repeatUntil } from "./periodic.js";
import type { WorkflowRegistry } from "./registry.js";

/** Runs of one workflow version that a worker cannot take, and why (a missing action, say). */
export interface LeftBehind {
  workflow: string;
  version: string;
  /** Queued, or running with the lease of their gone worker run out. */
  status: "queued" | "orphaned";
  count: number;
  why: string;
  /**
   * Orphaned runs of a workflow with `limits.runsAtOnce`: the limit. They count as running, so
   * they hold that many of its places, and its queued runs wait for them too.
   */
  runsAtOnce?: number;
}

/**
 * The runs waiting for a worker (queued ones, and running ones whose worker is gone) that the
 * workflows of `registry` cannot run, by version: without a word they would wait for ever.
 */
export async function runsLeftBehind(store: Store, registry: WorkflowRegistry): Promise<LeftBehind[]> {
  const now = Date.now();
  const { runs } = await store.listRuns({ status: ["queued", "running"], limit: 1000 });
  const waiting = runs.filter((r) => r.status === "queued" || leaseRanOut(r, now));
  if (waiting.length === 0) return [];
  await registry.runnableVersions(0);
  const left = new Map<string, LeftBehind>();
  for (const run of waiting) {
    const why = registry.whyUnusable(run.version);
    if (why === undefined) continue;
    const status = run.status === "queued" ? "queued" : "orphaned";
    const key = leftBehindKey({ version: run.version, status });
    let entry = left.get(key);
    if (!entry) {
      const limit = status === "orphaned" ? await registry.workflowRunsAtOnce(run.workflow) : undefined;
      entry = { workflow: run.workflow, version: run.version, status, count: 0, why, ...(limit !== undefined ? { runsAtOnce: limit } : {}) };
      left.set(key, entry);
    }
    entry.count++;
  }
  return [...left.values()];
}

/** What is said once per version and status. */
export function leftBehindKey(entry: Pick<LeftBehind, "version" | "status">): string {
  return `${entry.version} ${entry.status}`;
}

/** When a running worker first looks for runs it cannot take, then how often. */
const FIRST_MS = 2_000;
const EVERY_MS = 30_000;

/**
 * Looks for the runs `registry` cannot run soon after a worker starts and every 30 s until the
 * signal aborts, and reports each version (and status) once.
 */
export function watchLeftBehind(store: Store, registry: WorkflowRegistry, signal: AbortSignal, report: (left: LeftBehind) => void): void {
  const told = new Set<string>();
  repeatUntil(signal, FIRST_MS, EVERY_MS, async () => {
    try {
      for (const left of await runsLeftBehind(store, registry)) {
        const key = leftBehindKey(left);
        if (told.has(key) || signal.aborted) continue;
        told.add(key);
        report(left);
      }
    } catch {
      // The claim loop reports a failing store; this look is only a courtesy.
    }
  });
}

export function leftBehindText({ workflow, version, status, count, why, runsAtOnce }: LeftBehind): string {
  const runs = `${count} ${status === "queued" ? "queued run" : "running run"}${count === 1 ? "" : "s"}`;
  const what = status === "queued" ? runs : `${runs} whose worker is gone (lease ran out)`;
  const places = runsAtOnce === undefined ? "" : `; ${count === 1 ? "it holds a place" : "they hold places"} under the workflow's limits.runsAtOnce (${runsAtOnce}), which its queued runs wait for too`;
  return `${what} of ${workflow} (version ${version}) left for a worker that can run ${count === 1 ? "it" : "them"}: ${why}${places}`;
}
