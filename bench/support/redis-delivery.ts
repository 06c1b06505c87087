import { Redis } from "ioredis";
import { createEngine, type CompiledWorkflow, type Store } from "./engine.js";

/** Events measured, one started every GAP_MS. */
export const SAMPLES = 60;
const GAP_MS = 25;

/**
 * How long after its commit a subscriber in this process is handed a worker's event, while the
 * store's worker processes execute runs started `GAP_MS` apart: `run.claimed` is stamped inside
 * the claim script with the server's clock (the machine's), so `Date.now() - time` is the delay
 * since its commit, in whole milliseconds on both sides.
 */
export async function engineDelivery(store: Store, wf: CompiledWorkflow): Promise<number[]> {
  const delays: number[] = [];
  const ended = new Set<string>();
  const controller = new AbortController();
  const following = (async () => {
    for await (const event of store.subscribe({ signal: controller.signal })) {
      if (event.type === "run.claimed") delays.push(Date.now() - event.time);
      else if (event.type === "run.succeeded") ended.add(event.runId);
    }
  })();
  try {
    const engine = createEngine({ store, worker: false, workflows: [wf] });
    for (let i = 0; i < SAMPLES; i++) {
      await engine.start(wf, {});
      await sleep(GAP_MS);
    }
    const deadline = Date.now() + 120_000;
    while (ended.size < SAMPLES) {
      if (Date.now() > deadline) throw new Error(`only ${ended.size} of ${SAMPLES} runs ended in 2 minutes`);
      await sleep(50);
    }
    return delays;
  } finally {
    controller.abort();
    await following;
  }
}

/**
 * The same delay for raw ioredis, the floor under the engine's (measured at the same time, on
 * the same loaded machine): one connection appends to a stream in a script stamping the
 * server's clock, another waits on it in XREAD BLOCK.
 */
export async function rawDelivery(port: number): Promise<number[]> {
  const writer = new Redis({ port });
  const reader = new Redis({ port });
  try {
    const sha = (await writer.script("LOAD", "local t = redis.call('TIME') return redis.call('XADD', KEYS[1], '*', 'ms', t[1] * 1000 + math.floor(t[2] / 1000))")) as string;
    let last = "0-0";
    const delays: number[] = [];
    for (let i = 0; i < SAMPLES; i++) {
      const read = reader.xread("BLOCK", 0, "STREAMS", "bench:delivery", last);
      await sleep(GAP_MS); // as the runs are started; the read waits on the server by then
      await writer.evalsha(sha, 1, "bench:delivery");
      const [id, fields] = ((await read) as [string, [string, string[]][]][])[0]![1][0]!;
      delays.push(Date.now() - Number(fields[1]));
      last = id;
    }
    return delays;
  } finally {
    writer.disconnect();
    reader.disconnect();
  }
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
