import { spawn, type ChildProcessWithoutNullStreams } from "node:child_process";
import { chmodSync, chownSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, afterEach, beforeAll } from "vitest";
import { openStore } from "../../engine/index.js";

export const ROOT = join(import.meta.dirname, "..", "..");
export const BIN = join(ROOT, "bin", "pitwall.js");
/** The bin's other way: the TypeScript sources through tsx, as when there is no fresh build. */
export const SOURCES_BIN = join(ROOT, "bin", "from-sources.js");
export const FIXTURES = join(ROOT, "fixtures");

export const workflowOf = (name: string) => join(FIXTURES, name, "workflow.json");
export const actionsOf = (name: string) => join(FIXTURES, name, "actions.ts");

export interface Result {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** A process of the real `pitwall` bin, with its output collected as it comes. */
export class Pitwall {
  stdout = "";
  stderr = "";
  readonly exited: Promise<Result>;

  constructor(readonly child: ChildProcessWithoutNullStreams) {
    child.stdout.setEncoding("utf8").on("data", (d: string) => (this.stdout += d));
    child.stderr.setEncoding("utf8").on("data", (d: string) => (this.stderr += d));
    this.exited = new Promise((resolve) => child.on("close", (code) => resolve({ code, stdout: this.stdout, stderr: this.stderr })));
  }

  /** Resolves when stdout has a line matching, failing after `timeoutMs`. */
  async waitForLine(match: (line: string) => boolean, timeoutMs = 15_000): Promise<string> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const line = this.stdout.split("\n").find(match);
      if (line !== undefined) return line;
      if (Date.now() > deadline) throw new Error(`no matching line within ${timeoutMs} ms; stdout:\n${this.stdout}\nstderr:\n${this.stderr}`);
      await new Promise((r) => setTimeout(r, 20));
    }
  }
}

/**
 * A temporary folder with its own SQLite store for a test file; every command is spawned as a
 * child process of the real bin with PITWALL_STORE pointing at it.
 */
export function cliHarness() {
  let dir = "";
  const running: Pitwall[] = [];
  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), "pitwall-cli-"));
  });
  afterEach(async () => {
    for (const p of running.splice(0)) {
      if (p.child.exitCode === null && p.child.signalCode === null) p.child.kill("SIGKILL");
      await p.exited;
    }
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  const env = (extra: Record<string, string>) => ({
    ...process.env,
    PITWALL_STORE: `sqlite:${join(dir, "pitwall.db")}`,
    NO_COLOR: "1",
    ...extra,
  });

  return {
    get dir() {
      return dir;
    },
    /** Starts a command and returns at once (for workers and followers). */
    spawn(args: string[], extraEnv: Record<string, string> = {}): Pitwall {
      const p = new Pitwall(spawn(process.execPath, [BIN, ...args], { cwd: dir, env: env(extraEnv) }));
      running.push(p);
      return p;
    },
    /** Runs a command to its end (in the harness's folder unless told, as `user` when given). */
    async run(args: string[], extraEnv: Record<string, string> = {}, where: { cwd?: string; user?: User | undefined; bin?: string } = {}): Promise<Result> {
      const p = new Pitwall(spawn(process.execPath, [where.bin ?? BIN, ...args], { cwd: where.cwd ?? dir, env: env(extraEnv), ...where.user }));
      return p.exited;
    },
    /** Creates the folder's store, empty (commands that only read do not create it). */
    async createStore(): Promise<void> {
      await (await openStore(`sqlite:${join(dir, "pitwall.db")}`)).close();
    },
    /** Runs a command that must succeed and returns its stdout parsed as JSON (`--json` added). */
    async json<T = unknown>(args: string[], extraEnv: Record<string, string> = {}): Promise<T> {
      const r = await this.run([...args, "--json"], extraEnv);
      if (r.code !== 0) throw new Error(`pitwall ${args.join(" ")} exited ${r.code}: ${r.stderr}`);
      return JSON.parse(r.stdout) as T;
    },
  };
}

export interface User {
  uid: number;
  gid: number;
}

/**
 * A copy of the harness's store (made with `pitwall backup`) in a file that the user who reads
 * it may not write, in a folder that user may write. Root may write any file, so as root the
 * file belongs to an unprivileged user (`user`), who must then run the commands.
 */
export async function unwritableCopy(cli: ReturnType<typeof cliHarness>): Promise<{ folder: string; file: string; user: User | undefined; cleanup(): void }> {
  const user = process.getuid?.() === 0 ? { uid: 65534, gid: 65534 } : undefined;
  const folder = mkdtempSync(join(tmpdir(), "pitwall-unwritable-"));
  const file = join(folder, "copy.db");
  const backup = await cli.run(["backup", file]);
  if (backup.code !== 0) throw new Error(`pitwall backup exited ${backup.code}: ${backup.stderr}`);
  chmodSync(file, 0o444);
  if (user) {
    chownSync(file, user.uid, user.gid);
    chownSync(folder, user.uid, user.gid);
  }
  return { folder, file, user, cleanup: () => rmSync(folder, { recursive: true, force: true }) };
}

/** Lines of a table section of `show`, from its title to the blank line after it. */
export function section(text: string, title: string): string[] {
  const lines = text.split("\n");
  const start = lines.indexOf(title);
  if (start < 0) throw new Error(`no section "${title}" in:\n${text}`);
  const end = lines.indexOf("", start);
  return lines.slice(start + 1, end < 0 ? undefined : end);
}

/** Writes, into `dir`, an actions module with one tool, `chargeCard` ({ amount, note? }), that an agent may ask approval for; returns its path. */
export function writeChargeTools(dir: string): string {
  const file = join(dir, "charge-tools.mjs");
  writeFileSync(
    file,
    `export const tools = {
  chargeCard: {
    description: "Charges the customer's card",
    parameters: { type: "object", properties: { amount: { type: "number" }, note: { type: "string" } }, required: ["amount"] },
    run: ({ amount }) => ({ charged: amount }),
  },
};
export default {};
`,
  );
  return file;
}
