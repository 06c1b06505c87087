import type { z } from "zod";
import { REPORTED, describeIssues } from "../state/issues.js";
import {
  REDUCER_NAMES,
  jsonPath,
  checkKeySchema,
  keyValidator,
  normalizeKeySchema,
  schemaTypes,
  type StateKeyDefinition,
} from "../state/schema.js";
import { isPlainObject } from "../state/ops.js";
import { RESERVED_NAME_PROBLEM, hiddenCharacter, hiddenCharacterProblem, reservedName } from "./definition.js";
import type { ProblemList } from "./problems.js";
import { checkSchemaContradictions } from "./check-fields.js";
import { checkKeywords } from "./check-keywords.js";

type Path = (string | number)[];

/**
 * Checks a workflow's `state`: each key's schema (the JSON-Schema subset, or any keyword when it
 * came from zod), its reducer, and its default. Returns every key, normalized when it is valid,
 * so that the graph checks still see the keys whose schemas have problems.
 */
export function checkState(
  value: unknown,
  problems: ProblemList,
  customReducers: ReadonlySet<string>,
  anySchemaKeyword: boolean,
): Record<string, StateKeyDefinition> | undefined {
  if (value === undefined) return {};
  if (!isPlainObject(value)) {
    problems.error(["state"], "BAD_STATE_SCHEMA", "`state` must map each key to its schema");
    return undefined;
  }
  const out: Record<string, StateKeyDefinition> = {};
  for (const [key, spec] of Object.entries(value)) {
    const path: Path = ["state", key];
    if (reservedName(key)) {
      problems.error(path, "BAD_STATE_SCHEMA", `"${key}" ${RESERVED_NAME_PROBLEM}`);
      continue;
    }
    const hidden = hiddenCharacter(key);
    if (hidden !== undefined) {
      problems.error(path, "BAD_STATE_SCHEMA", hiddenCharacterProblem("state key", key, hidden));
      continue;
    }
    if (key.includes(".")) {
      // `{{a.b}}` in a template, `show: ["a.b"]` and state paths read a dot as a step into a value.
      problems.error(path, "BAD_STATE_SCHEMA", `state key "${key}" holds a ".", which templates ({{${key}}}) and paths read as a key inside another: name it ${JSON.stringify(key.replace(/\./g, "_"))} or nest it`);
      continue;
    }
    if (!isPlainObject(spec)) {
      problems.error(path, "BAD_STATE_SCHEMA", "a state key needs a schema object such as { \"type\": \"string\" }");
      out[key] = {};
      continue;
    }
    // Graph checks (routeOn, map.over) still see the key when its schema has problems.
    out[key] = spec as StateKeyDefinition;
    const reducer = spec.reducer;
    const types = schemaTypes(spec);
    if (reducer !== undefined) {
      const isCustom = reducer === "custom" && customReducers.has(key);
      if (typeof reducer !== "string" || (!isCustom && !(REDUCER_NAMES as readonly string[]).includes(reducer))) {
        problems.error([...path, "reducer"], "BAD_REDUCER", `unknown reducer ${JSON.stringify(reducer)}; use one of ${REDUCER_NAMES.join(", ")}`);
      } else if (reducer === "append" && !types.includes("array")) {
        problems.error([...path, "reducer"], "BAD_REDUCER", `reducer "append" needs "type": "array" (the key is ${types.join("|") || "untyped"})`);
      } else if (reducer === "merge" && !types.includes("object")) {
        problems.error([...path, "reducer"], "BAD_REDUCER", `reducer "merge" needs "type": "object" (the key is ${types.join("|") || "untyped"})`);
      }
    }
    if (spec.optional !== undefined && typeof spec.optional !== "boolean") {
      problems.error([...path, "optional"], "BAD_STATE_SCHEMA", "optional must be true or false");
    }
    const before = problems.items.length;
    const schemaProblems = anySchemaKeyword ? [] : checkKeySchema(checkKeywords(spec, path, problems));
    const refusedKeywords = problems.items.length > before;
    for (const problem of schemaProblems) {
      problems.error([...path, ...problem.path], "BAD_STATE_SCHEMA", problem.message);
    }
    if (schemaProblems.length > 0 || refusedKeywords) continue;
    checkSchemaContradictions(spec, path, "BAD_STATE_SCHEMA", problems);
    let validator: z.ZodType;
    try {
      validator = keyValidator(spec);
    } catch (error) {
      problems.error(path, "BAD_STATE_SCHEMA", `schema cannot be used: ${(error as Error).message}`);
      continue;
    }
    if ("default" in spec) {
      const result = validator.safeParse(spec.default, REPORTED);
      if (!result.success) {
        const [issue] = describeIssues(result.error.issues);
        const where = issue!.path.length > 0 ? ` at ${jsonPath(issue!.path)}` : "";
        problems.error([...path, "default"], "BAD_STATE_SCHEMA", `default does not match the schema${where}: ${issue!.message}`);
        continue;
      }
    }
    out[key] = normalizeKeySchema(spec);
  }
  return out;
}

