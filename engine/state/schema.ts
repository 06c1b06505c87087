import type { z } from "zod";
import { ValidationError, errorMessage } from "../errors.js";
import { REPORTED, describeIssues, jsonPath } from "./issues.js";
import { throwValueProblem, valueProblem } from "./limits.js";
import { PARSE_EFFECT_PROBLEMS, PARSE_EFFECTS, parseEffectOf, type ParseEffect } from "./parse-effects.js";
import { didYouMean } from "../suggest.js";
import { jsonSchemaOf, lazily, zod } from "../zod.js";

export { jsonPath };

/** The reducers a workflow written as data may name. Code workflows may also pass a function. */
export const REDUCER_NAMES = ["replace", "append", "merge"] as const;
export type ReducerName = (typeof REDUCER_NAMES)[number];

/** A JSON-Schema value as stored in a canonical definition. */
export type JsonSchema = { [key: string]: unknown };

/**
 * One state key as it appears in a workflow's data form: a JSON-Schema subset plus its reducer,
 * and `optional: true` for a key the state may lack (zod's `.optional()`; JSON Schema says that
 * in the enclosing object's `required`, which a state key has none of).
 * `reducer: "custom"` only appears in the canonical form of code workflows (the function is code).
 */
export type StateKeyDefinition = JsonSchema & { reducer?: ReducerName | "custom"; optional?: boolean };

/** A state key's JSON Schema, without what pitwall adds to it (its reducer, whether it is optional). */
function keySchema(definition: JsonSchema): JsonSchema {
  const { reducer: _reducer, optional: _optional, ...schema } = definition;
  return schema;
}

const JSON_TYPES = ["string", "number", "integer", "boolean", "array", "object", "null"] as const;

/** The keywords of the JSON-Schema subset a state key takes in a workflow file. */
export const STATE_SCHEMA_KEYWORDS = [
  "type",
  "items",
  "properties",
  "required",
  "additionalProperties",
  "enum",
  "const",
  "default",
  "description",
  "minimum",
  "maximum",
  "minLength",
  "maxLength",
  "minItems",
  "maxItems",
  "nullable",
  "anyOf",
] as const;

/** The JSON-Schema subset accepted in workflow files; checked before zod builds a validator from it. */
const subsetSchema = lazily(() => {
  const z = zod();
  const subset: z.ZodType<unknown> = z.lazy(() =>
    z
      .object({
        type: z.union([z.enum(JSON_TYPES), z.array(z.enum(JSON_TYPES)).min(1)]).optional(),
        items: subset.optional(),
        properties: z.record(z.string(), subset).optional(),
        required: z.array(z.string()).optional(),
        additionalProperties: z.union([z.boolean(), subset]).optional(),
        enum: z.array(z.unknown()).min(1).optional(),
        // The canonical form writes an enum of numbers as anyOf const branches: it reads back.
        const: z.unknown().optional(),
        default: z.unknown().optional(),
        description: z.string().optional(),
        minimum: z.number().optional(),
        maximum: z.number().optional(),
        minLength: z.number().int().min(0).optional(),
        maxLength: z.number().int().min(0).optional(),
        minItems: z.number().int().min(0).optional(),
        maxItems: z.number().int().min(0).optional(),
        nullable: z.boolean().optional(),
        anyOf: z.array(subset).min(1).optional(),
      } satisfies Record<(typeof STATE_SCHEMA_KEYWORDS)[number], z.ZodType>)
      .strict()
      .superRefine((schema, ctx) => {
        if (schema.type !== undefined) return;
        for (const [keyword, type] of Object.entries(TYPED_KEYWORDS)) {
          if (schema[keyword as keyof typeof schema] === undefined) continue;
          ctx.addIssue({ code: "custom", path: [keyword], message: `${keyword} needs a "type" beside it to be enforced: add "type": "${type}"` });
        }
      }),
  );
  return subset;
});

