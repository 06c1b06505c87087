import { ValidationError } from "../errors.js";
import { jsonPath } from "./issues.js";

/**
 * How deep objects and arrays may nest in a value that enters a run's state (its input, a node's
 * result, an operator's edit, a fork's patch). Storing, reading, validating and redacting a
 * value all walk it, some recursively: a value nested thousands of levels deep would overflow
 * the stack there, long after it was accepted. No JSON a workflow means to keep comes near it.
 */
export const MAX_DEPTH = 256;

type Path = (string | number)[];

/** What makes a value one state cannot hold as given. */
export type ValueProblem =
  | { kind: "depth"; path: Path; depth: number }
  /** An own key `__proto__` (JSON.parse makes one): objects built from it would lose it or take it as their prototype. */
  | { kind: "proto"; path: Path }
  /** An object inside itself: JSON cannot write it. */
  | { kind: "cycle"; path: Path }
  /**
   * A value JSON would change or drop as it stores it (a Date becomes a string, a Map `{}`, NaN
   * `null`, a function nothing): the run would read back something else than was written.
   */
  | { kind: "json"; path: Path; what: string };

interface Frame {
  value: object;
  /** An object's own keys; null for an array, walked by index. */
  keys: string[] | null;
  next: number;
  /** Levels of objects and arrays from this one down (1: it holds none). */
  height: number;
  key: string | number | undefined;
  parent: Frame | undefined;
}

/**
 * The first problem of `value`: a key `__proto__`, a cycle, or objects and arrays nested deeper
 * than `limit` (`value` itself at depth 0, its members at 1; `depth` is how deep it goes). It is
 * walked without recursion, so a value of any depth is measured without overflowing the stack,
 * and each object once, however often it is shared.
 */
export function valueProblem(value: unknown, limit = MAX_DEPTH): ValueProblem | undefined {
  if (value === null || typeof value !== "object") {
    const what = notJson(value);
    return what ? { kind: "json", path: [], what } : undefined;
  }
  const what = notJson(value);
  if (what) return { kind: "json", path: [], what };
  walkBudget = QUICK_MEMBERS;
  if (limit >= QUICK_DEPTH && quicklyFine(value, 0)) return undefined;
  const heights = new Map<object, number>();
  const onPath = new Set<object>();
  const enter = (member: object, key: string | number | undefined, parent: Frame | undefined): Frame => {
    onPath.add(member);
    return { value: member, keys: Array.isArray(member) ? null : Object.keys(member), next: 0, height: 1, key, parent };
  };
  const stack: Frame[] = [enter(value, undefined, undefined)];
  while (stack.length > 0) {
    const top = stack[stack.length - 1]!;
    if (top.next === 0 && top.keys?.includes("__proto__")) return { kind: "proto", path: pathOf(top) };
    if (top.next < (top.keys ?? (top.value as unknown[])).length) {
      const key = top.keys ? top.keys[top.next]! : top.next;
      const member = (top.value as Record<string | number, unknown>)[key];
      top.next++;
      const what = notJson(member, top.keys === null);
      if (what) return { kind: "json", path: [...pathOf(top), key], what };
      if (member === null || typeof member !== "object") continue;
      const known = heights.get(member);
      if (known !== undefined) top.height = Math.max(top.height, known + 1);
      else if (onPath.has(member)) return { kind: "cycle", path: [...pathOf(top), key] };
      else stack.push(enter(member, key, top));
      continue;
    }
    stack.pop();
    onPath.delete(top.value);
    heights.set(top.value, top.height);
    if (top.parent) top.parent.height = Math.max(top.parent.height, top.height + 1);
  }
  const depth = heights.get(value)! - 1;
  return depth > limit ? { kind: "depth", path: deepestPath(value, heights), depth } : undefined;
}

/** Past these, a value gets the full walk (with its record of what it has seen). */
const QUICK_DEPTH = 32;
const QUICK_MEMBERS = 10_000;
let walkBudget = 0;

/**
 * Most values (a node's result at each step) are small and shallow: a plain recursive look at
 * them, without the full walk's maps and frames, finds no problem. A cycle or a deep value runs
 * out of depth, a widely shared one out of members, and a `__proto__` key stops it: those get
 * the full walk, which says what the problem is.
 */
function quicklyFine(value: object, depth: number): boolean {
  if (depth >= QUICK_DEPTH || --walkBudget < 0) return false;
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) if (!quicklyFineMember(value[i], depth, true)) return false;
    return true;
  }
  for (const key of Object.keys(value)) {
    if (key === "__proto__" || !quicklyFineMember((value as Record<string, unknown>)[key], depth, false)) return false;
  }
  return true;
}

