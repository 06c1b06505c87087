import type { z } from "zod";
import { END, NODE_KINDS, RESERVED_NAME_PROBLEM, hiddenCharacter, hiddenCharacterProblem, reservedName, asList, definitionSchemas, type NodeDefinition, type NodeKind, type WorkflowDefinition } from "./definition.js";
import { ProblemList, type Occurrences, type Problem } from "./problems.js";
import { REPORTED, describeIssues } from "../state/issues.js";
import { workflowVersion } from "./canonical.js";
import { keyValidator } from "../state/schema.js";
import { checkState } from "./check-state.js";
import { checkGraph, type LostNode } from "./check-graph.js";
import type { LostDefinition } from "./parse-json.js";
import { checkSubgraphMappings } from "./check-subgraph.js";
import { checkMappedWrites } from "./check-mapped-writes.js";
import { checkBackoff, checkNodeFields, checkSchemaContradictions, repeatedEntries } from "./check-fields.js";
import { isPlainObject } from "../state/ops.js";
import { fieldsAt, nodeHint, unknownField } from "./field-hints.js";
import { didYouMean } from "../suggest.js";

type Path = (string | number)[];

/** A subgraph's child, already checked: its canonical definition and version. */
export interface CheckedChild {
  definition: WorkflowDefinition;
  version: string;
}

export interface CheckOptions {
  /** When given, an action it says why it lacks (a message) is reported as UNKNOWN_ACTION. */
  missingAction?: (name: string) => string | undefined;
  /** When given, tools not in it are reported as UNKNOWN_TOOL. */
  hasTool?: (name: string) => boolean;
  /**
   * Resolves a subgraph node's `workflow` field (a file path, an inline definition, or a version);
   * `within`, for a node's definition a later one replaced: which one (`[[1, occurrence]]`).
   */
  resolveChild?: (ref: string | Record<string, unknown>, path: Path, problems: ProblemList, within?: Occurrences) => CheckedChild | undefined;
  /** Reducers given as functions in code; canonically recorded as `custom`. */
  customReducers?: ReadonlySet<string>;
  /**
   * The definitions of nodes a document names more than once that a later one replaced (a JSON
   * key written twice: JSON keeps the last; a node the builder was given twice), `occurrence`
   * counting from 0 in the order written.
   * Each is checked too, and its edges count for reachability, since which one was meant is unknown.
   */
  lostNodes?: readonly LostDefinition[];
  /**
   * Workflow files may use only a JSON-Schema subset for state keys; schemas the code builder
   * derived from zod may use any keyword zod emits.
   */
  anySchemaKeyword?: boolean;
}

export interface CheckResult {
  definition?: WorkflowDefinition;
  version?: string;
  problems: Problem[];
  /** Every child workflow reachable through subgraph nodes, by version. */
  children: Map<string, CheckedChild>;
}

/**
 * Checks a workflow document and returns every problem found, each with its JSON path and a
 * stable code, plus — when there is no error — its canonical definition and version.
 */
