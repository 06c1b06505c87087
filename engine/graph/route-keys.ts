import type { NodeDefinition } from "./definition.js";
import type { ProblemList } from "./problems.js";
import { schemaTypes, type JsonSchema, type StateKeyDefinition } from "../state/schema.js";
import { isPlainObject } from "../state/ops.js";
import { didYouMean } from "../suggest.js";

/**
 * The route keys a `routeOn` state key can produce. The run reads a string value as it is and any
 * other value as its JSON text (`true`, `3`); null (and a missing value) chooses no route, so
 * the run takes `default`. `any` when the key may hold any text.
 */
type RouteKeys =
  | { any: true }
  | {
      any: false;
      /** The keys its few values give (a boolean's, an enum's). */
      keys: Set<string>;
      /** Any number's JSON text (`integer`: whole numbers only). */
      numbers?: "number" | "integer";
      /** Null is one of its values (it then chooses the default). */
      nullable: boolean;
    };

const ANY: RouteKeys = { any: true };

function routeKeysOf(schema: JsonSchema): RouteKeys {
  if (Array.isArray(schema.enum)) return fromValues(schema.enum);
  if ("const" in schema) return fromValues([schema.const]);
  const branches = schema.anyOf ?? schema.oneOf;
  const types = schemaTypes(schema);
  if (types.length === 0 && Array.isArray(branches)) {
    return union(branches.map((b) => (isPlainObject(b) ? routeKeysOf(b) : ANY)));
  }
  if (types.length === 0) return ANY;
  const out = union(types.map(routeKeysOfType));
  return !out.any && schema.nullable === true ? { ...out, nullable: true } : out;
}

function routeKeysOfType(type: string): RouteKeys {
  switch (type) {
    case "boolean":
      return fromValues([true, false]);
    case "null":
      return fromValues([null]);
    case "number":
    case "integer":
      return { any: false, keys: new Set(), numbers: type, nullable: false };
    // Text is any key; an object's or array's JSON text is one nobody writes as a route, but can be.
    default:
      return ANY;
  }
}

function fromValues(values: readonly unknown[]): RouteKeys {
  const keys = new Set<string>();
  let nullable = false;
  for (const v of values) {
    if (v === null || v === undefined) nullable = true;
    else keys.add(typeof v === "string" ? v : JSON.stringify(v));
  }
  return { any: false, keys, nullable };
}

function union(parts: readonly RouteKeys[]): RouteKeys {
  const out = { any: false as const, keys: new Set<string>(), numbers: undefined as "number" | "integer" | undefined, nullable: false };
  for (const part of parts) {
    if (part.any) return ANY;
    for (const k of part.keys) out.keys.add(k);
    if (part.numbers === "number" || (part.numbers === "integer" && out.numbers === undefined)) out.numbers = part.numbers;
    out.nullable ||= part.nullable;
  }
  const { numbers, ...rest } = out;
  return numbers === undefined ? rest : { ...rest, numbers };
}

function canProduce(domain: RouteKeys, key: string): boolean {
  if (domain.any || domain.keys.has(key)) return true;
  if (domain.numbers === undefined) return false;
  const n = Number(key);
  return key.trim() !== "" && Number.isFinite(n) && JSON.stringify(n) === key && (domain.numbers === "number" || Number.isInteger(n));
}

/** `a boolean (true or false)`, `one of "lo", "hi"`: what a key holds, as route keys see it. */
function describe(domain: Exclude<RouteKeys, { any: true }>): string {
  const values = [...domain.keys].map((k) => JSON.stringify(k));
  const isBoolean = values.length === 2 && domain.keys.has("true") && domain.keys.has("false") && !domain.numbers;
  const parts = [
    ...(isBoolean ? ["a boolean (true or false)"] : values.length > 0 ? [`one of ${values.join(", ")}`] : []),
    ...(domain.numbers ? [`${domain.numbers === "integer" ? "an integer" : "a number"} (a route key like "3")`] : []),
  ];
  return `${parts.join(" or ") || "only null"}${domain.nullable ? ", or null" : ""}`;
}

/**
 * A route a node's `routeOn` key can never choose is an error: the run would take `default`
 * without a word (routes `yes`/`no` on a boolean, `LO` for an enum value `lo`). A `null` route
 * is one too: null chooses no route.
 */
export function checkRouteKeys(node: NodeDefinition, path: (string | number)[], state: Record<string, StateKeyDefinition>, problems: ProblemList): void {
  const key = node.routeOn !== undefined && Object.hasOwn(state, node.routeOn) ? state[node.routeOn]! : undefined;
  if (!key || !node.routes) return;
  const domain = routeKeysOf(key);
  if (domain.any) return;
  for (const route of Object.keys(node.routes)) {
    if (canProduce(domain, route)) continue;
    const nullRoute = route === "null" && domain.nullable ? `: null chooses no route, so when ${node.routeOn} is null the run takes \`default\`` : "";
    const near = nullRoute ? "" : didYouMean(route, domain.keys);
    problems.error([...path, "routes", route], "INVALID_FIELD", `route "${route}" can never be chosen: ${node.routeOn} is ${describe(domain)}${nullRoute}${near}`);
  }
}

/**
 * A `routeOn` key that always holds one of a few values, each with a route, needs no default: a
 * boolean with routes `true` and `false`, an enum with a route per value. A key that may be
 * absent or null chooses no route.
 */
export function routeOnCovered(node: NodeDefinition, state: Record<string, StateKeyDefinition>): boolean {
  const key = node.routeOn !== undefined ? state[node.routeOn] : undefined;
  if (!key || (key.optional === true && key.default === undefined)) return false;
  const domain = routeKeysOf(key);
  return !domain.any && !domain.nullable && domain.numbers === undefined && [...domain.keys].every((k) => Object.hasOwn(node.routes!, k));
}
