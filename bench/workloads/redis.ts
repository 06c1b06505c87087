/**
 * `redis`: the `chain` workload on a local redis-server (append-only file, fsync every second).
 * Throughput with 1 and with 4 worker processes; per-step engine overhead (a step's wall time
 * minus its node's wait) against one raw EVALSHA writing as many bytes as the engine sends to
 * Redis per step; how soon a subscriber is handed the workers' events, against a raw XADD seen
 * by a blocked XREAD. Also runs on its own: `npx tsx bench/workloads/redis.ts`.
 */
import { fileURLToPath, pathToFileURL } from "node:url";
import { Redis } from "ioredis";
import { MemoryStore, Worker, WorkflowRegistry, actionRegistry, createEngine, openStore, type Store } from "../support/engine.js";
import { Fleet } from "../../test/support/fleet.js";
import { RedisServer } from "../../test/support/redis-server.js";
import { fastest, median, ratio, table } from "../support/harness.js";
import { SAMPLES, engineDelivery, rawDelivery } from "../support/redis-delivery.js";
import chain, { CHAIN_NODES, NODE_MS } from "../support/redis-chain.js";

export const description = `chain of ${CHAIN_NODES} nodes waiting ${NODE_MS} ms on Redis: 1 vs 4 worker processes (target ≥ 3×), per-step overhead against one raw EVALSHA, event delivery to a subscriber against a raw XADD → XREAD`;

const RUNS = 96;
const PER_WORKER = 4;
const CHAIN_MODULE = fileURLToPath(new URL("../support/redis-chain.ts", import.meta.url));

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

/** Time for RUNS chain runs on `workers` worker processes, PER_WORKER runs at a time each. */
function runAll(workers: number): Promise<{ ms: number }> {
  return withServer(async (server, store) => {
    const fleet = await Fleet.start(server.url, workers, { leaseMs: 15_000, workflowModule: CHAIN_MODULE, concurrency: PER_WORKER });
    try {
      const engine = createEngine({ store, worker: false, workflows: [chain] });
      const ended = endOfRuns(store, RUNS);
      const started = performance.now();
      for (let i = 0; i < RUNS; i++) await engine.start(chain, {});
      await ended;
      return { ms: performance.now() - started };
    } finally {
      await fleet.stop();
    }
  });
}

/** Resolves when `count` runs have succeeded from now on (following the events as they come). */
async function endOfRuns(store: Store, count: number): Promise<void> {
  let seen = 0;
  const signal = AbortSignal.timeout(120_000);
  for await (const event of store.subscribe({ after: await store.lastEventSeq(), signal })) {
    if (event.type === "run.succeeded" && ++seen === count) return;
  }
  throw new Error(`only ${seen} of ${count} runs finished in 2 minutes`);
}

/** A step's wall time, one run at a time on one in-process worker. */
async function stepMs(store: Store, runs = 5): Promise<{ ms: number }> {
  const worker = new Worker(store, new WorkflowRegistry(store, actionRegistry({}), [chain]), { concurrency: 1, pollMs: 50 });
  const engine = createEngine({ store, worker: false, workflows: [chain] });
  worker.start();
  try {
    await (await engine.start(chain, {})).wait({ until: "end" }); // warm up
    const started = performance.now();
    for (let i = 0; i < runs; i++) await (await engine.start(chain, {})).wait({ until: "end" });
    return { ms: (performance.now() - started) / (runs * CHAIN_NODES) };
  } finally {
    await worker.stop();
  }
}

/** The Redis step time, the bytes the engine sends per step, and one EVALSHA writing as many. */
function redisStep(): Promise<{ ms: number; bytes: number; rawMs: number }> {
  return withServer(async (server, store) => {
    const raw = new Redis({ port: server.port });
    try {
      const runs = 5;
      const before = await netInput(raw);
      const { ms } = await stepMs(store, runs);
      const bytes = ((await netInput(raw)) - before) / ((runs + 1) * CHAIN_NODES);
      const sha = (await raw.script("LOAD", "return redis.call('SET', KEYS[1], ARGV[1])")) as string;
      const payload = "x".repeat(Math.round(bytes));
      for (let i = 0; i < 50; i++) await raw.evalsha(sha, 1, "bench:raw", payload);
      const started = performance.now();
      for (let i = 0; i < 500; i++) await raw.evalsha(sha, 1, "bench:raw", payload);
      return { ms, bytes, rawMs: (performance.now() - started) / 500 };
    } finally {
      raw.disconnect();
    }
  });
}

async function netInput(client: Redis): Promise<number> {
  return Number(/total_net_input_bytes:(\d+)/.exec(await client.info("stats"))?.[1] ?? 0);
}

export default async function redis(): Promise<void> {
  const perSecond = async (workers: number) => RUNS / ((await fastest(2, () => runAll(workers))).ms / 1000);
  const one = await perSecond(1);
  const four = await perSecond(4);
  table(["workers", "runs/s", "vs 1 worker"], [
    ["1", one, ratio(one, one)],
    ["4", four, ratio(four, one)],
  ]);
  console.log(`${RUNS} runs, ${PER_WORKER} at a time per worker process; fastest of 2 each`);
  const memory = (await fastest(3, () => stepMs(new MemoryStore()))).ms - NODE_MS;
  const step = await fastest(3, redisStep);
  const overhead = step.ms - NODE_MS;
  table(["per step", "wall ms", "engine overhead ms", "same on memory store ms", "raw EVALSHA ms", "overhead/raw", "bytes sent/step"], [
    ["redis", step.ms, overhead, memory, step.rawMs, ratio(overhead, step.rawMs), Math.round(step.bytes)],
  ]);
  console.log("fastest of 3 each; the raw EVALSHA writes the bytes the engine sent per step in one script call");
  const { engine, raw } = await withServer(async (server, store) => {
    const fleet = await Fleet.start(server.url, 4, { leaseMs: 15_000, workflowModule: CHAIN_MODULE });
    try {
      const [engine, raw] = await Promise.all([engineDelivery(store, chain), rawDelivery(server.port)]);
      return { engine, raw };
    } finally {
      await fleet.stop();
    }
  });
  const mean = (values: number[]) => values.reduce((a, b) => a + b, 0) / values.length;
  table(["event delivery", "mean ms", "median ms", "max ms", "mean vs raw"], [
    ["run.claimed → subscriber", mean(engine), median(engine), Math.max(...engine), ratio(mean(engine), mean(raw))],
    ["raw XADD → XREAD BLOCK", mean(raw), median(raw), Math.max(...raw), ratio(mean(raw), mean(raw))],
  ]);
  console.log(`${SAMPLES} events each, one every 25 ms, 4 worker processes, measured together; from the server's clock at the commit to Date.now() on delivery, both in whole ms (their mean is unbiased)`);
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) await redis();
