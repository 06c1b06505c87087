import { parseArgs } from "node:util";

/**
 * A command's flags, parsed by node's own `util.parseArgs`. meow did this before, but loading it
 * (with the package.json normalizing it brings: semver, SPDX licences) cost about 70 ms of every
 * command's start, a fifth of a `pitwall runs`; parseArgs costs nothing to load.
 */

/** One flag: named in camelCase (`snapshotEvery`), typed as `--snapshot-every`. */
export interface FlagSpec {
  type: "string" | "boolean" | "number";
  /** Repeatable; an array, empty when not given. */
  isMultiple?: boolean;
  /** A one-letter form (`-f`). */
  shortFlag?: string;
}

export type AnyFlags = Record<string, FlagSpec>;

type FlagValue<S extends FlagSpec> = S["type"] extends "string" ? string : S["type"] extends "number" ? number : boolean;

/** The values parsed for `F`, by flag name. */
export type TypedFlags<F extends AnyFlags> = { [K in keyof F]: F[K] extends { isMultiple: true } ? FlagValue<F[K]>[] : FlagValue<F[K]> };

/** A flag's name as typed: `snapshotEvery` → `snapshot-every`. */
export const kebab = (name: string) => name.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`);

export interface ParsedFlags {
  /** The positional arguments, in order (all of them after `--`). */
  input: string[];
  /** By camelCase name: each flag given, and `[]` for each repeatable one not given. */
  flags: Record<string, unknown>;
  /** The flags not among those known, as typed (`--bogus`, `-x`). */
  unknown: string[];
}

/**
 * Parses `argv` against `flags`. `--no-NAME` sets a boolean flag false; `--NAME=true|false` is
 * taken too, and the last of a boolean flag given twice counts. A number flag's value that is
 * not a number is NaN (the caller says which flag). A flag with a value given twice that is not
 * repeatable is an Error naming it.
 */
export function parseFlags(argv: readonly string[], flags: AnyFlags): ParsedFlags {
  const byTyped = new Map(Object.entries(flags).map(([name, spec]) => [kebab(name), { name, spec }]));
  const options = Object.fromEntries(
    [...byTyped].map(([typed, { spec }]) => [
      typed,
      { type: spec.type === "boolean" ? ("boolean" as const) : ("string" as const), multiple: spec.isMultiple ?? false, ...(spec.shortFlag ? { short: spec.shortFlag } : {}) },
    ]),
  );
  const { tokens } = parseArgs({ args: [...argv], options, strict: false, allowPositionals: true, tokens: true });
  const parsed: ParsedFlags = { input: [], flags: {}, unknown: [] };
  for (const [, { name, spec }] of byTyped) if (spec.isMultiple) parsed.flags[name] = [];
  const given = new Set<string>();
  for (const token of tokens) {
    if (token.kind === "positional") parsed.input.push(token.value);
    if (token.kind !== "option") continue;
    const negated = token.name.startsWith("no-") && !byTyped.has(token.name) ? byTyped.get(token.name.slice(3)) : undefined;
    const known = negated?.spec.type === "boolean" ? negated : byTyped.get(token.name);
    if (!known) {
      parsed.unknown.push(token.rawName);
      continue;
    }
    const typed = `--${kebab(known.name)}`;
    const value = known === negated ? false : flagValue(typed, known.spec, token.value);
    if (known.spec.isMultiple) {
      (parsed.flags[known.name] as unknown[]).push(value);
      continue;
    }
    // A switch may be repeated (a script's `--json` beside the user's); the last one counts.
    if (given.has(known.name) && known.spec.type !== "boolean") throw new Error(`${typed} can be given only once`);
    given.add(known.name);
    parsed.flags[known.name] = value;
  }
  return parsed;
}

function flagValue(typed: string, spec: FlagSpec, value: string | undefined): string | number | boolean {
  if (spec.type === "boolean") {
    if (value === undefined || value === "true") return true;
    if (value === "false") return false;
    throw new Error(`${typed} takes no value (it was given ${JSON.stringify(value)})`);
  }
  if (value === undefined) throw new Error(`${typed} needs a value`);
  if (spec.type === "string") return value;
  return value.trim() === "" ? NaN : Number(value);
}
