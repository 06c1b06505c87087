import { readFileSync } from "node:fs";
import { join } from "node:path";
import { defaultActor, didYouMean } from "../engine/index.js";
import { COMMANDS } from "./commands/index.js";
import { flagWithoutValue, splitCommand, whyNoCommand } from "./cli/argv.js";
import { CLOSE_WAIT_MS, Resources, createsStore, stopsOnSignal, type Command, type GlobalOptions } from "./cli/command.js";
import { DEFAULT_STORE, loadConfig } from "./cli/config.js";
import { EXIT, UsageError, describeError, errorJson, exitCodeOf, type ExitCode } from "./cli/errors.js";
import { kebab, parseFlags, type AnyFlags } from "./cli/flags.js";
import { Output } from "./cli/output.js";
import { packageRoot } from "./cli/typescript.js";
import { clean } from "./text/plain.js";

const VERSION = (JSON.parse(readFileSync(join(packageRoot(), "package.json"), "utf8")) as { version: string }).version;

const GLOBAL_FLAGS = {
  store: { type: "string" },
  durability: { type: "string" },
  json: { type: "boolean" },
  as: { type: "string" },
  config: { type: "string" },
  debug: { type: "boolean" },
  help: { type: "boolean", shortFlag: "h" },
} as const satisfies AnyFlags;

const GLOBAL_HELP = `
  Global options (before or after the command)
    --store URL      sqlite:./pitwall.db (default), memory:, redis://host:6379/0; or PITWALL_STORE
    --durability D   process (default: survives a process crash) or os (survives power loss); or PITWALL_DURABILITY
    --config FILE    a JSON file with "store", "durability", "actions" and "secretKeys" (default: ./pitwall.config.json if present)
    --as NAME        who you are, recorded on every command that writes (default: your OS user)
    --json           machine-readable output (JSON; one JSON object per line for streams)
    --debug          print stack traces of errors

  Exit codes
    0 ok · 1 the operation failed (a waited-for run failed) · 2 bad input or usage · 3 conflict (already resolved,
    stale, wrong state) · 4 a wait's --timeout ran out (the run goes on)`;

function mainHelp(): string {
  const width = Math.max(...COMMANDS.map((c) => c.name.length));
  const lines = COMMANDS.map((c) => `    ${c.name.padEnd(width)}  ${c.summary}`);
  return `
  pitwall ${VERSION}: durable graph workflows for LLM agents, and the console to run them.

  Usage
    $ pitwall <command> [arguments] [options]

  Commands
${lines.join("\n")}

  Run "pitwall help <command>" (or "pitwall <command> --help") for a command's arguments and options.
${GLOBAL_HELP}`;
}

function commandHelp(command: Command): string {
  return `
  ${command.summary}

  Usage
    $ pitwall ${command.usage}
${command.details ? `\n${indent(command.details, 4)}\n` : ""}${GLOBAL_HELP}
`;
}

function indent(text: string, n: number): string {
  return text
    .split("\n")
    .map((l) => (l ? " ".repeat(n) + l : l))
    .join("\n");
}