/**
 * Keywords that constrain values of one JSON type. A schema without `type` would leave them
 * unenforced (zod builds "any value" for it), so they need one.
 */
const TYPED_KEYWORDS = {
  minLength: "string",
  maxLength: "string",
  minimum: "number",
  maximum: "number",
  items: "array",
  minItems: "array",
  maxItems: "array",
  properties: "object",
  required: "object",
  additionalProperties: "object",
} as const;

export interface SchemaProblem {
  /** Path relative to the state key, e.g. `items.type`. Empty for the key itself. */
  path: (string | number)[];
  message: string;
}

/** Checks a state key's schema against the accepted subset. */
export function checkKeySchema(definition: JsonSchema): SchemaProblem[] {
  const parsed = subsetSchema().safeParse(keySchema(definition), REPORTED);
  if (parsed.success) return [];
  return describeIssues(parsed.error.issues);
}

/** Builds the zod validator of one state key from its JSON-Schema form. */
export function keyValidator(definition: JsonSchema): z.ZodType {
  const validator = zod().fromJSONSchema(zodInput(keySchema(definition)));
  return definition.optional === true ? validator.optional() : validator;
}

/** A JSON value of any type: unlike `{}` for zod, it is never undefined (a missing key). */
const ANY_JSON = { type: ["string", "number", "boolean", "object", "array", "null"] };

/** A schema in the form zod's `fromJSONSchema` enforces as JSON Schema means it. */
function zodInput(schema: unknown): Parameters<typeof z.fromJSONSchema>[0] {
  return enforceable(expandNullable(schema)) as Parameters<typeof z.fromJSONSchema>[0];
}

/**
 * Fills in what zod needs to enforce every keyword, at any depth: it checks `minItems` and
 * `maxItems` only on arrays with `items`, and `required` only for keys in `properties` whose
 * schema rejects undefined.
 */
function enforceable(schema: unknown): unknown {
  if (Array.isArray(schema)) return schema.map(enforceable);
  if (schema === null || typeof schema !== "object") return schema;
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(schema)) out[key] = key === "default" || key === "enum" ? value : enforceable(value);
  if ((out.minItems !== undefined || out.maxItems !== undefined) && out.items === undefined) out.items = {};
  // zod enforces a keyword of one type only beside that type: a string format (email, uuid) comes
  // back from its JSON form as `allOf` patterns without one, which would check nothing.
  if (Array.isArray(out.allOf) && out.type !== undefined) {
    out.allOf = out.allOf.map((member: unknown) => (member !== null && typeof member === "object" && !("type" in member) ? { type: out.type, ...member } : member));
  }
  if (Array.isArray(out.required)) {
    const properties = { ...((out.properties as Record<string, unknown> | undefined) ?? {}) };
    for (const key of out.required as string[]) {
      const property = properties[key];
      if (property === undefined || (typeof property === "object" && property !== null && Object.keys(property).length === 0)) properties[key] = ANY_JSON;
    }
    out.properties = properties;
  }
  return out;
}

/** OpenAPI's `nullable: true`, which JSON Schema spells as `anyOf [..., { type: "null" }]`, at any depth. */
function expandNullable(schema: unknown): unknown {
  if (Array.isArray(schema)) return schema.map(expandNullable);
  if (schema === null || typeof schema !== "object") return schema;
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(schema)) {
    out[key] = key === "default" || key === "enum" ? value : expandNullable(value);
  }
  if (out.nullable !== true) {
    delete out.nullable;
    return out;
  }
  const { nullable: _n, default: fallback, description, ...rest } = out;
  return {
    anyOf: [rest, { type: "null" }],
    ...(fallback !== undefined ? { default: fallback } : {}),
    ...(description !== undefined ? { description } : {}),
  };
}

/**
 * The JSON-Schema form of a zod schema, normalized so that the same schema written in code or
 * as data gives the same canonical text (and so the same workflow version).
 */
