import type { Server, createServer } from "node:http";
import { RUN_STATUSES, secondsPast, type Worker } from "../../engine/index.js";
import { UsageError } from "../cli/errors.js";

/** Where `--health` listens: loopback unless a host is given. */
export interface HealthAddress {
  host: string;
  port: number;
}

/** `9090`, `0.0.0.0:9090`, `[::]:9090`: a port on loopback, or a host and port. */
export function parseHealthAddress(text: string): HealthAddress {
  const match = /^(?:(\[[0-9a-fA-F:.]+\]|[\w.-]+):)?(\d{1,5})$/.exec(text.trim());
  const port = match ? Number(match[2]) : NaN;
  if (!match || port > 65_535) throw new UsageError(`--health ${JSON.stringify(text)}: give a port (9090, on loopback) or a host and port (0.0.0.0:9090, [::]:9090)`);
  return { host: match[1]?.replace(/^\[|\]$/g, "") ?? "127.0.0.1", port };
}

/** How often the event loop's turning is measured, and how late a turn may be before `/healthz` fails. */
const TICK_MS = 500;

/**
 * The worker's health endpoints, for Kubernetes probes and Prometheus (plain `node:http`):
 * `/healthz` — the process is alive and its event loop turns (503 when a turn came more than a
 *   lease late in the last minute: a node computing without awaiting holds the worker, which
 *   then loses its leases);
 * `/readyz` — the store answered within the last lease and the worker is not stopping;
 * `/metrics` — counters and gauges in the Prometheus text format.
 */
export class HealthServer {
  private readonly server: Server;
  private lastTick = Date.now();
  private lateMs: { at: number; ms: number }[] = [];
  private readonly ticker: NodeJS.Timeout;

  private constructor(
    private readonly worker: Worker,
    private readonly leaseMs: number,
    private readonly concurrency: number,
    serve: typeof createServer,
  ) {
    this.ticker = setInterval(() => this.tick(), TICK_MS);
    this.ticker.unref();
    this.server = serve((request, response) => {
      const path = (request.url ?? "/").split("?")[0];
      const [status, body, type] =
        path === "/healthz" ? this.healthz() : path === "/readyz" ? this.readyz() : path === "/metrics" ? [200, this.metrics(), "text/plain; version=0.0.4; charset=utf-8"] : [404, "not found: try /healthz, /readyz or /metrics\n"];
      response.writeHead(status, { "content-type": type ?? "text/plain; charset=utf-8", "cache-control": "no-store" });
      response.end(request.method === "HEAD" ? undefined : body);
    });
  }

  /** Listens on the address; the port it got (for port 0) is `url`'s. */
  static async listen(worker: Worker, address: HealthAddress, leaseMs: number, concurrency: number): Promise<HealthServer> {
    // node:http is loaded by the one command that serves: every other command starts without it.
    const { createServer } = await import("node:http");
    const health = new HealthServer(worker, leaseMs, concurrency, createServer);
    await new Promise<void>((resolve, reject) => {
      health.server.once("error", (error: NodeJS.ErrnoException) => {
        clearInterval(health.ticker);
        reject(new UsageError(`--health ${address.host}:${address.port}: cannot listen there (${error.code ?? error.message})`));
      });
      health.server.listen(address.port, address.host, () => resolve());
    });
    return health;
  }

  get url(): string {
    const address = this.server.address();
    if (!address || typeof address === "string") return String(address);
    return `http://${address.family === "IPv6" ? `[${address.address}]` : address.address}:${address.port}`;
  }

  async close(): Promise<void> {
    clearInterval(this.ticker);
    this.server.closeAllConnections();
    await new Promise((resolve) => this.server.close(resolve));
  }

  private tick(): void {
    const now = Date.now();
    const late = now - this.lastTick - TICK_MS;
    this.lastTick = now;
    this.lateMs = [...this.lateMs.filter((l) => now - l.at < 60_000), ...(late > 0 ? [{ at: now, ms: late }] : [])];
  }

  private healthz(): [number, string] {
    const worst = Math.max(0, ...this.lateMs.map((l) => l.ms));
    if (worst > this.leaseMs) return [503, `event loop held for ${secondsPast(worst)} s in the last minute, longer than the ${this.leaseMs / 1000} s lease\n`];
    return [200, `ok: event loop turning (worst delay in the last minute ${worst} ms)\n`];
  }

  private readyz(): [number, string] {
    const { stopping, lastStoreAnswer } = this.worker.stats();
    if (stopping) return [503, "stopping: claims no more runs\n"];
    if (lastStoreAnswer === undefined) return [503, "the store has not answered yet\n"];
    const age = Date.now() - lastStoreAnswer;
    if (age > this.leaseMs) return [503, `the store last answered ${secondsPast(age)} s ago, more than the ${this.leaseMs / 1000} s lease\n`];
    return [200, `ready: the store answered ${(age / 1000).toFixed(1)} s ago\n`];
  }

  private metrics(): string {
    const s = this.worker.stats();
    const worker = `worker="${this.worker.id.replace(/[\\"]/g, "\\$&")}"`;
    const lines: string[] = [];
    const metric = (name: string, type: "counter" | "gauge", help: string, samples: [labels: string, value: number][]) => {
      lines.push(`# HELP ${name} ${help}`, `# TYPE ${name} ${type}`);
      for (const [labels, value] of samples) lines.push(`${name}{${[worker, labels].filter(Boolean).join(",")}} ${value}`);
    };
    metric("pitwall_worker_runs_claimed_total", "counter", "Runs this worker claimed.", [["", s.claimed]]);
    metric("pitwall_worker_runs_taken_over_total", "counter", "Runs this worker took over after their worker's lease ran out.", [["", s.takenOver]]);
    metric("pitwall_worker_executions_ended_total", "counter", "Run executions that ended in this worker, by the run's status then (queued: released for another worker).", RUN_STATUSES.map((status) => [`status="${status}"`, s.ended[status]]));
    metric("pitwall_worker_execution_errors_total", "counter", "Run executions that ended on an error of the worker itself.", [["", s.errors]]);
    metric("pitwall_worker_runs_running", "gauge", "Runs this worker executes now.", [["", s.running]]);
    metric("pitwall_worker_concurrency", "gauge", "Runs this worker executes at most at once.", [["", this.concurrency]]);
    metric("pitwall_worker_nodes_running", "gauge", "Nodes running now in this worker.", [["", s.nodesRunning]]);
    metric("pitwall_worker_store_failures_total", "counter", "Store calls that got no answer.", [["", s.storeFailures]]);
    const age = s.lastStoreAnswer === undefined ? Number.NaN : (Date.now() - s.lastStoreAnswer) / 1000;
    metric("pitwall_worker_store_last_answer_age_seconds", "gauge", "Seconds since the store last answered this worker.", [["", age]]);
    metric("pitwall_worker_stopping", "gauge", "1 while the worker stops (drains), claiming nothing.", [["", s.stopping ? 1 : 0]]);
    return `${lines.join("\n")}\n`;
  }
}
