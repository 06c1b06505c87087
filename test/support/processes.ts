import { spawn, spawnSync, type ChildProcess } from "node:child_process";
import { once } from "node:events";
import { join } from "node:path";
import { createInterface } from "node:readline";
import { inject } from "vitest";
import type { WorkflowName } from "./durable-workflows.js";

/** A script of test/support/children/, bundled by the global setup (build.ts). */
export type ChildScript =
  | "claim-once"
  | "clock-skew"
  | "closed-under-worker"
  | "llm-worker"
  | "open-new-stores"
  | "open-store"
  | "redis-holder"
  | "stalled-fork"
  | "stalled-kill"
  | "store-probe"
  | "store-worker";

/** The file node runs for a child script. */
export function childScript(name: ChildScript): string {
  return join(inject("childScripts"), `${name}.js`);
}

/** Starts a child script with its arguments. */
export function spawnScript(name: ChildScript, args: string[], options: Parameters<typeof spawnChild>[2] = {}): Child {
  return spawnChild(process.execPath, [childScript(name), ...args], options);
}

/** A child process whose JSON output lines are collected as they come. */
export interface Child {
  process: ChildProcess;
  lines: Record<string, unknown>[];
  /** Resolves with the first line (past or future) that matches. */
  line(match: (line: Record<string, unknown>) => boolean, timeoutMs?: number): Promise<Record<string, unknown>>;
  exited: Promise<number | null>;
  stderr(): string;
}

export function spawnChild(command: string, args: string[], options: { uid?: number; gid?: number; env?: NodeJS.ProcessEnv } = {}): Child {
  const child = spawn(command, args, { stdio: ["ignore", "pipe", "pipe"], ...options });
  const lines: Record<string, unknown>[] = [];
  const waiters = new Set<() => void>();
  let stderr = "";
  child.stderr!.on("data", (chunk: Buffer) => (stderr += chunk.toString()));
  createInterface({ input: child.stdout! }).on("line", (text) => {
    try {
      lines.push(JSON.parse(text) as Record<string, unknown>);
    } catch {
      lines.push({ text });
    }
    for (const wake of [...waiters]) wake();
  });
  const exited = once(child, "exit").then(([code]) => code as number | null);
  return {
    process: child,
    lines,
    exited,
    stderr: () => stderr,
    line(match, timeoutMs = 20_000) {
      return new Promise((resolve, reject) => {
        const finish = (error?: Error) => {
          clearTimeout(timer);
          waiters.delete(check);
          const found = lines.find(match);
          if (found) resolve(found);
          else reject(error);
        };
        const check = () => {
          if (lines.some(match)) finish();
        };
        const output = () => `stdout ${JSON.stringify(lines)}; stderr ${stderr}`;
        const timer = setTimeout(() => finish(new Error(`no matching line from child ${child.pid} within ${timeoutMs} ms; ${output()}`)), timeoutMs);
        waiters.add(check);
        check();
        // Lines are read asynchronously: look once more after the exit before giving up.
        void exited.then(() => setTimeout(() => finish(new Error(`child ${child.pid} exited without the expected line; ${output()}`)), 20));
      });
    },
  };
}

/**
 * The test worker (see children/store-worker.ts) on a SQLite file or a store URL, in a child
 * process; `clockSkewMs`: its clock that far ahead of this machine's (behind, negative).
 */
export function spawnWorker(store: string, workflow: WorkflowName, leaseMs: number, mode: "serve" | "drain" = "serve", clockSkewMs = 0): Child {
  const skew = clockSkewMs === 0 ? [] : ["--import", childScript("clock-skew")];
  return spawnChild(process.execPath, [...skew, childScript("store-worker"), store, workflow, String(leaseMs), mode], {
    env: { ...process.env, PITWALL_TEST_CLOCK_SKEW_MS: String(clockSkewMs) },
  });
}

/** SIGKILLs a child (if still alive) and waits until it is gone. */
export async function kill(child: Child): Promise<void> {
  if (child.process.exitCode === null && child.process.signalCode === null) child.process.kill("SIGKILL");
  await child.exited;
}

/** The id of a process of this host that has ended. */
export function endedPid(): number {
  return spawnSync(process.execPath, ["-e", ""]).pid!;
}