export function zodToKeySchema(schema: z.ZodType, origin: "code" | "json" = "code"): JsonSchema {
  // State is stored as JSON: a type JSON cannot hold (a Date, a Map) throws, rather than being
  // stored unchecked and coming back as something else after a restart.
  let json: JsonSchema;
  const effects = new Set<ParseEffect>();
  try {
    json = jsonSchemaOf(schema, {
      io: "input",
      unrepresentable: "throw",
      override: ({ zodSchema }) => {
        const effect = origin === "code" ? parseEffectOf(zodSchema) : undefined;
        if (effect) effects.add(effect);
      },
    });
  } catch (error) {
    throw new Error(`${errorMessage(error)}: state is stored as JSON (a time as z.string() or z.number(), a map as z.record())`);
  }
  // A transform has no output form (the input form skips over it).
  try {
    zod().toJSONSchema(schema, { io: "output", unrepresentable: "throw" });
  } catch {
    effects.add("transform");
  }
  const refused = PARSE_EFFECTS.find((effect) => effects.has(effect));
  if (refused) throw new Error(PARSE_EFFECT_PROBLEMS[refused]);
  // A key the state may lack: undefined passes, and stays undefined (a default would fill it in).
  const absent = schema.safeParse(undefined);
  return absent.success && absent.data === undefined ? { ...json, optional: true } : json;
}

export function normalizeKeySchema(definition: JsonSchema): JsonSchema {
  const { reducer, optional } = definition;
  const normalized = zodToKeySchema(keyValidator(keySchema(definition)), "json");
  return { ...normalized, ...(optional === true ? { optional } : {}), ...(reducer === undefined || reducer === "replace" ? {} : { reducer }) };
}

export function schemaTypes(definition: JsonSchema): string[] {
  const type = definition.type;
  if (typeof type === "string") return [type];
  if (Array.isArray(type)) return type.filter((t): t is string => typeof t === "string");
  return [];
}

export type StateDefinition = Record<string, StateKeyDefinition>;

/**
 * Validates whole states against a workflow's state definition. Built from the stored JSON form,
 * so the console and CLI validate edits exactly as a worker would, without loading user code.
 */
export class StateValidator {
  private readonly object: z.ZodType<Record<string, unknown>>;
  private readonly keys: Map<string, z.ZodType>;
  private readonly items = new Map<string, z.ZodType | null>();

  constructor(
    private readonly state: StateDefinition,
    overrides: Record<string, z.ZodType> = {},
  ) {
    this.keys = new Map(
      Object.entries(state).map(([key, def]) => [key, overrides[key] ?? keyValidator(def)] as const),
    );
    this.object = zod().strictObject(Object.fromEntries(this.keys)) as unknown as z.ZodType<Record<string, unknown>>;
  }

  has(key: string): boolean {
    return this.keys.has(key);
  }

  /**
   * Checks one node write before it is recorded. Appended items are checked one by one against
   * the array's item schema, so a list that grows every step is not re-validated whole each time.
   */
  checkWrite(key: string, value: unknown, reducer: ReducerName, current: unknown): string | undefined {
    const validator = this.keys.get(key);
    if (!validator) return `state has no key "${key}"`;
    if (reducer === "append") {
      const items = Array.isArray(value) ? value : [value];
      const itemValidator = this.itemValidator(key);
      if (itemValidator) {
        for (let i = 0; i < items.length; i++) {
          const result = parseReported(itemValidator, items[i]);
          if (!result.success) return firstIssue(`$.${key}[+${i}]`, result.error);
        }
        return undefined;
      }
      value = (Array.isArray(current) ? current : []).concat(items);
    } else if (reducer === "merge") {
      value = { ...(typeof current === "object" && current !== null ? current : {}), ...(value as object) };
    }
    const result = parseReported(validator, value);
    return result.success ? undefined : firstIssue(jsonPath([key]), result.error);
  }

