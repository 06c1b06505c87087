import { applyPatch, createPatch, createTests, type Operation } from "rfc6902";
import { ValidationError, errorMessage } from "../errors.js";
import { opsBetween, reduceWrites, isPlainObject, type ChannelOp, type Reducer, type State } from "./ops.js";
import type { StateValidator } from "./schema.js";

/**
 * An operator's state edit: an RFC 6902 JSON Patch (an array of operations), or a partial state
 * (an object) whose keys are written through the workflow's reducers like a node's update.
 */
export type StatePatch = Operation[] | Record<string, unknown>;

const JSON_PATCH_OPS = new Set(["add", "remove", "replace", "move", "copy", "test"]);

/** How a failed `test` operation ends its message: the state changed since the patch was made. */
const STALE = "as the patch expects (the state changed since it was read?)";

/** An edit refused because the state changed under it (a guarded patch's `test` failed). */
export function isStaleEdit(error: unknown): boolean {
  return error instanceof ValidationError && error.message.includes(STALE);
}

/** Why rfc6902 refused an operation, in words rather than its error class names. */
function patchFailure(op: Operation, error: Error): string {
  switch (error.name) {
    case "TestError": {
      const { actual, expected } = error as Error & { actual: unknown; expected: unknown };
      return `the value at ${op.path} is ${JSON.stringify(actual)}, not ${JSON.stringify(expected)} ${STALE}`;
    }
    case "MissingError":
      return `nothing exists at ${(error as Error & { path?: string }).path || op.path}`;
    case "InvalidOperationError":
      return `"${op.op}" is not a JSON Patch operation`;
    default:
      return error.message || error.name;
  }
}

/** An operation's shape, checked before any is applied: each refusal names the operation and what it lacks. */
function checkOperation(op: unknown, i: number): void {
  const refuse = (why: string): never => {
    throw new ValidationError(`patch operation ${i} ${why}`, [{ path: `$[${i}]`, message: why }]);
  };
  if (!isPlainObject(op) || typeof op.op !== "string" || typeof op.path !== "string") refuse('is not a JSON Patch operation ({ "op", "path", ... })');
  const { op: name, path, from } = op as { op: string; path: string; from?: unknown };
  if (!JSON_PATCH_OPS.has(name)) refuse(`has op "${name}": use one of ${[...JSON_PATCH_OPS].join(", ")}`);
  const pointer = (p: string) => p === "" || p.startsWith("/");
  if (!pointer(path)) refuse(`(${name} ${path}): the path must be a JSON Pointer starting with "/" (e.g. "/${path}")`);
  if ((name === "add" || name === "replace" || name === "test") && !("value" in (op as object))) refuse(`(${name} ${path}) needs a "value"`);
  if ((name === "move" || name === "copy") && (typeof from !== "string" || !pointer(from))) refuse(`(${name} ${path}) needs a "from" JSON Pointer starting with "/"`);
  for (const [field, p] of [["path", path], ["from", from]] as const) {
    const blocked = typeof p === "string" ? blockedToken(p) : undefined;
    if (blocked?.token === "__proto__") refuse(`(${name} ${path}) has a ${field} through "__proto__", a key state cannot hold (it would set an object's prototype)`);
    if (blocked !== undefined) {
      refuse(`(${name} ${path}) has a ${field} through "${blocked.token}", which rfc6902 steps over (the value would land elsewhere): replace the value that holds it whole, at ${blocked.above || "/"}`);
    }
  }
}

/**
 * Names that rfc6902 skips in a JSON Pointer, so that a patch cannot reach an object's prototype:
 * a path through one would write somewhere else than it says.
 */
const SKIPPED_TOKENS = new Set(["__proto__", "constructor", "prototype"]);

function tokensOf(pointer: string): string[] {
  return pointer.split("/").slice(1).map((t) => t.replace(/~1/g, "/").replace(/~0/g, "~"));
}

function pointerOf(tokens: readonly string[]): string {
  return tokens.map((t) => `/${t.replace(/~/g, "~0").replace(/\//g, "~1")}`).join("");
}

