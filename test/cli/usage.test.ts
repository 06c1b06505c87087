import { existsSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { FIXTURES, cliHarness } from "../support/cli.js";

describe("pitwall: usage, errors and exit codes", () => {
  const cli = cliHarness();

  it("without a command prints the help listing every command (exit 0); --version prints the version", async () => {
    const [help, version] = await Promise.all([cli.run([]), cli.run(["--version"])]);
    expect(help.code).toBe(0);
    for (const name of ["validate", "graph", "start", "worker", "runs", "show", "events", "state", "checkpoints", "diff", "interrupts", "resolve", "edit", "kill", "retry", "cancel", "break", "unbreak", "fork", "upgrade", "console", "backup", "prune", "delete", "demo"]) {
      expect(help.stdout).toMatch(new RegExp(`^ {4}${name} +\\S`, "m"));
    }
    expect(version.stdout).toMatch(/^\d+\.\d+\.\d+\n$/);
  });

  it("help prints the usage, help <command> the command's, and a mistyped command says the one meant", async () => {
    const [help, helpStart, startHelp, typo, storeFirst] = await Promise.all([
      cli.run(["help"]),
      cli.run(["help", "start"]),
      cli.run(["start", "--help"]),
      cli.run(["strat"]),
      cli.run(["--store", "sqlite:elsewhere.db", "help", "start"]),
    ]);
    expect([help.code, help.stdout]).toEqual([0, expect.stringContaining("Usage\n    $ pitwall <command> [arguments] [options]")]);
    expect([helpStart.code, helpStart.stdout]).toEqual([0, startHelp.stdout]);
    // A global option before it, as before any command.
    expect([storeFirst.code, storeFirst.stdout]).toEqual([0, startHelp.stdout]);
    expect(helpStart.stdout).toContain("$ pitwall start <workflow.json>");
    expect(helpStart.stdout).toContain("4 a wait's --timeout ran out");
    expect([typo.code, typo.stderr]).toEqual([2, 'pitwall: unknown command "strat" (did you mean "start"?) (pitwall --help lists them)\n']);
  });

  it("<command> --help shows its usage and options", async () => {
    const r = await cli.run(["resolve", "--help"]);
    expect(r.code).toBe(0);
    expect(r.stdout).toContain("$ pitwall resolve <interrupt> (--approve | --reject | --respond TEXT | --edit | --decision NAME)");
    expect(r.stdout).toContain("Exit codes");
  });

  it("a boolean flag is turned off with --no-NAME or NAME=false; tables fit wide characters", async () => {
    await cli.createStore();
    const [on, off, negated] = await Promise.all([cli.run(["runs", "--json=true"]), cli.run(["runs", "--json=false"]), cli.run(["runs", "--json", "--no-json"])]);
    expect([on.code, on.stdout]).toEqual([0, "[]\n"]);
    expect([off.code, off.stdout, off.stderr]).toEqual([0, "", "no runs\n"]);
    expect([negated.code, negated.stdout, negated.stderr]).toEqual([0, "", "no runs\n"]);
    // A cell of wide characters (two columns each) is padded by the columns it takes, not by its characters.
    const workflow = join(cli.dir, "wide.json");
    writeFileSync(workflow, JSON.stringify({ name: "wide", state: {}, start: "等待", nodes: { 等待: { kind: "wait", seconds: 600, next: "END" } } }));
    await cli.run(["start", workflow]);
    await cli.run(["worker", "--once"]);
    const table = await cli.run(["runs"]);
    const [header, row] = table.stdout.split("\n");
    expect(header).toMatch(/ NODES {2}WAITING /);
    // "等待" is four columns wide, under "NODES", five: one space pads it, two part the columns.
    expect(row).toContain(" 等待   - ");
  });

  it("usage mistakes are one line on stderr and exit 2", async () => {
    const cases: [string[], string][] = [
      [["bogus"], 'pitwall: unknown command "bogus" (pitwall --help lists them)'],
      [["runs", "--bogus"], "pitwall runs: unknown flag --bogus (see pitwall runs --help)"],
      [["show"], "pitwall show: usage: pitwall show <run>"],
      [["show", "run-a", "run-b", "x"], 'pitwall show: unexpected arguments "run-b" "x": usage: pitwall show <run>'],
      [["state", "run-a", "2", "--checkpoint", "3"], "pitwall state: give the checkpoint as an argument or with --checkpoint, not both"],
      [["runs", "--limit", "many"], "pitwall runs: --limit needs a number"],
      [["runs", "--limit", "0"], "pitwall runs: --limit must be a whole number of at least 1"],
      [["worker", "--concurrency", "2.5"], "pitwall worker: --concurrency must be a whole number of at least 1"],
      [["worker", "--snapshot-every", "-4"], "pitwall worker: --snapshot-every must be a whole number of at least 1"],
      [["worker", "--lease", "0.5"], "pitwall worker: --lease 0.5: give seconds from 1 to 2147483"],
      [["runs", "--status", "sleeping"], "pitwall runs: --status sleeping: not a run status (queued, running, paused, succeeded, failed, canceled)"],
      [["events", "--type", "task.exploded"], "pitwall events: --type task.exploded: no such event type (for example run.created, run.claimed, run.released, run.paused, or a family like task)"],
      [["runs", "--as", "bad name"], 'pitwall runs: --as "bad name": use letters, digits, \'.\', \'_\', \'@\' or \'-\''],
      [["console"], "pitwall console: needs an interactive terminal (stdin and stdout must be a TTY)"],
      [["demo", "--every", "0.5"], "pitwall demo: --every must be at least 1 (seconds between new runs)"],
      [["worker", "--snapshot-every", "abc"], "pitwall worker: --snapshot-every needs a number"],
      [["runs", "--status", ""], 'pitwall runs: --status "" lists nothing'],
      [["runs", "--version", "1a2"], "pitwall runs: --version 1a2: give the start of a version, 4 to 16 hex characters (as runs prints it: 1a2b3c4d)"],
      [["runs", "--version", "1a2b,run-x"], "pitwall runs: --version run-x: give the start of a version, 4 to 16 hex characters (as runs prints it: 1a2b3c4d)"],
      [["runs", "--durability", "fast"], 'pitwall runs: --durability "fast": use process (survives a process crash) or os (survives power loss)'],
      [["worker", "--id", ""], 'pitwall worker: --id "": use letters, digits, \'.\', \'_\', \'@\', \':\' or \'-\''],
      [["start", `${FIXTURES}/task-queue/workflow.json`, "--interrupt-before", "work,nope"], 'pitwall start: workflow task-queue has no node "nope" to interrupt at'],
      [["prune", "--ended-before", "9999999999999d"], "pitwall prune: --ended-before 9999999999999d: that is further back than any date"],
      [["prune", "--ended-before", "2026-02-30T00:00:00Z"], 'pitwall prune: --ended-before "2026-02-30T00:00:00Z": 2026-02-30 is not a day of the calendar'],
      [["prune", "--ended-before", "2026-11-01T25:00"], 'pitwall prune: --ended-before "2026-11-01T25:00": give a date or a date and time, such as 2026-11-20 or 2026-11-20T03:00 (read in UTC) or 2026-11-20T02:00Z'],
      [["runs", "--limit", "1e400"], "pitwall runs: --limit needs a number"],
      [["runs", "--limit", "2", "--limit=3"], "pitwall runs: --limit can be given only once"],
      [["events", "--follow=yes"], 'pitwall events: --follow takes no value (it was given "yes")'],
      [["runs", "--bogus", "-x"], "pitwall runs: unknown flags --bogus, -x (see pitwall runs --help)"],
      [["start", `${FIXTURES}/task-queue/workflow.json`, "--wait", "--timeout", "-1"], "pitwall start: --timeout -1: give seconds, more than 0 and at most 2147483.647"],
      [["start", `${FIXTURES}/task-queue/workflow.json`, "--interrupt-before", "nope"], 'pitwall start: workflow task-queue has no node "nope" to interrupt at'],
      [["start", `${FIXTURES}/task-queue/workflow.json`, "--input", "null"], "pitwall start: --input null: give a JSON object, the run's starting state (or leave --input out)"],
    ];
    const results = await Promise.all(cases.map(([args]) => cli.run(args)));
    expect(results.map((r) => [r.code, r.stderr])).toEqual(cases.map(([, message]) => [2, `${message}\n`]));
    // A setting from the environment is named as such, not as a flag nobody gave.
    const fromEnv = await cli.run(["runs"], { PITWALL_DURABILITY: "bogus" });
    expect([fromEnv.code, fromEnv.stderr]).toEqual([2, 'pitwall runs: PITWALL_DURABILITY "bogus": use process (survives a process crash) or os (survives power loss)\n']);
  });

  it("a store URL that names no store is bad input (exit 2); one that cannot be opened is a failed operation (exit 1); --debug adds the stack", async () => {
    await cli.createStore();
    const [unsupported, missing, uncreatable, typo, debug] = await Promise.all([
      cli.run(["runs", "--store", "nosql://x"]),
      cli.run(["runs", "--store", "sqlite:/nonexistent/dir/x.db"]),
      cli.run(["start", `${FIXTURES}/task-queue/workflow.json`, "--store", "sqlite:/nonexistent/dir/x.db"]),
      cli.run(["cancel", "run-x", "--reason", "r", "--store", "sqlite:typo.db"]),
      cli.run(["show", "run-nope", "--debug"]),
    ]);
    // A command that acts on what a store holds does not create one for a mistyped path.
    expect([typo.code, typo.stderr]).toEqual([1, "pitwall cancel: store typo.db does not exist (none was created)\n"]);
    expect(existsSync(join(cli.dir, "typo.db"))).toBe(false);
    expect([unsupported.code, unsupported.stderr]).toEqual([2, "pitwall runs: unsupported store URL nosql://x: use memory:, sqlite:<file> or redis://host:port\n"]);
    expect([missing.code, missing.stderr]).toEqual([1, "pitwall runs: store /nonexistent/dir/x.db does not exist (opened read-only, so none was created)\n"]);
    expect(uncreatable.code).toBe(1);
    expect(uncreatable.stderr.trim().split("\n")).toEqual([expect.stringMatching(/^pitwall start: store \/nonexistent\/dir\/x\.db cannot be created/)]);
    expect(debug.code).toBe(2);
    expect(debug.stderr).toMatch(/^pitwall show: run run-nope not found\nNotFoundError: run run-nope not found\n {4}at /);
  });
});