/** Runs one command line and returns its exit code; errors become one line on stderr. */
async function main(argv: readonly string[]): Promise<ExitCode> {
  const { name, rest } = splitCommand(argv, GLOBAL_FLAGS);
  // Known before the flags are parsed, so that an error in them is reported as JSON too.
  let json = rest.includes("--json");
  const fail = (command: string | undefined, error: unknown): ExitCode => {
    process.stderr.write(json ? `${errorJson(command, error)}\n` : `pitwall${command ? ` ${command}` : ""}: ${clean(describeError(error))}\n`);
    return exitCodeOf(error);
  };
  if (name === undefined) {
    if (rest.includes("--version")) {
      process.stdout.write(`${VERSION}\n`);
      return EXIT.ok;
    }
    if (rest.length === 0 || rest.includes("--help") || rest.includes("-h")) {
      process.stdout.write(`${mainHelp()}\n`);
      return EXIT.ok;
    }
    return fail(undefined, new UsageError(`${whyNoCommand(rest, GLOBAL_FLAGS, COMMANDS.map((c) => c.name))} (pitwall --help lists the commands and options)`));
  }
  // `pitwall help` is `pitwall --help`; `pitwall help start` is `pitwall start --help`.
  if (name === "help") {
    // The first word that is no global option's value (`pitwall --store F help fork`).
    const topic = splitCommand(rest, GLOBAL_FLAGS).name;
    if (topic === undefined) {
      process.stdout.write(`${mainHelp()}\n`);
      return EXIT.ok;
    }
    return main([topic, "--help"]);
  }
  const command = COMMANDS.find((c) => c.name === name);
  if (!command) return fail(undefined, new UsageError(`unknown command "${name}"${didYouMean(name, COMMANDS.map((c) => c.name))} (pitwall --help lists them)`));
  let debug = rest.includes("--debug");
  const resources: { current?: Resources } = {};
  const controller = new AbortController();
  const onSignal = () => {
    // A second Ctrl-C leaves at once; so does one while the store is still being opened: nothing
    // has begun that could stop cleanly, and a server that does not answer would keep the command
    // until its connect timeout.
    if (controller.signal.aborted && command.exitsWhenDone) {
      process.stderr.write(`pitwall ${command.name}: stopping at once; the runs it held wait for their leases to run out before another worker takes them\n`);
    }
    if (controller.signal.aborted || resources.current?.opening) process.exit(130);
    controller.abort();
  };
  try {
    const sub = parseCommandLine(command, rest);
    if (sub.flags.help) {
      process.stdout.write(`${commandHelp(command)}\n`);
      return EXIT.ok;
    }
    // Any other command is left to the signal's own action, which ends it at once: a handler would
    // wait for the event loop, which a long listing into a full pipe does not reach.
    if (stopsOnSignal(command, sub.flags as never)) {
      process.on("SIGINT", onSignal);
      process.on("SIGTERM", onSignal);
    }
    const flags = sub.flags as Record<string, unknown>;
    debug = Boolean(flags.debug);
    json = Boolean(flags.json);
    const config = loadConfig(flags.config as string | undefined);
    const durability = (flags.durability as string | undefined) ?? (process.env.PITWALL_DURABILITY || undefined) ?? config.durability;
    if (durability !== undefined && durability !== "process" && durability !== "os") {
      const from = flags.durability !== undefined ? "--durability" : process.env.PITWALL_DURABILITY ? "PITWALL_DURABILITY" : "durability in the config file";
      throw new UsageError(`${from} ${JSON.stringify(durability)}: use process (survives a process crash) or os (survives power loss)`);
    }
    const global: GlobalOptions = {
      store: (flags.store as string | undefined) ?? (process.env.PITWALL_STORE || undefined) ?? config.store ?? DEFAULT_STORE,
      ...(durability ? { durability } : {}),
      json: Boolean(flags.json),
      actor: defaultActor(flags.as as string | undefined),
      debug,
      config,
      secretKeys: [...new Set([...config.secretKeys, ...(process.env.PITWALL_SECRET_KEYS ?? "").split(",").map((k) => k.trim()).filter(Boolean)])],
    };
    if (flags.as !== undefined && !/^[\w.@-]+$/.test(String(flags.as))) {
      throw new UsageError(`--as ${JSON.stringify(flags.as)}: use letters, digits, '.', '_', '@' or '-'`);
    }
    const res = new Resources(global, { ...command, createsStore: createsStore(command, sub.flags as never) });
    resources.current = res;
    const out = new Output(global.json);
    const code = await command.run({
      args: sub.input,
      flags: sub.flags as never,
      global,
      out,
      signal: controller.signal,
      store: (readOnly) => res.store(readOnly),
      operator: () => res.operator(),
      actions: (paths) => res.actions(paths),
    });
    return code ?? EXIT.ok;
  } catch (error) {
    const code = fail(command.name, error);
    if (debug && error instanceof Error && error.stack) process.stderr.write(`${error.stack}\n`);
    return code;
  } finally {
    if ((await resources.current?.close().catch(() => true)) === false) {
      process.stderr.write(`pitwall ${command.name}: the store did not close within ${CLOSE_WAIT_MS} ms (is it reachable?); exiting without waiting\n`);
      abandoned = true;
    }
    process.off("SIGINT", onSignal);
    process.off("SIGTERM", onSignal);
    if (command.exitsWhenDone) abandoned = true;
  }
}

/** The command's own flags and arguments; unknown flags and wrong counts are usage errors. */
function parseCommandLine(command: Command, argv: readonly string[]) {
  const flags: AnyFlags = { ...GLOBAL_FLAGS, ...command.flags };
  const bare = flagWithoutValue(argv, flags);
  if (bare) throw new UsageError(`${bare} needs a value`);
  let sub: ReturnType<typeof parseFlags>;
  try {
    sub = parseFlags(argv, flags);
  } catch (error) {
    throw new UsageError((error as Error).message);
  }
  // With the command, `ps` and `pkill -f "pitwall worker"` tell a worker from a console (its
  // arguments, which may hold a store's password, stay hidden).
  process.title = `pitwall ${command.name}`;
  if (sub.flags.help) return sub;
  if (sub.unknown.length > 0) throw new UsageError(`unknown flag${sub.unknown.length > 1 ? "s" : ""} ${sub.unknown.join(", ")} (see pitwall ${command.name} --help)`);
  for (const [name, f] of Object.entries(flags)) {
    const values = [sub.flags[name]].flat().filter((v) => v !== undefined);
    if (f.type === "number" && values.some((v) => !Number.isFinite(v))) throw new UsageError(`--${kebab(name)} needs a number`);
  }
  if (sub.input.length > command.args.max) {
    const extra = sub.input.slice(command.args.max);
    throw new UsageError(`unexpected argument${extra.length > 1 ? "s" : ""} ${extra.map((a) => JSON.stringify(a)).join(" ")}: usage: pitwall ${command.usage}`);
  }
  if (sub.input.length < command.args.min) throw new UsageError(`usage: pitwall ${command.usage}`);
  return sub;
}

// `pitwall events | head` closes the pipe early: that is the reader's choice, not an error.
process.stdout.on("error", (error: NodeJS.ErrnoException) => {
  if (error.code === "EPIPE") process.exit(process.exitCode ?? 0);
  throw error;
});

/**
 * The store's connection was left open (it stopped answering), or user code may still run (a
 * worker's abandoned nodes): nothing else would end the process.
 */
let abandoned = false;
process.exitCode = await main(process.argv.slice(2));
if (abandoned) process.exit();
