import type { z } from "zod";

type Path = (string | number)[];

export interface Issue {
  path: Path;
  message: string;
}

/**
 * Parse options for values whose issues describeIssues words: the given value in each issue,
 * and an integer's type named "integer" (zod's own issue says "expected number" of a value that is
 * no number at all, even where the schema takes integers only).
 */
export const REPORTED: z.core.ParseContext<z.core.$ZodIssue> = { reportInput: true, error: integerExpected };

function integerExpected(issue: z.core.$ZodRawIssue): undefined {
  if (issue.code === "invalid_type" && issue.expected === "number" && takesIntegers(issue.inst)) (issue as { expected: string }).expected = "int";
  return undefined;
}

/** A zod number that takes whole numbers only: `z.int()`, or a number with an integer format check. */
function takesIntegers(inst: unknown): boolean {
  const def = (inst as { _zod?: { def?: { format?: unknown; checks?: { _zod?: { def?: { format?: unknown } } }[] } } } | undefined)?._zod?.def;
  const formats = [def?.format, ...(def?.checks ?? []).map((c) => c._zod?.def?.format)];
  return formats.some((f) => typeof f === "string" && f.includes("int"));
}

/**
 * Zod's issues in words a person acts on: the path of the field that is wrong (inside unions
 * too: a nullable object reports its bad field, not "Invalid input" at the object), what was
 * expected, and what was given. Parse with `REPORTED` so that the given value is known.
 */
export function describeIssues(issues: readonly z.core.$ZodIssue[], base: Path = []): Issue[] {
  return issues.flatMap((issue) => describeIssue(issue, base));
}

/** One issue in words; a union's issue is the chosen branch's issues, every one of them (an object's every bad field). */
function describeIssue(issue: z.core.$ZodIssue, base: Path): Issue | Issue[] {
  const path = [...base, ...(issue.path as Path)];
  const input = (issue as { input?: unknown }).input;
  switch (issue.code) {
    case "invalid_type":
      if (issue.expected === "int" && Number.isFinite(input)) return { path, message: `must be an integer, got ${shown(input)}` };
      return {
        path,
        message: input === undefined ? `missing (expected ${typeName(issue.expected)})` : `expected ${typeName(issue.expected)}, got ${kindOf(input)}`,
      };
    case "too_big":
    case "too_small":
      // A schema's own message (a field's limit explained) stands; zod's default ("Too big: expected number to be <=5") is reworded.
      if (!/^Too (big|small): /.test(issue.message)) return { path, message: issue.message };
      return { path, message: `${bound(issue)}, got ${sizeOf(issue.origin, input)}` };
    case "invalid_value":
      // A required choice left out: what it may be, not `undefined is not one of ...`.
      if (input === undefined) return { path, message: `missing (expected ${orList(issue.values.map((v) => JSON.stringify(v)))})` };
      return { path, message: `${shown(input)} is not one of ${issue.values.map((v) => JSON.stringify(v)).join(", ")}` };
    case "unrecognized_keys":
      return { path, message: `unknown key${issue.keys.length > 1 ? "s" : ""} ${issue.keys.join(", ")}` };
    case "invalid_union": {
      // The branch that got furthest is the one the value meant to match.
      const branches = issue.errors.filter((branch) => branch.length > 0);
      const deep = branches.filter((branch) => branch.some((i) => i.path.length > 0 || i.code !== "invalid_type"));
      const chosen = deep.sort((a, b) => depth(b) - depth(a))[0];
      if (chosen) return chosen.flatMap((inner) => describeIssue(inner, path));
      const expected = [...new Set(branches.flatMap((b) => b.flatMap((i) => (i.code === "invalid_type" ? [typeName(i.expected)] : []))))];
      if (expected.length === 0) return { path, message: issue.message };
      return { path, message: input === undefined ? `missing (expected ${expected.join(" or ")})` : `expected ${expected.join(" or ")}, got ${kindOf(input)}` };
    }
    case "invalid_format":
      if (issue.format === "regex" && issue.pattern !== undefined) {
        // A format's pattern (an email address's) runs to hundreds of characters.
        const pattern = issue.pattern.length > 60 ? `${issue.pattern.slice(0, 59)}…` : issue.pattern;
        return { path, message: `${shown(input)} does not match the pattern ${pattern}` };
      }
      return { path, message: issue.message };
    default:
      return { path, message: issue.message };
  }
}

/** `must be at most 5`, `must have at least 2 items`: a bound in words. */
function bound(issue: z.core.$ZodIssueTooBig | z.core.$ZodIssueTooSmall): string {
  const big = issue.code === "too_big";
  const limit = Number(big ? (issue as z.core.$ZodIssueTooBig).maximum : (issue as z.core.$ZodIssueTooSmall).minimum);
  const inclusive = issue.inclusive !== false;
  const relation = big ? (inclusive ? "at most" : "below") : inclusive ? "at least" : "above";
  switch (issue.origin) {
    case "string":
      return `must be ${relation} ${limit} character${limit === 1 ? "" : "s"} long`;
    case "array":
    case "set":
      return `must have ${relation.replace("below", "fewer than").replace("above", "more than")} ${limit} item${limit === 1 ? "" : "s"}`;
    case "object":
      return `must have ${relation.replace("below", "fewer than").replace("above", "more than")} ${limit} key${limit === 1 ? "" : "s"}`;
    default:
      return `must be ${relation} ${limit}`;
  }
}

/** The given value's size, as its bound counts it. */
function sizeOf(origin: string, input: unknown): string {
  if (typeof input === "string" && origin === "string") return `${input.length}`;
  if (Array.isArray(input)) return `${input.length}`;
  if (origin === "object" && input !== null && typeof input === "object") return `${Object.keys(input).length}`;
  return shown(input);
}

/** `"a"`, `"a" or "b"`, `"a", "b" or "c"`. */
function orList(items: readonly string[]): string {
  return items.length <= 1 ? items.join("") : `${items.slice(0, -1).join(", ")} or ${items.at(-1)}`;
}

/** Zod's names for types, in JSON Schema's words (the words a workflow's state is written in). */
function typeName(expected: string): string {
  return ({ int: "integer", record: "object", map: "object", tuple: "array" } as Record<string, string>)[expected] ?? expected;
}

function depth(branch: readonly z.core.$ZodIssue[]): number {
  return Math.max(...branch.map((i) => i.path.length));
}

function kindOf(value: unknown): string {
  if (value === null) return "null";
  if (Array.isArray(value)) return "an array";
  if (typeof value === "object") return "an object";
  if (typeof value === "number" && !Number.isFinite(value)) return `${value} (not a finite number)`;
  return `${typeof value} ${shown(value)}`;
}

function shown(value: unknown): string {
  const text = JSON.stringify(value) ?? String(value);
  return text.length > 40 ? `${text.slice(0, 40)}…` : text;
}

/** `["a", 0, "b c"]` → `$.a[0]["b c"]`, the path notation used in every pitwall message. */
export function jsonPath(path: readonly (string | number | symbol)[]): string {
  let out = "$";
  for (const part of path) {
    if (typeof part === "number") out += `[${part}]`;
    else if (typeof part === "string" && /^[A-Za-z_$][\w$-]*$/.test(part)) out += `.${part}`;
    else out += `[${JSON.stringify(String(part))}]`;
  }
  return out;
}
