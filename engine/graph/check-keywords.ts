import { STATE_SCHEMA_KEYWORDS } from "../state/schema.js";
import { isPlainObject } from "../state/ops.js";
import { closest } from "../suggest.js";
import type { ProblemList } from "./problems.js";

type Path = (string | number)[];

const SUBSET = STATE_SCHEMA_KEYWORDS.join(", ");

/**
 * JSON Schema keywords state keys in workflow files refuse on purpose: the subset is what pitwall
 * enforces the same way wherever a state is checked; a keyword beyond it is refused rather than
 * ignored, so that no rule a workflow states goes unchecked. What to write instead, where there is one.
 */
const REFUSED: Record<string, string> = {
  oneOf: "use anyOf",
  allOf: "combine the keywords in one schema",
  exclusiveMinimum: "use minimum",
  exclusiveMaximum: "use maximum",
  title: "use description",
  examples: "use description",
  pattern: "check the text in the node that writes it",
  format: "check the text in the node that writes it",
};
const ALSO_REFUSED = ["not", "if", "then", "else", "$ref", "$defs", "definitions", "$schema", "$id", "multipleOf", "uniqueItems", "contains", "prefixItems", "minProperties", "maxProperties", "patternProperties", "propertyNames", "dependentRequired", "dependentSchemas", "unevaluatedProperties", "unevaluatedItems"];

/**
 * Reports each keyword of a state key's schema, at any depth, that the subset does not take — at
 * its own path (`$.state.j.Default`), with the keyword meant or why it is refused — and returns
 * the schema without them, for the subset's other checks.
 */
export function checkKeywords(spec: Record<string, unknown>, path: Path, problems: ProblemList, top = true): Record<string, unknown> {
  const known: readonly string[] = top ? [...STATE_SCHEMA_KEYWORDS, "reducer", "optional"] : STATE_SCHEMA_KEYWORDS;
  const out: Record<string, unknown> = {};
  for (const [keyword, value] of Object.entries(spec)) {
    if (!known.includes(keyword)) {
      problems.error([...path, keyword], "BAD_STATE_SCHEMA", unknownKeyword(keyword, known));
      continue;
    }
    out[keyword] = nested(keyword, value, [...path, keyword], problems);
  }
  return out;
}

function nested(keyword: string, value: unknown, path: Path, problems: ProblemList): unknown {
  if ((keyword === "items" || keyword === "additionalProperties") && isPlainObject(value)) return checkKeywords(value, path, problems, false);
  if (keyword === "anyOf" && Array.isArray(value)) return value.map((v, i) => (isPlainObject(v) ? checkKeywords(v, [...path, i], problems, false) : v));
  if (keyword === "properties" && isPlainObject(value)) {
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, isPlainObject(v) ? checkKeywords(v, [...path, k], problems, false) : v]));
  }
  return value;
}

function unknownKeyword(keyword: string, known: readonly string[]): string {
  if (Object.hasOwn(REFUSED, keyword) || ALSO_REFUSED.includes(keyword)) return refused(keyword);
  const meant = closest(keyword, [...known, ...Object.keys(REFUSED)]);
  if (meant === undefined) return `unknown keyword "${keyword}" (state schemas take ${SUBSET}${known.includes("reducer") ? ", and reducer and optional" : ""})`;
  return `unknown keyword "${keyword}" (did you mean "${meant}"?${known.includes(meant) ? "" : ` ${refused(meant)}`})`;
}

function refused(keyword: string): string {
  const instead = REFUSED[keyword];
  return `"${keyword}" is refused in state schemas of workflow files, which take the JSON-Schema subset ${SUBSET}${instead ? `: ${instead}` : ""}`;
}
