import { kebab, type AnyFlags } from "./flags.js";

/** `--as`, `--store`...: the flags of `flags` that take a value, as typed. */
function valueFlags(flags: AnyFlags): Set<string> {
  return new Set(Object.entries(flags).filter(([, f]) => f.type !== "boolean").map(([name]) => `--${kebab(name)}`));
}

/**
 * Finds the command: the first argument that is not a flag (global flags may come before it).
 * Returns the other arguments, to be parsed with that command's flags.
 */
export function splitCommand(argv: readonly string[], globalFlags: AnyFlags): { name: string | undefined; rest: string[] } {
  const takesValue = valueFlags(globalFlags);
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!;
    if (arg === "--") break;
    if (!arg.startsWith("-")) return { name: arg, rest: [...argv.slice(0, i), ...argv.slice(i + 1)] };
    if (takesValue.has(arg)) i++;
  }
  return { name: undefined, rest: [...argv] };
}

/**
 * A flag that takes a value given without one — last on the line, or followed by another flag
 * (`--as --json`). The parser would quietly take "" or the next flag as its value.
 */
export function flagWithoutValue(argv: readonly string[], flags: AnyFlags): string | undefined {
  const takesValue = valueFlags(flags);
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!;
    if (arg === "--") return undefined;
    if (!takesValue.has(arg)) continue;
    const next = argv[i + 1];
    if (next === undefined || (next.startsWith("--") && next.length > 2)) return arg;
    i++;
  }
  return undefined;
}

/** Why a command line that names no command is wrong, in a few words. */
export function whyNoCommand(argv: readonly string[], globalFlags: AnyFlags, commands: readonly string[]): string {
  const takesValue = valueFlags(globalFlags);
  const known = new Set([...Object.keys(globalFlags).map((n) => `--${kebab(n)}`), "-h"]);
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!;
    const flag = arg.split("=")[0]!;
    if (!known.has(flag)) return `unknown option ${flag}`;
    if (!takesValue.has(arg)) continue;
    const value = argv[i + 1];
    if (value === undefined) return `${arg} needs a value`;
    if (commands.includes(value)) return `${arg} needs a value (it took "${value}", which is a command)`;
    i++;
  }
  return "no command given";
}
