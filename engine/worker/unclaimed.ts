import type { WorkflowDefinition } from "../graph/definition.js";
import { latestVersion } from "../operator/workflow-versions.js";
import type { RunRecord, WorkerRecord } from "../store/records.js";
import { workerLive } from "../store/rules.js";
import type { Store } from "../store/store.js";

/** A run queued longer than this, for nothing but a worker, is said to wait for one. */
export const UNCLAIMED_MS = 30_000;

/** A workflow's `limits.runsAtOnce` (its newest stored version's, as workers claim by it) and how many of its runs are running. */
export interface RunsAtOnce {
  limit: number;
  running: number;
  /**
   * The running runs whose lease has run out (their worker stopped renewing it): they hold their
   * places until a worker takes them over. `runId` names the one that has held it longest.
   */
  lapsed?: { count: number; runId: string };
}

/**
 * Why a queued run has waited for a worker: at once when its workflow has as many runs running
 * as its `limits.runsAtOnce` lets run (`runsAtOnce`, from `runsAtOnceOf`) — unless, queued that
 * long, no live worker could take it once a place is free, which it says instead — else once it has waited
 * longer than `UNCLAIMED_MS` for nothing else (not a timer, a retry's backoff or a child run);
 * undefined before, or for a run that waits for something else. With the workers' heartbeats
 * (`Store.listWorkers`) it says what is missing: no live worker at all, none that runs its
 * workflow and version (limited to other workflows, another version of it, or its actions not
 * loaded), or all of those busy. What the console's runs list, `pitwall show`, `pitwall runs` and
 * the like say, from this one rule.
 */
export function unclaimedWhy(
  run: Pick<RunRecord, "status" | "waitingOn" | "wakeAt" | "updatedAt" | "workflow" | "version">,
  now: number,
  workers?: readonly WorkerRecord[],
  runsAtOnce?: RunsAtOnce,
): string | undefined {
  if (run.status !== "queued" || run.waitingOn !== null || (run.wakeAt !== null && run.wakeAt > now)) return undefined;
  const lapsed = runsAtOnce?.lapsed ? `, ${runsAtOnce.lapsed.count} with a lease run out` : "";
  const limited = runsAtOnce && runsAtOnce.running >= runsAtOnce.limit ? `limit: ${runsAtOnce.limit} of ${run.workflow} running${lapsed}` : undefined;
  if (now - run.updatedAt <= UNCLAIMED_MS) return limited;
  const taken = "no worker has taken it";
  if (!workers) return limited ?? taken;
  // No worker that could take it once a place is free comes first: a free place would not help.
  const live = workers.filter((w) => workerLive(w, now));
  if (live.length === 0) {
    const last = workers[0];
    return `${taken}: no worker runs on this store${last ? ` (the last, ${last.id} on ${last.host}, was seen ${ago(now - last.lastSeen)} ago)` : " (none has written a heartbeat to it)"}`;
  }
  const able = live.filter((w) => w.workflows.some((v) => v.version === run.version));
  if (able.length === 0) {
    const why = live.slice(0, 3).map((w) => `${w.id} ${cannot(w, run)}`);
    const workflow = `workflow ${run.workflow} in version ${run.version.slice(0, 12)}`;
    const none = live.length === 1 ? "the one live worker cannot" : `none of the ${live.length} live workers can`;
    return `${taken}: ${none} run ${workflow} (${why.join("; ")}${live.length > 3 ? "; …" : ""})`;
  }
  if (limited) return limited;
  if (able.every((w) => w.running >= w.concurrency)) {
    return `${taken}: the ${able.length} live worker${able.length === 1 ? " that can run it is" : "s that can run it are"} busy (${able.map((w) => `${w.id} ${w.running} of ${w.concurrency} runs`).join(", ")})`;
  }
  return taken;
}

/**
 * The `limits.runsAtOnce` of each workflow named that has one (its newest stored version's, the
 * rule workers claim by), with how many of its runs are running (every version). `definitionOf`
 * reads a version's definition (a reader that keeps them saves reading them again).
 */
export async function runsAtOnceOf(
  store: Store,
  workflows: Iterable<string>,
  definitionOf: (version: string) => Promise<Pick<WorkflowDefinition, "limits"> | undefined> = async (version) => (await store.getWorkflow(version))?.definition,
  now = Date.now(),
): Promise<Map<string, RunsAtOnce>> {
  const found = new Map<string, RunsAtOnce>();
  const names = new Set(workflows);
  if (names.size === 0) return found;
  const stored = await store.listWorkflows();
  for (const name of names) {
    const newest = latestVersion(stored, name);
    const limit = newest === undefined ? undefined : (await definitionOf(newest))?.limits.runsAtOnce;
    if (limit === undefined) continue;
    let running = 0;
    let lapsed: RunRecord | undefined;
    let lapsedCount = 0;
    let cursor: string | undefined;
    do {
      const page = await store.listRuns({ status: "running", workflow: name, limit: 500, ...(cursor ? { cursor } : {}) });
      running += page.runs.length;
      for (const run of page.runs) {
        if (run.leaseUntil === null || run.leaseUntil >= now) continue;
        lapsedCount++;
        if (!lapsed || run.leaseUntil < lapsed.leaseUntil!) lapsed = run;
      }
      cursor = page.nextCursor;
    } while (cursor);
    found.set(name, { limit, running, ...(lapsed ? { lapsed: { count: lapsedCount, runId: lapsed.id } } : {}) });
  }
  return found;
}

/** Why a live worker cannot run a run's version, from its heartbeat. */
function cannot(worker: WorkerRecord, run: Pick<RunRecord, "workflow" | "version">): string {
  if (worker.only && !worker.only.includes(run.workflow)) return `runs only ${worker.only.join(", ")}`;
  const versions = worker.workflows.filter((w) => w.name === run.workflow).map((w) => w.version.slice(0, 12));
  if (versions.length > 0) return `has it only in version ${versions.join(", ")}`;
  return "lacks its actions (its modules do not export them all)";
}

function ago(ms: number): string {
  const s = Math.max(0, Math.round(ms / 1000));
  if (s < 60) return `${s} s`;
  if (s < 3600) return `${Math.floor(s / 60)} min`;
  return `${Math.floor(s / 3600)} h`;
}