export function checkWorkflow(value: unknown, options: CheckOptions = {}, problems = new ProblemList()): CheckResult {
  const children = new Map<string, CheckedChild>();
  if (!isPlainObject(value)) {
    problems.error([], "INVALID_FIELD", "a workflow must be a JSON object");
    return { problems: problems.items, children };
  }
  const allowed = new Set(["$schema", "name", "description", "state", "start", "nodes", "limits", "interruptBefore", "interruptAfter"]);
  for (const key of Object.keys(value)) {
    if (!allowed.has(key)) problems.error([key], "INVALID_FIELD", unknownField(key, allowed, "workflow"));
  }
  const name = value.name;
  if (typeof name !== "string" || !/^[\w.-]+$/.test(name)) {
    problems.error(["name"], "INVALID_FIELD", "`name` must be a non-empty string of letters, digits, '.', '_' or '-'");
  }
  if (value.description !== undefined && typeof value.description !== "string") {
    problems.error(["description"], "INVALID_FIELD", "`description` must be a string");
  }

  const state = checkState(value.state, problems, options.customReducers ?? new Set(), options.anySchemaKeyword ?? false);
  // Nodes whose own fields are invalid: they exist, so nothing else is reported about naming them.
  const broken = new Set<string>();
  const nodes = checkNodes(value.nodes, problems, options, children, broken);
  const lost = checkLostNodes(options, children);
  const { limitsSchema } = definitionSchemas();
  const limitsResult = limitsSchema.safeParse(value.limits ?? {}, REPORTED);
  if (!limitsResult.success) reportZod(limitsResult.error, ["limits"], problems, limitsSchema);

  const start = value.start;
  if (typeof start !== "string" || start.length === 0) {
    problems.error(["start"], "MISSING_START", "`start` must name the first node");
  } else if (nodes && !Object.hasOwn(nodes, start) && !broken.has(start)) {
    problems.error(["start"], "MISSING_START", `start node "${start}" is not defined in nodes${nodeHint(start, [...Object.keys(nodes), ...broken], undefined)}`);
  }
  const known = nodes ? new Set([...Object.keys(nodes), ...broken]) : undefined;
  const interruptBefore = checkNodeList(value.interruptBefore, ["interruptBefore"], known, problems);
  const interruptAfter = checkNodeList(value.interruptAfter, ["interruptAfter"], known, problems);

  if (nodes && state) checkGraph(nodes, typeof start === "string" ? start : undefined, state, problems, broken, lost);
  for (const l of lost) problems.adopt(l.problems, { within: l.within, only: (path) => path[0] === "nodes" && path[1] === l.name });
  if (nodes && state) checkSubgraphMappings(nodes, state, children, problems);
  if (nodes && state) checkMappedWrites(nodes, state, children, problems);
  if (problems.hasErrors || !nodes || !state || !limitsResult.success) return { problems: problems.items, children };

  const definition: WorkflowDefinition = {
    name: name as string,
    ...(typeof value.description === "string" ? { description: value.description } : {}),
    state,
    start: start as string,
    nodes: Object.fromEntries(Object.entries(nodes).map(([n, node]) => [n, normalizeNode(node)])),
    limits: limitsResult.data,
    interruptBefore,
    interruptAfter,
  };
  return { definition, version: workflowVersion(definition), problems: problems.items, children };
}

function checkNodes(
  value: unknown,
  problems: ProblemList,
  options: CheckOptions,
  children: Map<string, CheckedChild>,
  broken: Set<string>,
): Record<string, NodeDefinition> | undefined {
  if (!isPlainObject(value) || Object.keys(value).length === 0) {
    problems.error(["nodes"], "INVALID_FIELD", "`nodes` must be an object with at least one node");
    return undefined;
  }
  const out: Record<string, NodeDefinition> = {};
  for (const [name, raw] of Object.entries(value)) {
    const node = checkNode(name, raw, problems, options, children, broken);
    if (node) out[name] = node;
  }
  return out;
}

/**
 * The definitions a later one of the same name replaced, each checked on its own fields (its
 * edges are checked with the graph), its problems collected apart, to be found at its own key.
 */
function checkLostNodes(options: CheckOptions, children: Map<string, CheckedChild>): (LostNode & { within: Occurrences })[] {
  return (options.lostNodes ?? []).map(({ name, definition, occurrence }) => {
    const own = new ProblemList();
    const within: Occurrences = [[1, occurrence]];
    // Its inline sub-workflow is another than the kept definition's, at the same path.
    const resolveChild = options.resolveChild && ((ref: string | Record<string, unknown>, path: Path, list: ProblemList) => options.resolveChild!(ref, path, list, within));
    // A name that cannot be a node's is reported once, at the definition kept, not for each one written.
    const node = nodeNameProblem(name) === undefined ? checkNode(name, definition, own, { ...options, ...(resolveChild ? { resolveChild } : {}) }, children, new Set()) : undefined;
    return { name, node, problems: own, within };
  });
}

/** Why `name` cannot name a node, if it cannot. */
function nodeNameProblem(name: string): string | undefined {
  if (name === END || name === "START") return `"${name}" is reserved and cannot name a node`;
  if (name.trim() === "") return "a node needs a name that is not empty";
  if (reservedName(name)) return `"${name}" ${RESERVED_NAME_PROBLEM}`;
  const hidden = hiddenCharacter(name);
  return hidden === undefined ? undefined : hiddenCharacterProblem("node name", name, hidden);
}

