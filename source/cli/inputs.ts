import { UsageError } from "./errors.js";
import { checkTags, errorMessage, fileProblem, parseJsonText, readTextFile, zonedInstant, type RunTags } from "../../engine/index.js";

/**
 * A flag that takes JSON inline or from a file: `--patch '{"a":1}'`, `--patch @edit.json`,
 * `--patch @-` (standard input). Errors name the flag and where the JSON broke.
 */
export function readJsonArgument(flag: string, text: string): unknown {
  let source = text;
  let origin = "";
  if (text.startsWith("@")) {
    const file = text.slice(1);
    if (file === "") throw new UsageError(`--${flag} @ names no file: give @FILE, or @- for standard input`);
    origin = file === "-" ? " (from standard input)" : ` (from ${file})`;
    try {
      source = readTextFile(file === "-" ? 0 : file);
    } catch (error) {
      throw new UsageError(`--${flag}: cannot read ${file}: ${fileProblem(error)}`);
    }
  }
  const parsed = parseJsonText(source);
  if (parsed.error !== undefined) throw new UsageError(`--${flag}${origin} is not valid JSON: ${parsed.error}`);
  return parsed.value;
}

/** A start's `--input`: a run's starting state (`{}` when not given); `null` written out is a mistake. */
export function startInput(text: string | undefined): unknown {
  const input = text === undefined ? {} : readJsonArgument("input", text);
  // The engine takes null for "no input"; written out on a command line it is a mistake.
  if (input === null) throw new UsageError("--input null: give a JSON object, the run's starting state (or leave --input out)");
  return input;
}

export type PathPart = string | number;

/**
 * Parses a state path as people type it: `operation.limit`, `$.tasks[0]`, `a["b c"]`, or a JSON
 * Pointer (`/operation/limit`).
 */
export function parsePath(text: string): PathPart[] {
  if (text.startsWith("/")) {
    return text
      .slice(1)
      .split("/")
      .map((p) => p.replace(/~1/g, "/").replace(/~0/g, "~"));
  }
  const parts: PathPart[] = [];
  const source = text.startsWith("$") ? text.slice(1) : text;
  const token = /\.?([A-Za-z_$][\w$-]*)|\[(\d+)\]|\[("(?:[^"\\]|\\.)*")\]/y;
  let at = 0;
  while (at < source.length) {
    token.lastIndex = at;
    const m = token.exec(source);
    if (!m) {
      throw new UsageError(`"${text}" is not a state path (use a.b[0].c, $.a.b or /a/b)`);
    }
    if (m[1] !== undefined) parts.push(m[1]);
    else if (m[2] !== undefined) parts.push(Number(m[2]));
    else parts.push(JSON.parse(m[3]!) as string);
    at = token.lastIndex;
  }
  if (parts.length === 0) throw new UsageError(`"${text}" is not a state path: it names no key`);
  return parts;
}

function pointer(parts: readonly PathPart[]): string {
  return parts.map((p) => `/${String(p).replace(/~/g, "~0").replace(/\//g, "~1")}`).join("");
}

export interface JsonPatchOp {
  op: "add" | "replace";
  path: string;
  value: unknown;
}

/**
 * `--set path=value` as a JSON Patch operation against the current state: `replace` where the
 * path exists (so an array item is replaced, not inserted before), `add` where it does not. The
 * value is JSON when it parses as JSON, else the text itself.
 */
export function setOperation(assignment: string, state: unknown): JsonPatchOp {
  const eq = assignment.indexOf("=");
  if (eq <= 0) throw new UsageError(`--set ${assignment}: expected path=value`);
  const parts = parsePath(assignment.slice(0, eq));
  const raw = assignment.slice(eq + 1);
  let value: unknown = raw;
  try {
    value = JSON.parse(raw);
  } catch {
    // Plain text: `--set note=hello` sets the string "hello".
  }
  let parent: unknown = state;
  for (const part of parts.slice(0, -1)) {
    parent = parent !== null && typeof parent === "object" ? (parent as Record<PathPart, unknown>)[part] : undefined;
  }
  const last = parts[parts.length - 1]!;
  const exists = parent !== null && typeof parent === "object" && Object.hasOwn(parent, Array.isArray(parent) ? Number(last) : last);
  return { op: exists ? "replace" : "add", path: pointer(parts), value };
}

/**
 * The state patch of a command from `--patch` and `--set`: one JSON Patch when both are given
 * (so `--patch` must then be an array), the partial-state object of `--patch` alone otherwise.
 */
