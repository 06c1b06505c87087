import { spawn, type ChildProcess } from "node:child_process";
import { fileURLToPath } from "node:url";
import { FANOUT_NODES } from "./fanout-workflow.js";
import { readState, type EventRecord, type Store } from "../../engine/index.js";

const ROOT = fileURLToPath(new URL("../..", import.meta.url));
const SCRIPT = fileURLToPath(new URL("./fleet-worker.ts", import.meta.url));
const FANOUT = fileURLToPath(new URL("./fanout-workflow.ts", import.meta.url));

export interface FleetOptions {
  leaseMs: number;
  /** A module whose default export is the workflow the workers run (default: the fan-out fixture). */
  workflowModule?: string;
  /** Runs each worker executes at once (default: the Worker's). */
  concurrency?: number;
}

export interface FleetWorker {
  id: string;
  process: ChildProcess;
  /** The JSON lines it printed: `{ ready }`, then `{ runId, status, why }` per run it stopped executing. */
  lines: Record<string, unknown>[];
  stderr: string;
}

/** Worker processes (`test/support/fleet-worker.ts`) sharing one store. */
export class Fleet {
  readonly workers: FleetWorker[] = [];

  static async start(url: string, count: number, options: FleetOptions): Promise<Fleet> {
    const fleet = new Fleet();
    for (let i = 1; i <= count; i++) fleet.workers.push(launch(url, `fleet-${i}`, options));
    await Promise.all(fleet.workers.map((w) => waitFor(() => w.lines.some((l) => l.ready === w.id), 30_000, `worker ${w.id} to start: ${w.stderr}`)));
    return fleet;
  }

  worker(id: string): FleetWorker {
    const found = this.workers.find((w) => w.id === id);
    if (!found) throw new Error(`no worker ${id}`);
    return found;
  }

  /** Stops every worker that still runs (SIGTERM, then SIGKILL after 10 s). */
  async stop(): Promise<void> {
    await Promise.all(
      this.workers.map(async ({ process: child }) => {
        if (child.exitCode !== null || child.signalCode !== null) return;
        const exited = new Promise((resolve) => child.once("exit", resolve));
        child.kill("SIGCONT");
        child.kill("SIGTERM");
        const timer = setTimeout(() => child.kill("SIGKILL"), 10_000);
        await exited;
        clearTimeout(timer);
      }),
    );
  }
}

function launch(url: string, id: string, options: FleetOptions): FleetWorker {
  const args = [SCRIPT, url, id, options.workflowModule ?? FANOUT, String(options.leaseMs), ...(options.concurrency ? [String(options.concurrency)] : [])];
  const child = spawn(process.execPath, ["--import", "tsx", ...args], { cwd: ROOT, stdio: ["ignore", "pipe", "pipe"] });
  const worker: FleetWorker = { id, process: child, lines: [], stderr: "" };
  let buffered = "";
  child.stdout!.on("data", (chunk: Buffer) => {
    buffered += chunk.toString();
    const lines = buffered.split("\n");
    buffered = lines.pop()!;
    for (const line of lines) if (line.trim()) worker.lines.push(JSON.parse(line) as Record<string, unknown>);
  });
  child.stderr!.on("data", (chunk: Buffer) => (worker.stderr += chunk.toString()));
  return worker;
}

export async function waitFor(done: () => boolean | Promise<boolean>, timeoutMs: number, what: string): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    try {
      if (await done()) return;
    } catch {
      // The store may be restarting; look again.
    }
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

/** Waits until every run has ended or paused (paused runs are reported by `checkRuns`). */
export function waitUntilSettled(store: Store, total: number, timeoutMs = 90_000): Promise<void> {
  return waitFor(
    async () => {
      const counts = await store.countRuns();
      return counts.succeeded + counts.failed + counts.canceled + counts.paused === total;
    },
    timeoutMs,
    `${total} runs to settle`,
  );
}

/** The worker owning each running run now. */
export async function owners(store: Store): Promise<Map<string, string[]>> {
  const byOwner = new Map<string, string[]>();
  for (const run of (await store.listRuns({ status: "running", limit: 1000 })).runs) {
    if (run.owner) byOwner.set(run.owner, [...(byOwner.get(run.owner) ?? []), run.id]);
  }
  return byOwner;
}

/** The worker that owns the most runs right now. */
export async function busiest(store: Store): Promise<string> {
  const byOwner = await owners(store);
  return [...byOwner.entries()].sort((a, b) => b[1].length - a[1].length)[0]![0];
}

/**
 * What went wrong with the fixture's runs, as readable lines (none when all is well): every run
 * succeeded, its events are numbered 1..n without gaps, each task has exactly one recorded
 * success, every node's write is in the state exactly once, and no worker wrote to a run after
 * another worker had claimed it.
 */
export async function checkRuns(store: Store, runIds: readonly string[]): Promise<string[]> {
  const problems: string[] = [];
  for (const runId of runIds) {
    const run = await store.getRun(runId);
    if (run?.status !== "succeeded") {
      problems.push(`${runId} is ${run?.status} ${run?.reason ?? ""} ${run?.error?.message ?? ""}`);
      continue;
    }
    const events = await store.readEvents({ runId });
    const numbers = events.map((e) => e.runSeq);
    if (numbers.join() !== events.map((_, i) => i + 1).join() || numbers.length !== run.eventCount) {
      problems.push(`${runId}: event numbers ${numbers.join(",")} (eventCount ${run.eventCount})`);
    }
    const successes = new Map<string, number>();
    for (const e of events) if (e.type === "task.succeeded") successes.set(e.taskId!, (successes.get(e.taskId!) ?? 0) + 1);
    for (const task of await store.listTasks(runId)) {
      const recorded = task.attempts.filter((a) => a.outcome === "succeeded").length;
      if (task.status !== "succeeded" || recorded !== 1 || successes.get(task.id) !== 1) {
        problems.push(`${task.id}: ${task.status}, ${recorded} succeeded attempts, ${successes.get(task.id) ?? 0} task.succeeded events`);
      }
    }
    const visits = ((await readState(store, runId, run.headN)) as { visits: string[] }).visits;
    if ([...visits].sort().join() !== FANOUT_NODES.join()) problems.push(`${runId}: visits ${visits.join(",")}`);
    problems.push(...staleWrites(events));
  }
  return problems;
}

/** Events written by a worker that was no longer the run's owner (a later claim fenced it out). */
export function staleWrites(events: readonly EventRecord[]): string[] {
  let owner: string | undefined;
  const out: string[] = [];
  for (const e of events) {
    if (e.type === "run.claimed") owner = `worker:${(e.payload as { worker: string }).worker}`;
    else if (e.actor.startsWith("worker:") && e.actor !== owner) out.push(`${e.runId} #${e.runSeq} ${e.type} by ${e.actor} while ${owner} owned it`);
  }
  return out;
}

/** Runs that another worker took over from `worker` (a `run.claimed` with `recovered` after its claim). */
export function takenOverFrom(worker: string, events: readonly EventRecord[]): boolean {
  let owner: string | undefined;
  for (const e of events) {
    if (e.type !== "run.claimed") continue;
    const payload = e.payload as { worker: string; recovered: boolean };
    if (payload.recovered && owner === worker && payload.worker !== worker) return true;
    owner = payload.worker;
  }
  return false;
}