  private itemValidator(key: string): z.ZodType | null {
    if (!this.items.has(key)) {
      const items = this.state[key]?.items;
      this.items.set(key, items && typeof items === "object" ? keyValidator(items as JsonSchema) : null);
    }
    return this.items.get(key) ?? null;
  }

  /** Defaults filled in; throws a ValidationError naming every failing path. */
  parseInput(input: unknown, what = "run input"): Record<string, unknown> {
    if (input === undefined || input === null) input = {};
    return this.parse(input, what, missingInputHint);
  }

  parse(state: unknown, what = "state", hint?: (issue: { path: string; message: string }) => string | undefined): Record<string, unknown> {
    // Before zod, which would drop a `__proto__` key unsaid, and overflow the stack on a deep value;
    // a value JSON would not keep as it is, after: what a key's schema says of it comes first.
    const problem = valueProblem(state);
    if (problem && problem.kind !== "json") throwValueProblem(problem, what);
    const result = parseReported(this.object, state);
    if (result.success) {
      if (problem) throwValueProblem(problem, what);
      return result.data;
    }
    // A key the state does not have comes first, with the key meant: its misspelling is often
    // why a key it needs is missing (`tickte` for `ticket`).
    const unknown = result.error.issues.flatMap((issue) =>
      issue.code === "unrecognized_keys" && issue.path.length === 0
        ? [{ path: "$", message: `unknown key${issue.keys.length > 1 ? "s" : ""} ${issue.keys.map((key) => `${key}${didYouMean(key, this.keys.keys())}`).join(", ")}` }]
        : [],
    );
    const others = describeIssues(result.error.issues.filter((issue) => !(issue.code === "unrecognized_keys" && issue.path.length === 0)));
    const issues = [...unknown, ...others.map((issue) => ({ path: jsonPath(issue.path), message: issue.message }))];
    const first = issues[0]!;
    const more = issues.length > 1 ? ` (and ${issues.length - 1} more)` : "";
    const said = hint?.(first);
    throw new ValidationError(`${what} is invalid at ${first.path}: ${first.message}${said ? `: ${said}` : ""}${more}`, issues);
  }
}

/** A key a node writes later is often what a start is refused for: both ways out. */
function missingInputHint(issue: { path: string; message: string }): string | undefined {
  const topLevelKey = /^\$\.[^.[]+$/.test(issue.path) || /^\$\["[^\]]*"\]$/.test(issue.path);
  return topLevelKey && issue.message.startsWith("missing") ? "give it in the input, or give the key a default (or make it optional) in the workflow's state" : undefined;
}

function firstIssue(prefix: string, error: z.ZodError): string {
  const [issue] = describeIssues(error.issues);
  return `${prefix}${jsonPath(issue!.path).slice(1)}: ${issue!.message}`;
}

/**
 * `safeParse` with the given values in the issues (describeIssues words them). Asking zod for
 * them makes every parse an order of magnitude slower, and nodes' writes are parsed at every
 * step: they are asked for only when a first parse fails (a parse is deterministic).
 */
function parseReported<T>(schema: z.ZodType<T>, value: unknown): z.ZodSafeParseResult<T> {
  const quick = schema.safeParse(value);
  return quick.success ? quick : schema.safeParse(value, REPORTED);
}

/**
 * Validates a value against a JSON Schema (an interrupt's response, a tool's arguments); throws a
 * ValidationError naming the failing path, as state validation does.
 */
export function checkJson(schema: JsonSchema, value: unknown, what: string): unknown {
  const result = zod().fromJSONSchema(zodInput(schema)).safeParse(value, REPORTED);
  if (result.success) return result.data;
  const issues = describeIssues(result.error.issues).map((issue) => ({ path: jsonPath(issue.path), message: issue.message }));
  throw new ValidationError(`${what} is invalid at ${issues[0]!.path}: ${issues[0]!.message}`, issues);
}
