import { readFileSync, writeFileSync } from "node:fs";
import { hostname } from "node:os";
import { join } from "node:path";
import Database from "better-sqlite3";
import { describe, expect, it } from "vitest";
import { leaseRanOut, openStore, type RunRecord, type WorkerRecord } from "../../engine/index.js";
import { actionsOf, cliHarness, workflowOf, type Pitwall } from "../support/cli.js";
import { until } from "../support/engine.js";

/** A workflow of one node whose action the task-queue module does not have: its own module. */
function otherWorkflow(dir: string): { workflow: string; actions: string } {
  const actions = join(dir, "echo-actions.mjs");
  const workflow = join(dir, "echo.json");
  writeFileSync(actions, "export default { echo: () => ({ said: 'hi' }) };\n");
  writeFileSync(workflow, JSON.stringify({ name: "echo", state: { said: { type: "string", default: "" } }, start: "echo", nodes: { echo: { action: "echo" } } }));
  return { workflow, actions };
}

/** Moves a run's times back, as if it had been made (and ended) `ms` earlier. */
function age(file: string, runId: string, ms: number): void {
  const db = new Database(file);
  try {
    const doc = JSON.parse(db.prepare("SELECT doc FROM runs WHERE id = ?").pluck().get(runId) as string) as RunRecord;
    for (const key of ["createdAt", "updatedAt", "endedAt"] as const) if (doc[key] !== null) doc[key] = doc[key] - ms;
    db.prepare("UPDATE runs SET doc = ?, updated_at = ? WHERE id = ?").run(JSON.stringify(doc), doc.updatedAt, runId);
  } finally {
    db.close();
  }
}

/** The URL a worker started with --health said it serves on. */
async function healthUrl(worker: Pitwall): Promise<string> {
  return until(() => /health on (http:\/\/\S+) /.exec(worker.stderr)?.[1], 20_000, "the health endpoint");
}

async function get(url: string): Promise<{ status: number; body: string }> {
  const response = await fetch(url);
  return { status: response.status, body: await response.text() };
}