/** One node's own fields; undefined when its name cannot be a node's or it is broken (then in `broken`). */
function checkNode(
  name: string,
  raw: unknown,
  problems: ProblemList,
  options: CheckOptions,
  children: Map<string, CheckedChild>,
  broken: Set<string>,
): NodeDefinition | undefined {
  const path: Path = ["nodes", name];
  const badName = nodeNameProblem(name);
  if (badName !== undefined) {
    problems.error(path, "INVALID_FIELD", badName);
    return undefined;
  }
  if (!isPlainObject(raw)) {
    problems.error(path, "INVALID_FIELD", "a node must be an object");
    broken.add(name);
    return undefined;
  }
  const kind = (raw.kind ?? "action") as NodeKind;
  if (!NODE_KINDS.includes(kind)) {
    problems.error([...path, "kind"], "INVALID_FIELD", `unknown kind ${JSON.stringify(raw.kind)}${typeof raw.kind === "string" ? didYouMean(raw.kind, NODE_KINDS) : ""}; use one of ${NODE_KINDS.join(", ")}`);
    broken.add(name);
    return undefined;
  }
  const schema = definitionSchemas().nodeSchemas[kind];
  const parsed = schema.safeParse(raw, REPORTED);
  if (!parsed.success) {
    reportZod(parsed.error, path, problems, schema);
    checkBackoff(raw, path, problems);
    broken.add(name);
    return undefined;
  }
  const node = parsed.data as NodeDefinition;
  checkNodeFields(node, raw, path, problems);
  const missing = node.kind === "action" ? options.missingAction?.(node.action) : undefined;
  if (missing !== undefined) problems.error([...path, "action"], "UNKNOWN_ACTION", missing);
  if ((node.kind === "tool" || node.kind === "agent") && options.hasTool) {
    const names = node.kind === "tool" ? [node.tool] : node.tools;
    names.forEach((tool, i) => {
      if (!options.hasTool!(tool)) {
        problems.error([...path, ...(node.kind === "tool" ? ["tool"] : ["tools", i])], "UNKNOWN_TOOL", `tool "${tool}" is not in the \`tools\` export of the actions module`);
      }
    });
  }
  if ((node.kind === "llm" || node.kind === "agent") && node.schema) {
    checkSchemaContradictions(node.schema, [...path, "schema"], "INVALID_FIELD", problems);
    try {
      keyValidator(node.schema);
    } catch (error) {
      problems.error([...path, "schema"], "INVALID_FIELD", `schema cannot be used: ${(error as Error).message}`);
    }
  }
  if (node.kind === "subgraph") {
    const child = options.resolveChild?.(node.workflow, [...path, "workflow"], problems);
    if (!options.resolveChild) {
      problems.error([...path, "workflow"], "BAD_SUBGRAPH", "sub-workflows need a loader for their `workflow` reference");
    }
    if (child) {
      children.set(child.version, child);
      node.workflow = child.version;
      node.workflowName = child.definition.name;
    }
  }
  return node;
}

/** One canonical spelling per meaning, so code and data forms of a graph hash the same. */
function normalizeNode(node: NodeDefinition): NodeDefinition {
  const out = { ...node } as NodeDefinition;
  if (out.next !== undefined) out.next = [...new Set(asList(out.next))].sort();
  if (out.waitFor !== undefined) out.waitFor = [...new Set(out.waitFor)].sort();
  return out;
}

function checkNodeList(value: unknown, path: Path, nodes: ReadonlySet<string> | undefined, problems: ProblemList): string[] {
  if (value === undefined) return [];
  if (!Array.isArray(value) || value.some((v) => typeof v !== "string")) {
    problems.error(path, "INVALID_FIELD", "expected a list of node names");
    return [];
  }
  repeatedEntries(value as string[], path, problems, "pausing there once is the same");
  const list = [...new Set(value as string[])].sort();
  if (nodes) {
    list.forEach((name, i) => {
      if (!nodes.has(name)) problems.error([...path, i], "UNKNOWN_NODE", `node "${name}" is not defined${nodeHint(name, [...nodes], undefined)}`);
    });
  }
  return list;
}

function reportZod(error: z.ZodError, prefix: Path, problems: ProblemList, schema: z.ZodType): void {
  for (const issue of error.issues) {
    if (issue.code === "unrecognized_keys") {
      const inside = issue.path as Path;
      const where = inside.length === 0 ? (prefix[0] === "limits" ? "limits" : "node") : String(inside[inside.length - 1]);
      const known = fieldsAt(schema, inside);
      for (const key of issue.keys) problems.error([...prefix, ...inside, key], "INVALID_FIELD", unknownField(key, known, where));
      continue;
    }
    const [described] = describeIssues([issue], prefix);
    problems.error(described!.path, "INVALID_FIELD", described!.message.replace(/^missing \(/, "required field is missing ("));
  }
}
