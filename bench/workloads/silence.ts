/**
 * `silence`: how soon a Redis that stops answering (SIGSTOP: the connection stays open and nothing
 * comes back, as behind a network that drops packets) is said to: `pitwall runs` started against
 * it, to its one-line error; a command of a store opened before; the console's live feed, to its
 * footer message — and how soon that message clears after SIGCONT. Also runs on its own:
 * `npx tsx bench/workloads/silence.ts`.
 */
import { spawn } from "node:child_process";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { openStore } from "../support/engine.js";
import { LiveFeed } from "../../source/console/live.js";
import { RedisServer } from "../../test/support/redis-server.js";
import { ROOT, ensureBuild } from "../support/build.js";
import { table } from "../support/harness.js";

export const description = "a Redis stopped with SIGSTOP: pitwall runs fails (target ≤ 5 s), a command of an open store fails, the console's footer says so (≤ 6 s) and clears after SIGCONT (≤ 2 s)";

const TRIES = 3;

/** Milliseconds until `pitwall <args>` exits, and how it ended. */
function timeCli(args: string[]): Promise<{ ms: number; code: number | null; stderr: string }> {
  const started = performance.now();
  const child = spawn(process.execPath, [join(ROOT, "bin", "pitwall.js"), ...args], { stdio: ["ignore", "ignore", "pipe"] });
  let stderr = "";
  child.stderr.setEncoding("utf8").on("data", (d: string) => (stderr += d));
  return new Promise((resolve) => child.on("close", (code) => resolve({ ms: performance.now() - started, code, stderr: stderr.trim() })));
}

/** Milliseconds until `feed` reports a problem (`problem`) or none (`!problem`). */
function untilFeed(feed: LiveFeed, problem: boolean): Promise<number> {
  const started = performance.now();
  return new Promise((resolve) => {
    feed.onError = (message) => {
      if ((message !== undefined) === problem) resolve(performance.now() - started);
    };
  });
}

const range = (values: number[]) => `${(Math.min(...values) / 1000).toFixed(2)}–${(Math.max(...values) / 1000).toFixed(2)} s`;

export default async function silence(): Promise<void> {
  await ensureBuild();
  const server = new RedisServer();
  await server.start();
  const url = `${server.url}/0?prefix=silence:`;
  const store = await openStore(url);
  const figures = { startup: [] as number[], cli: [] as number[], command: [] as number[], said: [] as number[], cleared: [] as number[] };
  let said = "";
  try {
    for (let i = 0; i < TRIES; i++) {
      figures.startup.push((await timeCli(["runs", "--store", url])).ms);
      server.pause();
      try {
        const cli = await timeCli(["runs", "--store", url]);
        if (cli.code !== 1) throw new Error(`pitwall runs on a stopped server exited ${cli.code}: ${cli.stderr}`);
        figures.cli.push(cli.ms);
        said = cli.stderr;
        const started = performance.now();
        await store.getRun("run-none").catch(() => undefined);
        figures.command.push(performance.now() - started);
      } finally {
        server.resume();
      }
      const feed = new LiveFeed(store, { label: store.description });
      feed.start();
      // Following the store, asked once and answered; stopped at another point of its 2 s round each try.
      await new Promise((resolve) => setTimeout(resolve, 2_100 + (i * 2_000) / TRIES));
      const saying = untilFeed(feed, true);
      server.pause();
      try {
        figures.said.push(await saying);
        // Resumed at another point of the round too.
        await new Promise((resolve) => setTimeout(resolve, (i * 2_000) / TRIES));
      } finally {
        const clearing = untilFeed(feed, false);
        server.resume();
        figures.cleared.push(await clearing);
        await feed.stop();
      }
    }
  } finally {
    server.resume();
    await store.close();
    await server.dispose();
  }
  console.log(said);
  table(
    ["", `${TRIES} tries`],
    [
      ["pitwall runs, the server answering (start-up)", range(figures.startup)],
      ["pitwall runs, the server stopped: to its error", range(figures.cli)],
      ["a command of an open store, the server stopped", range(figures.command)],
      ["console: stopped → footer says so", range(figures.said)],
      ["console: SIGCONT → footer clear", range(figures.cleared)],
    ],
  );
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) await silence();
