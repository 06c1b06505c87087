import { spawnSync } from "node:child_process";
import { join } from "node:path";
import { ROOT, ensureBuild } from "../support/build.js";
import { fmt, median, ratio, scratchDir, table } from "../support/harness.js";

export const description = "a `pitwall` command's start, from the build: commands that read a store and one that compiles a workflow, against node starting with nothing to do";

const TRIES = 15;
const BIN = join(ROOT, "bin", "pitwall.js");
const WORKFLOW = join(ROOT, "fixtures", "support-triage", "workflow.json");

/** Wall-clock milliseconds of one process, from spawn to exit. */
function timed(args: readonly string[], env: NodeJS.ProcessEnv): number {
  const started = performance.now();
  const done = spawnSync(process.execPath, args, { env, stdio: ["ignore", "ignore", "pipe"], encoding: "utf8" });
  const ms = performance.now() - started;
  if (done.status !== 0) throw new Error(`${args.join(" ")} exited ${done.status}: ${done.stderr.trim()}`);
  return ms;
}

export default async function commands(): Promise<void> {
  await ensureBuild();
  const scratch = scratchDir();
  try {
    const env = { ...process.env, PITWALL_STORE: `sqlite:${scratch.file("commands.db")}` };
    const started = spawnSync(process.execPath, [BIN, "start", WORKFLOW, "--input", "{}"], { env, encoding: "utf8" });
    if (started.status !== 0) throw new Error(`could not start a run: ${started.stderr.trim()}`);
    const runId = started.stdout.trim();
    const cases: [string, string[]][] = [
      ["node -e 0 (the baseline)", ["-e", "0"]],
      ["pitwall --version", [BIN, "--version"]],
      ["pitwall runs", [BIN, "runs"]],
      ["pitwall show RUN", [BIN, "show", runId]],
      ["pitwall events RUN", [BIN, "events", runId]],
      ["pitwall validate FILE", [BIN, "validate", WORKFLOW]],
    ];
    // Taken in turns, so that a busy moment of the machine falls on every command alike.
    const times = cases.map((): number[] => []);
    for (let i = 0; i < TRIES; i++) cases.forEach(([, args], c) => times[c]!.push(timed(args, env)));
    const baseline = median(times[0]!);
    table(
      ["command", "median ms", "fastest ms", "vs node"],
      cases.map(([name], c) => [name, fmt(median(times[c]!)), fmt(Math.min(...times[c]!)), `${ratio(median(times[c]!), baseline)}`]),
    );
    console.log(`wall time of the whole process, ${TRIES} tries each, in turns`);
  } finally {
    scratch.cleanup();
  }
}
