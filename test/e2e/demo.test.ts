import { execFileSync } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import type { RunRecord } from "../../engine/index.js";
import { until } from "../support/engine.js";
import { BIN } from "../support/cli.js";

/** `pitwall demo` in a real terminal (tmux), driven with keys as a person would. */
describe("pitwall demo", () => {
  const dir = mkdtempSync(join(tmpdir(), "pitwall-demo-"));
  const socket = `pitwall-demo-test-${process.pid}`;
  const tmux = (...args: string[]) => execFileSync("tmux", ["-L", socket, ...args], { encoding: "utf8" });
  afterAll(() => {
    try {
      tmux("kill-server");
    } catch {
      // already gone
    }
    rmSync(dir, { recursive: true, force: true });
  });

  it("creates a store in the working folder, runs the example workflows under the console, and q stops it cleanly", async () => {
    // A clean environment: Ink draws nothing until exit when it believes it runs in CI.
    const command = `cd '${dir}' && env -i PATH="$PATH" HOME="$HOME" TERM=xterm-256color LANG=C.UTF-8 PITWALL_LATENCY_SCALE=1 '${process.execPath}' '${BIN}' demo --every 1; echo "EXIT=$?" > exit.txt; sleep 60`;
    tmux("new-session", "-d", "-s", "demo", "-x", "150", "-y", "40", command);
    const screen = () => tmux("capture-pane", "-p", "-t", "demo");

    await until(() => /paused/.test(screen()) && /succeeded/.test(screen()), 30_000, "runs pausing and succeeding in the console");
    // The model-backed fixture runs offline on its recorded script, up to its agent's refund approval.
    const runsOf = (workflow: string) =>
      JSON.parse(execFileSync(process.execPath, [BIN, "runs", "--json", "--workflow", workflow], { cwd: dir, encoding: "utf8", env: { ...process.env, PITWALL_STORE: "" } })) as RunRecord[];
    await until(() => runsOf("support-triage").some((r) => r.status === "paused" && r.reason === "interrupt"), 30_000, "support-triage asking for its refund");
    expect(screen()).toMatch(/pitwall .*sqlite:\.\/pitwall\.db/);
    expect(existsSync(join(dir, "pitwall.db"))).toBe(true);

    tmux("send-keys", "-t", "demo", "q");
    const exit = join(dir, "exit.txt");
    // The shell makes the file before it writes to it: wait for what it says.
    const said = await until(() => (existsSync(exit) ? readFileSync(exit, "utf8").trim() : ""), 15_000, "the demo to exit");
    expect(said).toBe("EXIT=0");

    const runs = JSON.parse(execFileSync(process.execPath, [BIN, "runs", "--json", "--limit", "100"], { cwd: dir, encoding: "utf8", env: { ...process.env, PITWALL_STORE: "" } })) as RunRecord[];
    expect(new Set(runs.map((r) => r.workflow))).toEqual(new Set(["travel-planner", "task-queue", "sensitive-operation", "research-fanout", "long-compute", "support-triage"]));
    expect(runs.filter((r) => r.workflow === "support-triage" && r.status === "failed")).toEqual([]);
    expect(runs.filter((r) => r.status === "running")).toEqual([]);
    expect(runs.some((r) => r.status === "paused" && r.reason === "retries-exhausted")).toBe(true);
  });
});