describe("a fleet of workers, as an operator sees it", () => {
  const cli = cliHarness();
  const storeFile = () => join(cli.dir, "pitwall.db");

  it("pitwall workers lists them; a second live worker with the same id is refused; --workflow limits one, and show says why a run it will not take waits", async () => {
    const echo = otherWorkflow(cli.dir);
    await cli.createStore();
    const worker = cli.spawn(["worker", "--id", "m3", "--workflow", "task-queue", "--actions", actionsOf("task-queue"), "--actions", echo.actions]);
    await until(async () => (await cli.json<(WorkerRecord & { live: boolean })[]>(["workers"])).some((w) => w.id === "m3" && w.live), 20_000, "m3's heartbeat");
    // ps and pkill -f "pitwall worker m3$" find this worker by its id.
    expect(readFileSync(`/proc/${worker.child.pid}/cmdline`, "utf8").replace(/\0/g, " ").trim()).toBe("pitwall worker m3");

    const twin = await cli.run(["worker", "--id", "m3", "--actions", echo.actions]);
    expect(twin.code).toBe(3);
    expect(twin.stderr).toMatch(new RegExp(`^pitwall worker: worker id m3 is in use by a live worker on host ${hostname()} \\(pid ${worker.child.pid}, started \\S+, last seen \\d+ s ago\\): two workers with one id would renew each other's leases; give this one another --id, or stop that one\\n$`));

    const left = await cli.json<{ runId: string }>(["start", echo.workflow]);
    const taken = await cli.json<{ runId: string; status: string }>(["start", workflowOf("task-queue"), "--wait"]);
    expect(taken.status).toBe("succeeded");
    age(storeFile(), left.runId, 60_000);
    const shown = await cli.run(["show", left.runId]);
    expect(shown.stdout).toMatch(
      new RegExp(`^waiting   for a worker: no worker has taken it: the one live worker cannot run workflow echo in version \\w+ \\(m3 runs only task-queue\\)$`, "m"),
    );
    expect((await cli.json<{ unclaimed: string }>(["show", left.runId])).unclaimed).toMatch(/^no worker has taken it: the one live worker cannot run workflow echo/);

    // Its next heartbeat lists the workflow it has run since.
    await until(async () => (await cli.run(["workers"])).stdout.includes("task-queue (only"), 20_000, "m3's workflows");
    const listed = await cli.run(["workers"]);
    expect(listed.stdout).toMatch(new RegExp(`^WORKER +STATE +HOST +PID +RUNS +STARTED +WORKFLOWS\\nm3 +live +${hostname()} +${worker.child.pid} +0/16 +\\d+s ago +task-queue \\(only: task-queue\\)\\n$`));
    worker.child.kill("SIGTERM");
    expect((await worker.exited).code).toBe(0);
    expect((await cli.run(["workers"])).stdout).toMatch(/^m3 +stopped \d+s ago /m);
    const gone = await cli.run(["show", left.runId]);
    expect(gone.stdout).toMatch(/^waiting   for a worker: no worker has taken it: no worker runs on this store \(the last, m3 on \S+, was seen \d+ s ago\)$/m);
  }, 90_000);

  it("start --wait says once the run has waited 30 s that no worker took it, and why: what the workers' heartbeats say is missing", async () => {
    const echo = otherWorkflow(cli.dir);
    await cli.createStore();
    cli.spawn(["worker", "--id", "m4", "--workflow", "task-queue", "--actions", actionsOf("task-queue"), "--actions", echo.actions]);
    await until(async () => (await cli.json<(WorkerRecord & { live: boolean })[]>(["workers"])).some((w) => w.id === "m4" && w.live), 20_000, "m4's heartbeat");
    const quick = await cli.run(["start", echo.workflow, "--id", "echo-1", "--wait", "--timeout", "2"]);
    expect(quick.code).toBe(4);
    expect(quick.stderr).not.toMatch(/no worker has taken it/);
    // Started again with its id (a retried start), a run queued 40 s ago has waited long enough:
    // it is said at once, as for a run this start made, 30 s after it.
    age(storeFile(), "echo-1", 40_000);
    const waited = await cli.run(["start", echo.workflow, "--id", "echo-1", "--wait", "--timeout", "3"]);
    expect(waited.code).toBe(4);
    expect(waited.stderr).toMatch(/^run echo-1: no worker has taken it: the one live worker cannot run workflow echo in version \w+ \(m4 runs only task-queue\)$/m);
  }, 90_000);

  it("--health serves /healthz, /readyz and /metrics; /readyz fails once the worker is stopping", async () => {
    const actions = join(cli.dir, "slow-actions.mjs");
    const workflow = join(cli.dir, "slow.json");
    writeFileSync(actions, "export default { slow: () => new Promise((resolve) => setTimeout(() => resolve({}), 3_000)) };\n");
    writeFileSync(workflow, JSON.stringify({ name: "slow-health", state: {}, start: "s", nodes: { s: { action: "slow" } } }));
    const worker = cli.spawn(["worker", "--id", "h1", "--health", "0", "--workflow", "slow-health,task-queue", "--actions", actions, "--actions", actionsOf("task-queue")]);
    const url = await healthUrl(worker);
    expect(url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    expect(await get(`${url}/healthz`)).toEqual({ status: 200, body: expect.stringMatching(/^ok: event loop turning/) });
    await until(async () => (await get(`${url}/readyz`)).status === 200, 10_000, "readiness");
    expect((await get(`${url}/nope`)).status).toBe(404);

    const done = await cli.json<{ status: string }>(["start", workflowOf("task-queue"), "--wait"]);
    expect(done.status).toBe("succeeded");
    await until(async () => (await get(`${url}/metrics`)).body.includes('pitwall_worker_executions_ended_total{worker="h1",status="succeeded"} 1'), 10_000, "the metric");
    const metrics = (await get(`${url}/metrics`)).body;
    expect(metrics).toContain("# TYPE pitwall_worker_runs_claimed_total counter\npitwall_worker_runs_claimed_total{worker=\"h1\"} 1\n");
    expect(metrics).toContain('pitwall_worker_runs_running{worker="h1"} 0\n');
    expect(metrics).toContain('pitwall_worker_store_failures_total{worker="h1"} 0\n');
    expect(metrics).toMatch(/^pitwall_worker_store_last_answer_age_seconds\{worker="h1"\} \d+(\.\d+)?$/m);

    await cli.json(["start", workflow]);
    await until(async () => (await get(`${url}/metrics`)).body.includes('pitwall_worker_nodes_running{worker="h1"} 1'), 10_000, "the node to run");
    worker.child.kill("SIGTERM");
    await until(() => worker.stderr.includes("draining:"), 10_000, "the drain");
    expect(await get(`${url}/readyz`)).toEqual({ status: 503, body: "stopping: claims no more runs\n" });
    expect((await get(`${url}/healthz`)).status).toBe(200);
    expect((await worker.exited).code).toBe(0);
  }, 90_000);

  it("--json logs every line as JSON with its time, level, worker and kind; a take-over is logged by the worker that takes over", async () => {
    const { runId } = await cli.json<{ runId: string }>(["start", workflowOf("task-queue")]);
    const store = await openStore(`sqlite:${storeFile()}`);
    try {
      await store.claimRun({ owner: "vanished", leaseMs: 1, runId });
    } finally {
      await store.close();
    }
    const worker = cli.spawn(["worker", "--id", "j1", "--json", "--actions", actionsOf("task-queue")]);
    await worker.waitForLine((l) => l.includes('"kind":"run-ended"') && l.includes(runId), 30_000);
    worker.child.kill("SIGTERM");
    const { code, stdout, stderr } = await worker.exited;
    expect(code).toBe(0);
    expect(stderr).toBe("");
    const lines = stdout.trim().split("\n").map((l) => JSON.parse(l) as Record<string, unknown>);
    for (const line of lines) {
      expect(line).toMatchObject({ time: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/), level: expect.stringMatching(/^(info|warn|error)$/), worker: "j1", kind: expect.any(String), message: expect.any(String) });
    }
    expect(lines.find((l) => l.kind === "took-over")).toMatchObject({ level: "warn", runId, from: "vanished", message: `took over run ${runId} from worker vanished (lease expired)` });
    expect(lines.find((l) => l.kind === "run-ended")).toMatchObject({ level: "info", runId, status: "succeeded", why: expect.stringMatching(/^after \d+ steps$/) });
    expect(lines.map((l) => l.kind)).toEqual(expect.arrayContaining(["started", "took-over", "run-ended", "stopping", "stopped"]));
  }, 60_000);

  it("a worker stopped past its lease (SIGSTOP) and resumed says, as a warning, who took its run over", async () => {
    const actions = join(cli.dir, "held-actions.mjs");
    const workflow = join(cli.dir, "held.json");
    writeFileSync(actions, "export default { hold: (_s, ctx) => new Promise((resolve) => { const t = setTimeout(resolve, 60_000, {}); ctx.signal.addEventListener('abort', () => (clearTimeout(t), resolve({}))); }) };\n");
    writeFileSync(workflow, JSON.stringify({ name: "held", state: {}, start: "h", nodes: { h: { action: "hold" } } }));
    await cli.createStore();
    const worker = cli.spawn(["worker", "--id", "s1", "--lease", "1", "--json", "--actions", actions]);
    const { runId } = await cli.json<{ runId: string }>(["start", workflow]);
    const store = await openStore(`sqlite:${storeFile()}`);
    try {
      await until(async () => (await store.readEvents({ runId, types: ["task.started"] })).length > 0, 20_000, "the node to start");
      worker.child.kill("SIGSTOP");
      await until(async () => leaseRanOut((await store.getRun(runId))!, Date.now()), 10_000, "the lease to run out");
      await until(() => store.claimRun({ owner: "s2", leaseMs: 60_000, runId }), 10_000, "the run to be taken over");
    } finally {
      worker.child.kill("SIGCONT");
      await store.close();
    }
    const line = JSON.parse(await worker.waitForLine((l) => l.includes('"kind":"run-ended"'), 20_000)) as Record<string, unknown>;
    expect(line).toMatchObject({
      level: "warn",
      runId,
      leaseLost: true,
      // And, when its lease timer saw the stop (longer than a lease since it last fired), that.
      message: expect.stringMatching(new RegExp(`^run ${runId}: lease lost: run ${runId} was taken over by worker s2, which is running it now; this worker's attempt was discarded(\\. This process's event loop was held for \\d+\\.\\d s .*)?$`)),
    });
  }, 60_000);

  it("--retain deletes the runs that ended longer ago than that, and says so", async () => {
    const { runId: old } = await cli.json<{ runId: string }>(["start", workflowOf("task-queue")]);
    expect((await cli.run(["worker", "--once", "--actions", actionsOf("task-queue")])).code).toBe(0);
    const { runId: recent } = await cli.json<{ runId: string }>(["start", workflowOf("task-queue")]);
    expect((await cli.run(["worker", "--once", "--actions", actionsOf("task-queue")])).code).toBe(0);
    age(storeFile(), old, 2 * 60_000);
    const ended = await cli.json<RunRecord[]>(["runs", "--status", "succeeded"]);
    const before = ended.length;
    const worker = cli.spawn(["worker", "--retain", "1m", "--json", "--actions", actionsOf("task-queue")]);
    const line = JSON.parse(await worker.waitForLine((l) => l.includes('"kind":"pruned"'), 30_000)) as Record<string, unknown>;
    worker.child.kill("SIGTERM");
    await worker.exited;
    expect(line).toMatchObject({ level: "info", message: expect.stringMatching(/^retention: deleted \d+ runs? that ended more than 1m ago$/) });
    const after = await cli.json<RunRecord[]>(["runs", "--status", "succeeded"]);
    expect(after.map((r) => r.id)).toContain(recent);
    expect(after.map((r) => r.id)).not.toContain(old);
    expect(after.length).toBeLessThan(before);
    expect((await cli.run(["worker", "--retain", "30"])).stderr).toBe('pitwall worker: --retain takes a length of time (30d, 12h, 90m), not "30"\n');
  }, 90_000);
});
