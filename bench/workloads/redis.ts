/**
 * `redis`: the `chain` workload on a local redis-server (append-only file, fsync every second).
 * - throughput with 1 and with 4 worker processes (4 runs at a time each), and their ratio;
 * - per-step engine overhead (a step's wall time minus its node's 20 ms) against a raw baseline:
 *   one EVALSHA writing as many bytes as the engine sends to Redis per step.
 * Prints figures; it does not pass or fail. Standalone: `npx tsx bench/workloads/redis.ts`.
 */
import { fileURLToPath, pathToFileURL } from "node:url";
import { Redis } from "ioredis";
import { MemoryStore, Worker, WorkflowRegistry, actionRegistry, createEngine, openStore, type Store } from "../../engine/index.js";
import { Fleet } from "../../test/support/fleet.js";
import { RedisServer } from "../../test/support/redis-server.js";
import chain, { CHAIN_NODES, NODE_MS } from "../support/chain-workflow.js";

const RUNS = 96;
const PER_WORKER = 4;
const CHAIN_MODULE = fileURLToPath(new URL("../support/chain-workflow.ts", import.meta.url));

async function withServer<T>(body: (server: RedisServer, store: Store) => Promise<T>): Promise<T> {
  const server = new RedisServer({ appendonly: true, appendfsync: "everysec" });
  await server.start();
  const store = await openStore(server.url);
  try {
    return await body(server, store);
  } finally {
    await store.close();
    await server.dispose();
  }
}

/** Runs per second for RUNS chain runs on `workers` worker processes. */
function throughput(workers: number): Promise<number> {
  return withServer(async (server, store) => {
    const fleet = await Fleet.start(server.url, workers, { leaseMs: 15_000, workflowModule: CHAIN_MODULE, concurrency: PER_WORKER });
    try {
      const engine = createEngine({ store, worker: false, workflows: [chain] });
      const ended = endOfRuns(store, RUNS);
      const started = performance.now();
      for (let i = 0; i < RUNS; i++) await engine.start(chain, {});
      await ended;
      return RUNS / ((performance.now() - started) / 1000);
    } finally {
      await fleet.stop();
    }
  });
}

/** Resolves when `count` runs have succeeded from now on (watching the events as they come). */
async function endOfRuns(store: Store, count: number): Promise<void> {
  let seen = 0;
  const controller = new AbortController();
  const timeout = setTimeout(() => controller.abort(), 120_000);
  for await (const event of store.subscribe({ after: await store.lastEventSeq(), signal: controller.signal })) {
    if (event.type === "run.succeeded" && ++seen === count) break;
  }
  clearTimeout(timeout);
  if (seen < count) throw new Error(`only ${seen} of ${count} runs finished in 2 minutes`);
}

/** A step's wall time with one run at a time on one in-process worker. */
async function stepMs(store: Store, runs = 5): Promise<number> {
  const worker = new Worker(store, new WorkflowRegistry(store, actionRegistry({}), [chain]), { concurrency: 1, pollMs: 50 });
  const engine = createEngine({ store, worker: false, workflows: [chain] });
  worker.start();
  try {
    await (await engine.start(chain, {})).wait({ until: "end" }); // warm up
    const started = performance.now();
    for (let i = 0; i < runs; i++) await (await engine.start(chain, {})).wait({ until: "end" });
    return (performance.now() - started) / (runs * CHAIN_NODES);
  } finally {
    await worker.stop();
  }
}

/** The Redis step time, the bytes the engine sends per step, and one EVALSHA writing as many. */
function redisStepCost(): Promise<{ stepMs: number; bytes: number; rawMs: number }> {
  return withServer(async (server, store) => {
    const raw = new Redis({ port: server.port });
    try {
      const before = await netInput(raw);
      const runs = 5;
      const step = await stepMs(store, runs);
      const bytes = ((await netInput(raw)) - before) / ((runs + 1) * CHAIN_NODES);
      const sha = (await raw.script("LOAD", "return redis.call('SET', KEYS[1], ARGV[1])")) as string;
      const payload = "x".repeat(Math.round(bytes));
      for (let i = 0; i < 50; i++) await raw.evalsha(sha, 1, "bench:raw", payload);
      const started = performance.now();
      for (let i = 0; i < 500; i++) await raw.evalsha(sha, 1, "bench:raw", payload);
      return { stepMs: step, bytes, rawMs: (performance.now() - started) / 500 };
    } finally {
      raw.disconnect();
    }
  });
}

async function netInput(client: Redis): Promise<number> {
  return Number(/total_net_input_bytes:(\d+)/.exec(await client.info("stats"))?.[1] ?? 0);
}

export async function main(): Promise<void> {
  const one = await throughput(1);
  const four = await throughput(4);
  console.log(
    `redis chain (${RUNS} runs of ${CHAIN_NODES} nodes × ${NODE_MS} ms, ${PER_WORKER} runs at a time per worker): ` +
      `1 worker ${one.toFixed(1)} runs/s, 4 workers ${four.toFixed(1)} runs/s, ratio ${(four / one).toFixed(2)}× (goal ≥ 3×)`,
  );
  const memory = (await stepMs(new MemoryStore())) - NODE_MS;
  const { stepMs: step, bytes, rawMs } = await redisStepCost();
  const overhead = step - NODE_MS;
  console.log(
    `redis per step: ${step.toFixed(2)} ms wall, engine overhead ${overhead.toFixed(2)} ms (memory store: ${memory.toFixed(2)} ms); ` +
      `raw EVALSHA writing the same ${(bytes / 1024).toFixed(1)} KiB ${rawMs.toFixed(3)} ms → overhead ${(overhead / rawMs).toFixed(1)}× baseline`,
  );
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) await main();
