import type { NodeDefinition, SubgraphNodeDefinition } from "./definition.js";
import type { CheckedChild } from "./check.js";
import type { ProblemList } from "./problems.js";
import { isPlainObject } from "../state/ops.js";
import { withArticle } from "./check-fields.js";
import { schemaTypes, type JsonSchema, type StateKeyDefinition } from "../state/schema.js";

type Path = (string | number)[];

/**
 * A sub-workflow's `input` maps child keys from parent keys and its `output` parent keys from
 * child keys: each name must be a key of the state it names (a wrong one failed the child run's
 * input, or was dropped, only at run time), a child key without a default must be given (by the
 * mapping, or by the map's item), and a value must be able to have the type of the key it goes to.
 */
export function checkSubgraphMappings(nodes: Record<string, NodeDefinition>, state: Record<string, StateKeyDefinition>, children: ReadonlyMap<string, CheckedChild>, problems: ProblemList): void {
  for (const [name, node] of Object.entries(nodes)) {
    if (node.kind !== "subgraph" || typeof node.workflow !== "string") continue;
    const child = children.get(node.workflow);
    if (child) checkMappings(name, node, state, child, problems);
    if (child && node.catch) checkChildFailsUp(name, child, problems);
  }
}

/**
 * A sub-workflow node's catch takes its child run's failure; a child node that fails for good
 * pauses the child for an operator instead (unless its retry says `onExhausted: "fail"`, or it
 * has a catch of its own), and the parent waits: the catch would see that failure only if someone
 * canceled the child.
 */
function checkChildFailsUp(name: string, child: CheckedChild, problems: ProblemList): void {
  const pausing = Object.entries(child.definition.nodes)
    .filter(([, n]) => n.kind !== "approval" && n.kind !== "wait" && !n.catch && n.retry?.onExhausted !== "fail")
    .map(([n]) => n);
  if (pausing.length === 0) return;
  const listed = pausing.length > 3 ? `${pausing.slice(0, 3).join(", ")} and ${pausing.length - 3} more` : pausing.join(", ");
  problems.warning(
    ["nodes", name, "catch"],
    "CATCH_NEVER_REACHED",
    `the catch takes the child run's failure, but a node of ${child.definition.name} that fails for good (${listed}) pauses the child for an operator, and this run waits: give ${pausing.length > 1 ? "them" : "it"} retry.onExhausted "fail" (or a catch of ${pausing.length > 1 ? "their" : "its"} own)`,
  );
}

function checkMappings(name: string, node: SubgraphNodeDefinition, state: Record<string, StateKeyDefinition>, child: CheckedChild, problems: ProblemList): void {
  const childState = child.definition.state;
  const childName = child.definition.name;
  const fits = new FitCheck(problems, childName);
  const itemKey = node.map ? (node.map.as ?? "item") : undefined;
  for (const [childKey, parentKey] of Object.entries(node.input ?? {})) {
    const path = ["nodes", name, "input", childKey];
    if (!Object.hasOwn(childState, childKey)) problems.error(path, "UNKNOWN_STATE_KEY", `the sub-workflow ${childName} has no state key "${childKey}"`);
    if (!Object.hasOwn(state, parentKey)) problems.error(path, "UNKNOWN_STATE_KEY", `state has no key "${parentKey}" to give the sub-workflow`);
    if (Object.hasOwn(childState, childKey) && Object.hasOwn(state, parentKey) && childKey !== itemKey) fits.input(path, parentKey, childKey, state[parentKey]!, childState[childKey]!);
  }
  for (const [parentKey, childKey] of Object.entries(node.output ?? {})) {
    const path = ["nodes", name, "output", parentKey];
    if (!Object.hasOwn(state, parentKey)) problems.error(path, "UNKNOWN_STATE_KEY", `state has no key "${parentKey}" to receive the sub-workflow's "${childKey}"`);
    if (!Object.hasOwn(childState, childKey)) problems.error(path, "UNKNOWN_STATE_KEY", `the sub-workflow ${childName} has no state key "${childKey}"`);
    if (Object.hasOwn(childState, childKey) && Object.hasOwn(state, parentKey)) fits.output(path, parentKey, childKey, childState[childKey]!, state[parentKey]!);
  }
  // Keys both states have are mapped by name, both ways, unless `input` / `output` says otherwise.
  for (const key of Object.keys(childState).filter((k) => Object.hasOwn(state, k))) {
    const path = ["nodes", name, "workflow"];
    const refused = !node.input && key !== itemKey && fits.input(path, key, key, state[key]!, childState[key]!, "by name");
    // A pair of types that cannot meet is said once, for the way in.
    if (!node.output && refused !== "error") fits.output(path, key, key, childState[key]!, state[key]!, "by name");
  }

  const given = node.input ? new Set(Object.keys(node.input)) : new Set(Object.keys(childState).filter((k) => Object.hasOwn(state, k)));
  if (node.map && itemKey !== undefined) {
    const path = ["nodes", name, "map", ...(node.map.as !== undefined ? ["as"] : [])];
    if (!Object.hasOwn(childState, itemKey)) {
      problems.error(
        path,
        "BAD_SUBGRAPH",
        `each item of "${node.map.over}" goes into the sub-workflow's state key "${itemKey}", which ${childName} does not have: declare "${itemKey}" in its state, or name the key that receives the item with map.as`,
      );
    } else if (node.input && Object.hasOwn(node.input, itemKey)) {
      problems.error(["nodes", name, "input", itemKey], "BAD_SUBGRAPH", `"${itemKey}" receives each item of "${node.map.over}" (map.as), so \`input\` cannot also map it`);
    } else {
      const items = Object.hasOwn(state, node.map.over) ? state[node.map.over]!.items : undefined;
      if (isPlainObject(items)) fits.item(path, node.map.over, itemKey, items, childState[itemKey]!);
    }
    given.add(itemKey);
  }
  for (const [key, definition] of Object.entries(childState)) {
    if (!given.has(key) && definition.default === undefined && definition.optional !== true) {
      problems.error(["nodes", name, node.input ? "input" : "workflow"], "BAD_SUBGRAPH", `the sub-workflow ${childName} needs state key "${key}" (it has no default), and ${node.input ? "`input` does not map it" : "the parent has no key of that name"}`);
    }
  }
}

