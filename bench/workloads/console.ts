import { spawn } from "node:child_process";
import { createInterface } from "node:readline";
import { openStore, storeWorkflow, type CompiledWorkflow, type NewEvent, type RunStatus, type Store } from "../support/engine.js";
import { newId } from "../../engine/ids.js";
import { newRun } from "../../engine/runtime/new-run.js";
import { ROOT as root, bundleConsoleParts } from "../support/build.js";
import { fmt, median, percentile, ratio, scratchDir, table } from "../support/harness.js";
import { chainWorkflow, fanoutWorkflow, loopWorkflow } from "../support/workflows.js";

export const description =
  "console on a SQLite store with 1,000 runs (made over a day) and 1,000,000 events: first frame (≤ 500 ms), peak RSS (≤ 150 MB), event-to-screen p95 at 200 events/s (≤ 250 ms), idle CPU (≤ 2%)";

const RUNS = 1_000;
const EVENTS_PER_RUN = 1_000;
const WRITE_RATE = 200;
const WRITE_SECONDS = 10;
const CHILD = new URL("../support/console-child.mjs", import.meta.url).pathname;

interface Measured {
  firstFrameMs: number;
  latencies: number[];
  /** CPU while the events were written. */
  busyPct: number;
  idlePct: number;
  maxRssMb: number;
}

/** A store filled directly through the Store contract: runs in every status, each with its share of events. */
async function fill(url: string): Promise<string> {
  const store = await openStore(url);
  try {
    const workflows: CompiledWorkflow[] = [chainWorkflow(5), fanoutWorkflow(4), loopWorkflow(50)];
    for (const w of workflows) await storeWorkflow(store, w);
    const statuses: RunStatus[] = ["succeeded", "succeeded", "succeeded", "succeeded", "succeeded", "succeeded", "failed", "paused", "canceled", "running"];
    let target = "";
    for (let i = 0; i < RUNS; i++) {
      const workflow = workflows[i % workflows.length]!;
      const init = newRun({ id: newId("run"), workflow, state: workflow.initialState({}), actor: "bench" });
      // A store with history: runs created over the past day, a minute and a half apart.
      const createdAt = Date.now() - (RUNS - i) * 86_000;
      init.run.createdAt = createdAt;
      init.run.updatedAt = createdAt;
      await store.createRun(init);
      const claim = (await store.claimRun({ owner: "bench", leaseMs: 3_600_000, runId: init.run.id }))!;
      const status = i === RUNS - 1 ? "running" : statuses[i % statuses.length]!;
      const events = Array.from({ length: EVENTS_PER_RUN - 2 }, (_, k) => event(init.run.id, k % 2 === 0 ? "task.started" : "task.succeeded", k));
      await store.commit({
        id: newId("c"),
        runId: init.run.id,
        fence: claim.fence,
        events,
        run: {
          status,
          startedAt: createdAt + 1_000,
          // Paused as the runtime pauses a run: with the time it paused.
          ...(status === "paused" ? { reason: "breakpoint" as const, pausedAt: createdAt + 1_000 + (i % 60) * 1_000 } : {}),
          ...(status === "failed" ? { error: { message: "bench failure", code: "TASK_FAILED" } } : {}),
          ...(status === "running" ? {} : { endedAt: createdAt + 1_000 + (i % 60) * 1_000, owner: null, leaseUntil: null }),
        },
      });
      if (status === "running") target = init.run.id;
    }
    return target;
  } finally {
    await store.close();
  }
}

function event(runId: string, type: "task.started" | "task.succeeded" | "node.progress", k: number, message?: string): NewEvent {
  const payload =
    type === "node.progress" ? { node: "work", fraction: 0.5, message: message ?? "" } : type === "task.started" ? { node: "work", attempt: 1 } : { node: "work", attempt: 1, durationMs: k % 97, keys: ["items"] };
  return { runId, taskId: null, traceId: runId, spanId: null, type, actor: "worker:bench", payload, time: Date.now() } as NewEvent;
}

