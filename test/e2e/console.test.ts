import { execFileSync, spawnSync } from "node:child_process";
import { basename, join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { openStore, type InterruptRecord } from "../../engine/index.js";
import { BIN, actionsOf, cliHarness, unwritableCopy, workflowOf, type User } from "../support/cli.js";

/**
 * `pitwall console` as a person uses it: in a real terminal (tmux, on its own server socket),
 * driven with keystrokes and read from the screen, while workers run in other processes.
 */
describe("pitwall console in a terminal", () => {
  const cli = cliHarness();
  const socket = `pitwall-test-${process.pid}`;
  const tmux = (...args: string[]) => execFileSync("tmux", ["-L", socket, ...args], { encoding: "utf8" });
  afterEach(() => {
    spawnSync("tmux", ["-L", socket, "kill-server"]);
  });

  /**
   * Starts the console in a fresh 100×30 terminal (on the harness's store unless told, as `user`
   * when given); the shell then reports its exit code and tty mode.
   */
  function openConsole(args: string[] = [], where: { store?: string; cwd?: string; user?: User | undefined } = {}): void {
    expect(spawnSync("tmux", ["-V"]).status, "tmux is needed for this test (apt-get install tmux)").toBe(0);
    const store = where.store ?? `sqlite:${join(cli.dir, "pitwall.db")}`;
    const as = where.user ? `setpriv --reuid=${where.user.uid} --regid=${where.user.gid} --clear-groups ` : "";
    // CI=true as many shells have it: the console must draw all the same.
    const command = [
      `cd '${where.cwd ?? cli.dir}'`,
      `${as}env -i PATH="$PATH" HOME="$HOME" TERM=xterm-256color LANG=C.UTF-8 CI=true PITWALL_STORE='${store}' '${process.execPath}' '${BIN}' console ${args.join(" ")}`,
      `echo "CONSOLE-EXIT=$?"`,
      `stty -a | grep -o -- '-\\?icanon' | sed 's/^/TTY-/'`,
      "sleep 600",
    ].join("; ");
    tmux("new-session", "-d", "-s", "console", "-x", "100", "-y", "30", command);
  }

  const screen = () => tmux("capture-pane", "-p", "-t", "console");
  const keys = (...k: string[]) => tmux("send-keys", "-t", "console", ...k);
  async function waitFor(test: (screen: string) => boolean, what: string, timeoutMs = 20_000): Promise<string> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const shown = screen();
      if (test(shown)) return shown;
      if (Date.now() > deadline) throw new Error(`the console never showed ${what}; the screen:\n${shown}`);
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  }

  async function pausedTrip(): Promise<string> {
    const runId = (await cli.run(["start", workflowOf("travel-planner"), "--input", '{"destination":"Porto","nights":3}'])).stdout.trim();
    await cli.run(["worker", "--once", "--actions", actionsOf("travel-planner")]);
    return runId;
  }

  it("approves a paused run with keystrokes and sees it finish, with the worker in another process", async () => {
    const runId = await pausedTrip();
    openConsole(["--as", "alice"]);
    let shown = await waitFor((s) => s.includes(runId) && s.includes("⚑ 1 pending"), "the paused run");
    expect(shown.split("\n")[0]).toContain("operator:alice");
    expect(shown.split("\n").find((l) => l.includes(runId))).toMatch(/‖ paused .*travel-planner .*interrupt: approve/);

    keys("i");
    await waitFor((s) => s.includes("1 pending, oldest first"), "the interrupt queue");
    keys("Enter");
    shown = await waitFor((s) => s.includes("Interrupt 1 of 1"), "the operator panel");
    expect(shown).toContain("Book this trip?");
    keys("a");
    await waitFor((s) => /✓ resolved int-\S+ with approve/.test(s) && s.includes("nothing is waiting"), "the approval's outcome");
    keys("Escape");
    await waitFor((s) => s.includes("by recent activity"), "the runs list again");

    // Another process runs the rest; the console follows the store and shows the end.
    const worker = await cli.run(["worker", "--once", "--actions", actionsOf("travel-planner")]);
    expect(worker.code).toBe(0);
    shown = await waitFor((s) => (s.split("\n").find((l) => l.includes(runId)) ?? "").includes("✓ succeeded"), "the run succeeding");
    expect(shown).not.toContain("⚑ 1 pending");

    const store = await openStore(`sqlite:${join(cli.dir, "pitwall.db")}`);
    try {
      const [interrupt] = (await store.listInterrupts({ runId })) as InterruptRecord[];
      expect(interrupt!.resolution).toMatchObject({ decision: "approve", actor: "operator:alice" });
      expect((await store.getRun(runId))!.status).toBe("succeeded");
    } finally {
      await store.close();
    }

    keys("q");
    shown = await waitFor((s) => s.includes("TTY-"), "the console exiting and the shell reporting the terminal mode");
    expect(shown).toContain("CONSOLE-EXIT=0");
    // The terminal is back: main screen, canonical (not raw) mode.
    expect(shown).toContain("TTY-icanon");
    expect(shown).not.toContain("pitwall  sqlite:");
  });

  it("keeps what can be typed of a paste carrying colour codes, and takes a stray colour code as no key (Ink crashed on both)", async () => {
    openConsole();
    await waitFor((s) => s.includes("by recent activity"), "the runs list");
    keys("/");
    await waitFor((s) => s.includes("enter keeps"), "the filter prompt");
    tmux("set-buffer", "log: \u001b[31mERROR\u001b[0m");
    tmux("paste-buffer", "-p", "-t", "console");
    await waitFor((s) => /^\/ log: ERROR█?/m.test(s), "the pasted text without its colour codes");
    keys("Escape");
    await waitFor((s) => s.includes("by recent activity") && !s.includes("enter keeps"), "the runs list again");
    keys("-l", "\u001b[31m");
    keys("?");
    await waitFor((s) => s.includes("show this help"), "the help, the console still taking keys");
    keys("q", "q");
    expect(await waitFor((s) => s.includes("CONSOLE-EXIT="), "the console exiting")).toContain("CONSOLE-EXIT=0");
  });

  it("opens a store file it may not write read-only by itself, and says so", async () => {
    const runId = await pausedTrip();
    const copy = await unwritableCopy(cli);
    try {
      openConsole([], { store: `sqlite:${copy.file}`, cwd: copy.folder, user: copy.user });
      // The header's counts come with the store's next look, which may follow the runs list's.
      const shown = await waitFor((s) => s.includes(runId) && s.includes(" RO  j/k move") && s.includes("⚑ 1 pending"), "the console, read-only");
      // At 80 columns the header cuts the path's start to keep its badges.
      expect(shown.split("\n")[0]).toMatch(new RegExp(`…\\S*${basename(copy.folder).slice(-6)}/copy\\.db \\(read-only file\\) .*⚑ 1 pending`));
      // No action that writes is offered: the interrupt's panel has no key to approve it.
      keys("i");
      await waitFor((s) => s.includes("1 pending, oldest first"), "the interrupt queue");
      keys("Enter");
      expect(await waitFor((s) => s.includes("read-only console: allowed decisions are"), "the interrupt's panel")).not.toContain("a approve");
      keys("q");
      expect(await waitFor((s) => s.includes("CONSOLE-EXIT="), "the console exiting")).toContain("CONSOLE-EXIT=0");
    } finally {
      copy.cleanup();
    }
  });

  it("gives the terminal back when it is sent SIGTERM", async () => {
    await pausedTrip();
    openConsole(["--read-only"]);
    await waitFor((s) => s.includes("pending") && s.includes(" RO  j/k move"), "the read-only console");
    // The console is the one process the pane's shell started (found by its parent's id; it
    // renames itself, so not by name).
    const shell = tmux("display-message", "-p", "-t", "console", "#{pane_pid}").trim();
    const children = spawnSync("pgrep", ["-P", shell], { encoding: "utf8" }).stdout.trim().split("\n").filter(Boolean);
    expect(children, `the console process under shell ${shell}`).toHaveLength(1);
    process.kill(Number(children[0]), "SIGTERM");
    const shown = await waitFor((s) => s.includes("TTY-"), "the console exiting and the shell reporting the terminal mode");
    expect(shown).toContain("TTY-icanon");
    expect(shown).toContain("CONSOLE-EXIT=143"); // as a shell reports a process SIGTERM ended
    expect(shown).not.toContain("pitwall  sqlite:");
  });
});