type Severity = "error" | "warning";

/**
 * Whether values of one key can be values of the key they are mapped to (`typeMisfit`): a value
 * the child's input or the parent's update would refuse failed the sub-workflow node only at run
 * time, after its retries.
 */
class FitCheck {
  constructor(
    private readonly problems: ProblemList,
    private readonly childName: string,
  ) {}

  input(path: Path, parentKey: string, childKey: string, from: JsonSchema, to: JsonSchema, byName?: "by name"): Severity | undefined {
    const shared = byName ? ` (${byName}, as \`input\` is not given)` : "";
    return this.report(path, from, to, `state key "${parentKey}" holds %from, and the sub-workflow ${this.childName}'s "${childKey}"${shared} takes %to`, "the child run's input");
  }

  output(path: Path, parentKey: string, childKey: string, from: JsonSchema, to: StateKeyDefinition, byName?: "by name"): Severity | undefined {
    const shared = byName ? ` (${byName}, as \`output\` is not given)` : "";
    const write = writeInto(from, to);
    const whose = write.value === from ? `"${childKey}" holds` : `"${childKey}"'s items are`;
    const takes = write.appends ? "appends" : "takes";
    return this.report(path, write.value, write.into, `the sub-workflow ${this.childName}'s ${whose} %from, and state key "${parentKey}"${shared} ${takes} %to`, "the node's update of the parent");
  }

  item(path: Path, over: string, itemKey: string, from: JsonSchema, to: JsonSchema): Severity | undefined {
    return this.report(path, from, to, `each item of "${over}" is %from, and the sub-workflow ${this.childName}'s "${itemKey}", which receives it, takes %to`, "the child run's input");
  }

  private report(path: Path, fromSchema: JsonSchema, toSchema: JsonSchema, template: string, refuser: string): Severity | undefined {
    const misfit = typeMisfit(fromSchema, toSchema);
    if (!misfit) return undefined;
    const what = template.replace("%from", misfit.from.join("|")).replace("%to", misfit.to.join("|"));
    if (misfit.severity === "error") this.problems.error(path, "BAD_SUBGRAPH", `${what}: ${refuser} would be refused at run time`);
    else this.problems.warning(path, "BAD_SUBGRAPH", `${what}: ${misfit.which} would be refused by ${refuser} at run time`);
    return misfit.severity;
  }
}

/**
 * What a write must fit to go into a state key: the key itself, or, when the key appends, one of
 * its items — the value written being one item, or, when it is a list, the list's items.
 */
export function writeInto(value: JsonSchema, key: StateKeyDefinition): { value: JsonSchema; into: JsonSchema; appends: boolean } {
  if (key.reducer !== "append") return { value, into: key, appends: false };
  const items = (schema: JsonSchema): JsonSchema => (isPlainObject(schema.items) ? schema.items : {});
  return { value: valueTypes(value).includes("array") ? items(value) : value, into: items(key), appends: true };
}

export interface TypeMisfit {
  /** The JSON types each side's values may have. */
  from: string[];
  to: string[];
  /** An error when no value of `from` fits `to`, a warning when some do. */
  severity: Severity;
  /** The values that do not fit, in words ("a string or a number that is not whole"). */
  which: string;
}

/**
 * Whether values of one schema can be values of another, by their JSON-Schema `type`s: an integer
 * is a number, a number fits an integer only when whole (a warning), and a schema without a
 * `type` takes and gives anything.
 */
export function typeMisfit(fromSchema: JsonSchema, toSchema: JsonSchema): TypeMisfit | undefined {
  const from = valueTypes(fromSchema);
  const to = valueTypes(toSchema);
  if (from.length === 0 || to.length === 0) return undefined;
  const misfits = from.filter((t) => !(to.includes(t) || (t === "integer" && to.includes("number"))));
  if (misfits.length === 0) return undefined;
  const meets = misfits.length < from.length || (misfits.includes("number") && to.includes("integer"));
  const which = misfits.map((t) => (t === "number" && to.includes("integer") ? "a number that is not whole" : withArticle(t))).join(" or ");
  return { from, to, severity: meets ? "warning" : "error", which };
}

/**
 * The JSON types a key's values may have; none when its schema names no `type` (anything goes).
 * Normalized schemas spell a list of types, or a nullable type, as `anyOf` branches.
 */
export function valueTypes(schema: JsonSchema): string[] {
  const branches = schema.anyOf ?? schema.oneOf;
  if (schemaTypes(schema).length === 0 && Array.isArray(branches)) {
    const each = branches.map((b) => (isPlainObject(b) ? valueTypes(b) : []));
    return each.some((types) => types.length === 0) ? [] : [...new Set(each.flat())];
  }
  const types = schemaTypes(schema);
  return types.length > 0 && schema.nullable === true && !types.includes("null") ? [...types, "null"] : types;
}