function quicklyFineMember(member: unknown, depth: number, inArray: boolean): boolean {
  switch (typeof member) {
    case "string":
    case "boolean":
      return true;
    case "number":
      return Number.isFinite(member);
    case "object":
      return member === null || (plainPrototype(member) && quicklyFine(member, depth + 1));
    default:
      return member === undefined && !inArray;
  }
}

function plainPrototype(value: object): boolean {
  const prototype: unknown = Object.getPrototypeOf(value);
  return prototype === Object.prototype || prototype === Array.prototype || prototype === null;
}

/**
 * What `value` is when JSON would not store it as it is, in words; undefined for what it keeps
 * (an `undefined` member of an object is left out, as a node's `undefined` leaves a key as it is;
 * in an array JSON would make it `null`).
 */
function notJson(value: unknown, inArray = false): string | undefined {
  switch (typeof value) {
    case "string":
    case "boolean":
      return undefined;
    case "number":
      return Number.isFinite(value) ? undefined : `the number ${String(value)} (JSON has none: it would become null)`;
    case "undefined":
      return inArray ? "undefined in an array (JSON would make it null)" : undefined;
    case "bigint":
      return "a bigint (JSON has none: give a number or a string)";
    case "function":
      return "a function";
    case "symbol":
      return "a symbol";
    case "object": {
      if (value === null || plainPrototype(value)) return undefined;
      if (value instanceof Date) return "a Date (JSON would make it a string: give date.toISOString())";
      if (value instanceof Map) return "a Map (JSON would make it {}: give an object, or an array of [key, value] pairs)";
      if (value instanceof Set) return "a Set (JSON would make it {}: give an array)";
      const name = (value as { constructor?: { name?: unknown } }).constructor?.name;
      return `an instance of ${typeof name === "string" && name ? name : "a class"} (JSON keeps only its own fields, not what it is: give a plain object)`;
    }
  }
}

/** The first steps of the way to the deepest member (the rest only repeats what they show). */
function deepestPath(value: object, heights: Map<object, number>): Path {
  const path: Path = [];
  let at: unknown = value;
  while (path.length < 5 && at !== null && typeof at === "object") {
    const below = heights.get(at)! - 1;
    const entries: [string | number, unknown][] = Array.isArray(at) ? [...at.entries()] : Object.entries(at);
    const next = entries.find(([, member]) => member !== null && typeof member === "object" && heights.get(member) === below);
    if (!next) break;
    path.push(next[0]);
    at = next[1];
  }
  return path;
}

function pathOf(frame: Frame): Path {
  const path: Path = [];
  for (let f: Frame | undefined = frame; f?.key !== undefined; f = f.parent) path.unshift(f.key);
  return path;
}

/**
 * The problem in words, for `what` (`run input`, `node "fetch" returned a value that`...): the
 * path (its first steps, for a deep one) and the depth, or the `__proto__` key's place.
 */
export function describeValueProblem(what: string, problem: ValueProblem): string {
  if (problem.kind === "proto") {
    return `${what} has a key "__proto__" at ${jsonPath(problem.path)}: a JavaScript object cannot keep it as data (it would set the object's prototype); rename the key`;
  }
  if (problem.kind === "cycle") return `${what} contains itself at ${jsonPath(problem.path)} (a cycle): state is stored as JSON, which cannot hold one`;
  if (problem.kind === "json") return `${what} holds ${problem.what} at ${jsonPath(problem.path)}: state is stored as JSON and read back as it`;
  const shown = problem.path.length > 4 ? `${jsonPath(problem.path.slice(0, 4))}…` : jsonPath(problem.path);
  return `${what} nests objects and arrays ${problem.depth} levels deep (at ${shown}); state holds values at most ${MAX_DEPTH} levels deep`;
}

/** Throws a ValidationError (bad input, exit 2 on the command line) when `value` has a problem. */
export function checkValue(value: unknown, what: string, limit = MAX_DEPTH): void {
  const problem = valueProblem(value, limit);
  if (problem) throwValueProblem(problem, what);
}

/** The ValidationError for `problem` of the value `what` names. */
export function throwValueProblem(problem: ValueProblem, what: string): never {
  throw new ValidationError(describeValueProblem(what, problem), [{ path: jsonPath(problem.path.slice(0, 4)), message: describeValueProblem("the value", problem) }]);
}