/** Writes 200 events a second to the target run, each carrying the time it was written. */
async function writeEvents(store: Store, runId: string, seconds: number): Promise<number> {
  const run = (await store.getRun(runId))!;
  const batch = WRITE_RATE / 100;
  let written = 0;
  const end = Date.now() + seconds * 1000;
  while (Date.now() < end) {
    const tick = Date.now();
    const events = Array.from({ length: batch }, () => event(runId, "node.progress", written, `mark ${Date.now()}-${written++}`));
    await store.commit({ id: newId("c"), runId, fence: run.fence, events });
    await new Promise((resolve) => setTimeout(resolve, Math.max(0, 10 - (Date.now() - tick))));
  }
  return written;
}

async function measure(mode: "console" | "console-tsx" | "baseline", url: string, runId: string, built: string): Promise<Measured> {
  const env = Object.fromEntries(Object.entries(process.env).filter(([k]) => k !== "CI" && !k.startsWith("CI_") && k !== "CONTINUOUS_INTEGRATION"));
  const loader = mode === "console-tsx" ? ["--import", "tsx"] : [];
  const child = spawn(process.execPath, [...loader, CHILD, mode, url, runId, built], { stdio: ["pipe", "pipe", "inherit"], env, cwd: root });
  const lines = createInterface({ input: child.stdout! })[Symbol.asyncIterator]();
  const next = async () => {
    const { value, done } = await lines.next();
    if (done) throw new Error(`bench ${mode} child ended early`);
    return JSON.parse(value as string) as Record<string, unknown>;
  };
  const ready = await next();
  const writer = await openStore(url);
  try {
    await writeEvents(writer, runId, WRITE_SECONDS);
  } finally {
    await writer.close();
  }
  await new Promise((resolve) => setTimeout(resolve, 1_000));
  child.stdin!.write("measure-idle\n");
  const done = await next();
  child.kill();
  return { firstFrameMs: ready.firstFrameMs as number, ...(done as Omit<Measured, "firstFrameMs">) };
}

export default async function consoleBench(): Promise<void> {
  const built = await bundleConsoleParts();
  const scratch = scratchDir();
  try {
    const url = `sqlite:${scratch.file("console.db")}`;
    const filling = performance.now();
    const target = await fill(url);
    console.log(`store: ${RUNS.toLocaleString("en-US")} runs, ${(RUNS * EVENTS_PER_RUN).toLocaleString("en-US")} events, filled in ${fmt((performance.now() - filling) / 1000)} s`);
    const baseline = await measure("baseline", url, target, built);
    const consoleSide = await measure("console", url, target, built);
    // As `pitwall console` runs without a fresh build: the sources through tsx.
    const fromSource = await measure("console-tsx", url, target, built);
    const p95 = (m: Measured) => percentile(m.latencies, 0.95);
    table(
      ["", "console", "baseline", "console/baseline", "target"],
      [
        ["first frame ms", consoleSide.firstFrameMs, baseline.firstFrameMs, ratio(consoleSide.firstFrameMs, baseline.firstFrameMs), "≤ 500"],
        ["peak RSS MB", consoleSide.maxRssMb, baseline.maxRssMb, ratio(consoleSide.maxRssMb, baseline.maxRssMb), "≤ 150"],
        ["peak RSS MB, through tsx", fromSource.maxRssMb, baseline.maxRssMb, ratio(fromSource.maxRssMb, baseline.maxRssMb), ""],
        ["event→screen p95 ms", p95(consoleSide), p95(baseline), ratio(p95(consoleSide), p95(baseline)), "≤ 250"],
        ["event→screen median ms", median(consoleSide.latencies), median(baseline.latencies), ratio(median(consoleSide.latencies), median(baseline.latencies)), ""],
        ["CPU % while following", consoleSide.busyPct, baseline.busyPct, ratio(consoleSide.busyPct, Math.max(baseline.busyPct, 0.01)), ""],
        ["idle CPU %", consoleSide.idlePct, baseline.idlePct, ratio(consoleSide.idlePct, Math.max(baseline.idlePct, 0.01)), "≤ 2"],
      ],
    );
    console.log(
      `baseline: the same store listed and followed (store.subscribe) without drawing. ${consoleSide.latencies.length} of ${WRITE_RATE * WRITE_SECONDS} events seen on a 160×40 screen (run view, events tab following); idle: the runs list, nothing written`,
    );
  } finally {
    scratch.cleanup();
  }
}