/** The first skipped name on a pointer's way, with the pointer of the value holding it. */
function blockedToken(pointer: string): { token: string; above: string } | undefined {
  const tokens = tokensOf(pointer);
  const i = tokens.findIndex((t) => SKIPPED_TOKENS.has(t));
  return i < 0 ? undefined : { token: tokens[i]!, above: pointerOf(tokens.slice(0, i)) };
}

/**
 * The JSON Patch that turns `before` into `after` (an operator's edit of the state they read),
 * led by tests that the values it replaces or removes still hold what `before` held: applied to
 * a state someone else has changed there since, it is refused instead of undoing their change.
 */
export function editPatch(before: unknown, after: unknown): Operation[] {
  const patch = reachable(createPatch(before, after), after);
  return [...createTests(before, patch), ...patch];
}

/**
 * A change under a key named `constructor` or `prototype` (which a patch cannot pass through, see
 * checkOperation) made as a replacement of the value that holds that key, whole.
 */
function reachable(patch: Operation[], after: unknown): Operation[] {
  const out: Operation[] = [];
  const replaced = new Set<string>();
  for (const op of patch) {
    const blocked = [op.path, (op as { from?: string }).from].map((p) => (p === undefined ? undefined : blockedToken(p))).find((b) => b !== undefined);
    if (!blocked) {
      out.push(op);
      continue;
    }
    if (replaced.has(blocked.above)) continue;
    replaced.add(blocked.above);
    let value = after;
    for (const token of tokensOf(blocked.above)) value = (value as Record<string, unknown>)[token];
    out.push({ op: "replace", path: blocked.above, value });
  }
  return out;
}

export function isJsonPatch(patch: unknown): patch is Operation[] {
  return Array.isArray(patch);
}

/**
 * Applies a patch and validates the whole result against the state schema. On any problem it
 * throws a ValidationError naming the failing path; the input state is never modified.
 */
export function applyStatePatch(
  state: State,
  patch: unknown,
  validator: StateValidator,
  reducerOf: (key: string) => Reducer,
  writer = "operator",
): { state: State; ops: ChannelOp[] } {
  let next: State;
  if (isJsonPatch(patch)) {
    patch.forEach(checkOperation);
    const copy = structuredClone(state);
    patch.forEach((op, i) => {
      let failure: Error | null;
      try {
        [failure = null] = applyPatch(copy, [op]);
      } catch (error) {
        // rfc6902 throws, rather than reports, when a path goes through a value that is not a container.
        failure = new Error(blockedPath(copy, op.path) ?? `a value on the way to ${op.path} is not an object or an array that can hold it (${errorMessage(error)})`);
      }
      if (failure) {
        const why = patchFailure(op, failure);
        throw new ValidationError(`patch operation ${i} (${op.op} ${op.path}) cannot be applied: ${why}`, [{ path: op.path, message: why }]);
      }
    });
    next = copy;
  } else if (isPlainObject(patch)) {
    const writes = Object.entries(patch).map(([key, value]) => ({ key, value, writer }));
    try {
      next = reduceWrites(state, writes, reducerOf).state;
    } catch (error) {
      throw new ValidationError(`state patch cannot be applied: ${(error as Error).message}`);
    }
  } else {
    throw new ValidationError("a state patch must be a JSON Patch array or a partial state object");
  }
  const validated = validator.parse(next, "edited state");
  return { state: validated, ops: opsBetween(state, validated) };
}

/** Where a JSON Pointer runs into a value that holds nothing (a string, a number): `/request holds a string, which cannot hold "x"`. */
function blockedPath(doc: unknown, pointer: string): string | undefined {
  const tokens = tokensOf(pointer);
  let value = doc;
  for (let i = 0; i < tokens.length - 1; i++) {
    value = (value as Record<string, unknown>)[tokens[i]!];
    if (value === null || typeof value !== "object") {
      const at = `/${tokens.slice(0, i + 1).join("/")}`;
      return value === undefined ? `nothing exists at ${at}` : `${at} holds ${value === null ? "null" : `a ${typeof value}`}, which cannot hold "${tokens[i + 1]}"`;
    }
  }
  return undefined;
}