export async function statePatch(options: { patch?: string; set?: readonly string[] }, state: () => Promise<unknown>): Promise<unknown> {
  const patch = options.patch === undefined ? undefined : readJsonArgument("patch", options.patch);
  const sets = options.set ?? [];
  if (sets.length === 0) return patch;
  if (patch !== undefined && !Array.isArray(patch)) {
    throw new UsageError("--patch must be a JSON Patch array to be combined with --set");
  }
  const current = await state();
  return [...((patch as unknown[] | undefined) ?? []), ...sets.map((s) => setOperation(s, current))];
}

const UNIT_MS = { s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000, w: 604_800_000 } as const;

/** `30d`, `12h`, `90m`, `45s`, `2w` in milliseconds; undefined for text that is not one. */
function durationMs(text: string): number | undefined {
  const age = /^(\d+)([smhdw])$/.exec(text.trim());
  return age ? Number(age[1]) * UNIT_MS[age[2] as keyof typeof UNIT_MS] : undefined;
}

/** A length of time given as `30d`, `12h`, `90m`, `45s` or `2w`, of at least a minute. */
export function durationFlag(flag: string, text: string): number {
  const ms = durationMs(text);
  if (ms === undefined) throw new UsageError(`--${flag} takes a length of time (30d, 12h, 90m), not ${JSON.stringify(text)}`);
  if (ms < 60_000) throw new UsageError(`--${flag} ${text}: give at least a minute (1m)`);
  return ms;
}

/** A length of time in seconds, given as seconds (`90`, `0.5`) or as `45s`, `90m`, `24h`, `2d`, `1w`; above 0. */
export function secondsFlag(flag: string, text: string): number {
  const seconds = /^\d+(\.\d+)?$/.test(text.trim()) ? Number(text) : (durationMs(text) ?? NaN) / 1000;
  if (!(seconds > 0)) throw new UsageError(`--${flag} takes a length of time above 0 (seconds, or 45s, 90m, 24h, 2d), not ${JSON.stringify(text)}`);
  return seconds;
}

/** A moment given as an age (`30d`, `12h`, `90m`: that long before `now`) or as a date/time. */
export function pastMoment(flag: string, text: string, now = Date.now()): number {
  const ageMs = durationMs(text);
  if (ageMs !== undefined) {
    const at = now - ageMs;
    // Dates reach back about 273,790 years; an age beyond that names no moment.
    if (Number.isNaN(new Date(at).getTime())) throw new UsageError(`--${flag} ${text}: that is further back than any date`);
    return at;
  }
  // Not an age: a date, read as the schedules read theirs (a time without an offset is UTC's, as
  // the commands print times). A text that is not even shaped like one is told both forms.
  if (!/^\s*\d{4}-/.test(text)) throw new UsageError(`--${flag} takes an age (30d, 12h, 90m) or a date and time (2026-11-01T00:00:00Z), not ${JSON.stringify(text)}`);
  try {
    return zonedInstant(text, "UTC", `--${flag}`);
  } catch (error) {
    throw new UsageError(errorMessage(error));
  }
}

/**
 * A flag given once or more, each value a comma-separated list (`--status paused,failed` or
 * `--status paused --status failed`). A value that lists nothing is refused rather than ignored.
 */
export function listFlag(flag: string, values: readonly string[] | undefined): string[] {
  return (values ?? []).flatMap((value) => {
    const items = value.split(",").map((item) => item.trim()).filter(Boolean);
    if (items.length === 0) throw new UsageError(`--${flag} ${JSON.stringify(value)} lists nothing`);
    return items;
  });
}

/** `--tag NAME=VALUE`, repeated: the tags they give, checked as a start checks them. */
export function tagFlags(values: readonly string[] | undefined): RunTags | undefined {
  if (!values?.length) return undefined;
  const tags: RunTags = {};
  for (const value of values) {
    const at = value.indexOf("=");
    if (at <= 0) throw new UsageError(`--tag ${JSON.stringify(value)}: give NAME=VALUE (ticket=123)`);
    const name = value.slice(0, at);
    if (Object.hasOwn(tags, name)) throw new UsageError(`--tag ${name} is given twice`);
    tags[name] = value.slice(at + 1);
  }
  try {
    return checkTags(tags);
  } catch (error) {
    throw new UsageError(`--tag: ${(error as Error).message}`);
  }
}
