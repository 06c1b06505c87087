import {
  END,
  RECEIVED_ROUTE,
  RESERVED_NAME_PROBLEM,
  TIMEOUT_ROUTE,
  asList,
  reservedName,
  hasRoutes,
  nodeTargets,
  routesOnSignal,
  type CatchSpec,
  type ModelNodeDefinition,
  type NodeDefinition,
  type WaitNodeDefinition,
} from "./definition.js";
import type { ProblemList } from "./problems.js";
import { checkJoinChoices } from "./check-joins.js";
import { checkTemplates } from "./check-templates.js";
import { typeMisfit, valueTypes, writeInto } from "./check-subgraph.js";
import { StateValidator, schemaTypes, type JsonSchema, type StateKeyDefinition } from "../state/schema.js";
import { checkRouteKeys, routeOnCovered } from "./route-keys.js";
import { checkPathsToEnd, walk } from "./paths.js";
import { nodeHint } from "./field-hints.js";

type Path = (string | number)[];

/** A definition of a node that a later one of the same name replaced (a JSON key written twice). */
export interface LostNode {
  name: string;
  /** Undefined when its own fields are invalid. */
  node: NodeDefinition | undefined;
  /** Where the problems of this definition are collected, apart from those of the one kept. */
  problems: ProblemList;
}

interface Graph {
  nodes: Record<string, NodeDefinition>;
  start: string | undefined;
  state: Record<string, StateKeyDefinition>;
  broken: ReadonlySet<string>;
  names: ReadonlySet<string>;
  /** Every node name, whether its fields are valid or not. */
  known: string[];
}

const isTarget = (g: Graph, t: string) => t === END || g.names.has(t) || g.broken.has(t);

/**
 * The checks of a workflow as a graph, once its nodes' own fields are known good: edges and
 * routes, joins, reachability, model nodes' templates and answers (sub-workflow mappings are
 * checked by `checkSubgraphMappings`, in check-subgraph.ts, once the children are loaded).
 * A `lost` definition's edges are checked too, into its own list, and count for reachability:
 * which of two definitions the author meant to keep is unknown, so a node only the lost one
 * leads to is not called unreachable.
 */
export function checkGraph(
  nodes: Record<string, NodeDefinition>,
  start: string | undefined,
  state: Record<string, StateKeyDefinition>,
  problems: ProblemList,
  broken: ReadonlySet<string>,
  lost: readonly LostNode[] = [],
): void {
  const names = new Set(Object.keys(nodes));
  const g: Graph = { nodes, start, state, broken, names, known: [...names, ...broken] };
  // Joins whose waitFor is an error already: what may leave them short is not warned of too.
  const refused = new Set<string>();
  for (const [name, node] of Object.entries(nodes)) checkNode(g, name, node, problems, refused);
  for (const l of lost) if (l.node) checkNode(g, l.name, l.node, l.problems, new Set());
  // Which nodes a broken node leads to is unknown: what is reachable, or reaches END, is too. So
  // it is when an edge goes to no node: "no path to END" would only repeat that error.
  const defined = [...Object.values(nodes), ...lost.flatMap((l) => (l.node ? [l.node] : []))];
  const edgeToNowhere = defined.some((node) => nodeTargets(node).some((t) => !isTarget(g, t)));
  if (start === undefined || !names.has(start) || broken.size > 0 || lost.some((l) => !l.node) || edgeToNowhere) return;

  const edges = (n: string) => [nodes[n]!, ...lost.filter((l) => l.name === n).map((l) => l.node!)].flatMap(nodeTargets).filter((t) => names.has(t));
  const reachable = walk([start], edges);
  for (const name of names) {
    if (!reachable.has(name)) problems.error(["nodes", name], "UNREACHABLE_NODE", `no path from "${start}" reaches "${name}"`);
  }
  // Which paths end, and which choices leave a join short, depend on the definition kept.
  if (lost.length > 0) return;
  for (const [name, node] of Object.entries(nodes)) {
    if ((node.waitFor ?? []).some((w) => !reachable.has(w))) refused.add(name);
  }
  checkPathsToEnd(nodes, start, reachable, problems);
  checkJoinChoices(nodes, start, refused, problems);
}

/** One node's edges, routes and fields that name state keys or other nodes. */
function checkNode(g: Graph, name: string, node: NodeDefinition, problems: ProblemList, refused: Set<string>): void {
  const { nodes, state } = g;
  const hint = (t: string) => nodeHint(t, g.known, END);
  const path: Path = ["nodes", name];
  asList(node.next).forEach((t, i) => {
    if (!isTarget(g, t)) problems.error([...path, "next", ...(Array.isArray(node.next) && node.next.length > 1 ? [i] : [])], "UNKNOWN_TARGET", `"${t}" is not a node (nor END)${hint(t)}`);
  });
  for (const [key, targets] of Object.entries(node.routes ?? {})) {
    if (reservedName(key)) problems.error([...path, "routes", key], "INVALID_FIELD", `route key "${key}" ${RESERVED_NAME_PROBLEM}`);
    asList(targets).forEach((t, i) => {
      if (!isTarget(g, t)) problems.error([...path, "routes", key, ...(Array.isArray(targets) ? [i] : [])], "UNKNOWN_TARGET", `route ${key} goes to "${t}", which is not a node (nor END)${hint(t)}`);
    });
  }
  if (node.default !== undefined && !isTarget(g, node.default)) {
    problems.error([...path, "default"], "UNKNOWN_TARGET", `"${node.default}" is not a node (nor END)${hint(node.default)}`);
  }
  if (node.catch) checkCatch(g, node, node.catch, path, problems);
  if (node.next !== undefined && hasRoutes(node)) {
    problems.error([...path, "next"], "CONFLICTING_EDGES", "a node has either `next` or `routes`, not both (use `default` for the fallback route)");
  }
  if (node.routes !== undefined && !hasRoutes(node)) {
    problems.error([...path, "routes"], "INVALID_FIELD", "`routes` is empty: name at least one route key and its target");
  } else if (!hasRoutes(node) && (node.default !== undefined || node.routeOn !== undefined || node.router)) {
    problems.error([...path, node.routeOn !== undefined ? "routeOn" : "default"], "INVALID_FIELD", "`default`, `routeOn` and routers need `routes`");
  }
  if (hasRoutes(node) && node.default === undefined && !routesCovered(node) && !routeOnCovered(node, state)) {
    problems.warning([...path, "routes"], "ROUTES_WITHOUT_DEFAULT", "routes without a `default`: a route key that matches none fails the run");
  }
  if (node.routeOn !== undefined && node.router) {
    problems.error([...path, "routeOn"], "INVALID_FIELD", "a node chooses its route by `routeOn` or by its route function, not both: the function's choice would be ignored");
  }
  if (node.routeOn !== undefined && !Object.hasOwn(state, node.routeOn)) {
    problems.error([...path, "routeOn"], "UNKNOWN_STATE_KEY", `state has no key "${node.routeOn}"`);
  }
  checkRouteKeys(node, path, state, problems);
  if (node.map) {
    const key = state[node.map.over];
    if (!key) problems.error([...path, "map", "over"], "UNKNOWN_STATE_KEY", `state has no key "${node.map.over}"`);
    else if (!schemaTypes(key).includes("array")) {
      problems.error([...path, "map", "over"], "INVALID_FIELD", `state key "${node.map.over}" is not an array`);
    }
    if (node.map.as !== undefined && node.kind !== "subgraph") {
      problems.error([...path, "map", "as"], "INVALID_FIELD", "`map.as` names the sub-workflow's state key that receives each item: only a subgraph node has it (other nodes read the item as ctx.item)");
    }
  }
  if (node.kind === "approval") {
    (node.show ?? []).forEach((p, i) => {
      const head = p.split(".")[0]!;
      if (!Object.hasOwn(state, head)) problems.error([...path, "show", i], "UNKNOWN_STATE_KEY", `state has no key "${head}"`);
    });
    for (const key of Object.keys(node.routes ?? {})) {
      if (key === TIMEOUT_ROUTE && node.deadline) continue;
      if (!(node.decisions as string[]).includes(key)) {
        const timeout = key === TIMEOUT_ROUTE ? `; the "${TIMEOUT_ROUTE}" route needs a deadline` : "";
        problems.error([...path, "routes", key], "INVALID_FIELD", `"${key}" is not one of this approval's decisions (${node.decisions.join(", ")})${timeout}`);
      }
    }
    if (node.deadline && !(node.decisions as string[]).includes(node.deadline.decision)) {
      problems.error([...path, "deadline", "decision"], "INVALID_FIELD", `"${node.deadline.decision}" is not one of this approval's decisions (${node.decisions.join(", ")})`);
    }
    // A rejection that goes on to the next node anyway is an approval that approves everything.
    const onward = asList(node.next).filter((t) => t !== END);
    if (!hasRoutes(node) && onward.length > 0 && (node.decisions as string[]).includes("reject")) {
      problems.error(
        [...path, "next"],
        "REJECT_GOES_ON",
        `approval "${name}" offers "reject" but has no routes, so every decision goes on to ${onward.map((t) => `"${t}"`).join(", ")}: give routes (e.g. { "approve": "${onward[0]}", "reject": "END" }) or leave "reject" out of its decisions`,
      );
    }
  }
  checkTemplates(node, path, state, problems);
  if (node.kind === "llm" || node.kind === "tool" || node.kind === "agent") checkModelNode(node, path, state, problems);
  if (node.kind === "wait" && node.output !== undefined && !Object.hasOwn(state, node.output)) problems.error([...path, "output"], "UNKNOWN_STATE_KEY", `state has no key "${node.output}"`);
  if (node.kind === "wait" && routesOnSignal(node)) checkSignalRoutes(node, path, problems);
  (node.waitFor ?? []).forEach((pred, i) => {
    if (g.broken.has(pred)) return;
    if (!g.names.has(pred)) {
      problems.error([...path, "waitFor", i], "UNKNOWN_TARGET", `"${pred}" is not a node${nodeHint(pred, g.known, undefined)}`);
      refused.add(name);
    } else if (!nodeTargets(nodes[pred]!).includes(name)) {
      problems.error([...path, "waitFor", i], "WAITFOR_NOT_PREDECESSOR", `"${pred}" has no edge to "${name}", so "${name}" would wait forever`);
      refused.add(name);
    }
  });
  if (node.waitFor !== undefined && name === g.start) refused.add(name);
  if (node.waitFor !== undefined) checkJoinEdges(name, node.waitFor, nodes, g.start, g.broken, problems);
}

/** A wait that routes on its signal chooses `received` or `timeout`, and only a wait for a signal (with `seconds`, to time out) does. */
function checkSignalRoutes(node: WaitNodeDefinition, path: Path, problems: ProblemList): void {
  const routes = Object.keys(node.routes!);
  if (node.signal === undefined) {
    problems.error([...path, "routes"], "INVALID_FIELD", `the "${RECEIVED_ROUTE}" and "${TIMEOUT_ROUTE}" routes are a signal's wait's: this wait has no \`signal\``);
    return;
  }
  if (routes.includes(TIMEOUT_ROUTE) && node.seconds === undefined) {
    problems.error([...path, "routes", TIMEOUT_ROUTE], "INVALID_FIELD", `a wait for a signal without \`seconds\` never times out: give it seconds, or leave the "${TIMEOUT_ROUTE}" route out`);
  }
  for (const key of routes) {
    if (key !== RECEIVED_ROUTE && key !== TIMEOUT_ROUTE) problems.error([...path, "routes", key], "INVALID_FIELD", `a signal's wait chooses "${RECEIVED_ROUTE}" or "${TIMEOUT_ROUTE}": route "${key}" is never taken`);
  }
  // What happens with no route for it would fail the run (ROUTE_NO_MATCH) when it happens.
  const unrouted = [...(routes.includes(RECEIVED_ROUTE) ? [] : [RECEIVED_ROUTE]), ...(node.seconds !== undefined && !routes.includes(TIMEOUT_ROUTE) ? [TIMEOUT_ROUTE] : [])];
  if (unrouted.length > 0 && node.default === undefined) {
    const what = unrouted.map((k) => (k === TIMEOUT_ROUTE ? `its ${node.seconds} s run out` : "the signal comes")).join(" or ");
    problems.error([...path, "routes"], "INVALID_FIELD", `a run would fail when ${what}: add the ${unrouted.map((k) => `"${k}"`).join(" and ")} route${unrouted.length > 1 ? "s" : ""}, or a default`);
  }
  if (node.routeOn !== undefined || node.router) {
    problems.error([...path, node.routeOn !== undefined ? "routeOn" : "routes"], "INVALID_FIELD", `a signal's wait with "${RECEIVED_ROUTE}"/"${TIMEOUT_ROUTE}" routes chooses by whether the signal came: a routeOn or router would never be read`);
  }
}

/** A catch's targets exist, and its output key can hold the failure (each item's, on a mapped node). */
function checkCatch(g: Graph, node: NodeDefinition, spec: CatchSpec, path: Path, problems: ProblemList): void {
  asList(spec.next).forEach((t, i) => {
    if (!isTarget(g, t)) problems.error([...path, "catch", "next", ...(Array.isArray(spec.next) && spec.next.length > 1 ? [i] : [])], "UNKNOWN_TARGET", `"${t}" is not a node (nor END)${nodeHint(t, g.known, END)}`);
  });
  if (spec.tolerate !== undefined && !node.map) {
    problems.error([...path, "catch", "tolerate"], "INVALID_FIELD", "`tolerate` counts the failed items of a mapped node (`map`): this node runs once, so its failure always goes where its catch leads");
  }
  if (spec.output === undefined) return;
  const key = g.state[spec.output];
  const at = [...path, "catch", "output"];
  if (!key) {
    problems.error(at, "UNKNOWN_STATE_KEY", `state has no key "${spec.output}"`);
    return;
  }
  const types = schemaTypes(key);
  if (node.map) {
    if (key.reducer !== "append") problems.error(at, "INVALID_FIELD", `each item of a mapped node writes its own failure: give "${spec.output}" the append reducer (an array of failures)`);
    else checkFailureFits(spec.output, key, true, at, problems);
    return;
  }
  if (key.reducer !== "append" && key.reducer !== "custom" && types.length > 0 && !types.includes("object") && !types.includes("string")) {
    problems.error(at, "INVALID_FIELD", `state key "${spec.output}" is ${types.join(" or ")}: a failure is written as an object ({ node, code, name, message, attempts }) or, on a string key, as its message`);
    return;
  }
  checkFailureFits(spec.output, key, node.map !== undefined, at, problems);
}

/**
 * A key whose schema asks for more than a failure has (a required field of its own) would refuse
 * it when the catch writes it, and the run would pause instead: said now, with the schema's words.
 */
function checkFailureFits(output: string, key: StateKeyDefinition, mapped: boolean, at: Path, problems: ProblemList): void {
  if (key.reducer === "custom") return;
  const reducer = key.reducer ?? "replace";
  let validator: StateValidator;
  try {
    validator = new StateValidator({ [output]: key });
  } catch {
    // A schema that does not compile is reported where the state is checked.
    return;
  }
  const failure = { node: "n", ...(mapped ? { index: 0 } : {}), code: "ERROR", name: "Error", message: "failed", attempts: 1 };
  const problem = validator.checkWrite(output, failure, reducer, undefined);
  if (problem === undefined || validator.checkWrite(output, "node failed", reducer, undefined) === undefined) return;
  problems.error(at, "INVALID_FIELD", `state key "${output}" cannot hold a failure ({ node, code, name, message, attempts${mapped ? ", index" : ""} }) nor its message: ${problem}`);
}

/**
 * A node that waits for others runs when every one of them has led to it; an edge from any other
 * node (or the run's start) would be dropped at run time without a word, so it is refused here.
 */
function checkJoinEdges(name: string, waitFor: readonly string[], nodes: Record<string, NodeDefinition>, start: string | undefined, broken: ReadonlySet<string>, problems: ProblemList): void {
  const awaited = waitFor.join(", ");
  if (name === start) problems.error(["nodes", name, "waitFor"], "INVALID_FIELD", `"${name}" is the start node, which runs first: it cannot wait for ${awaited}`);
  for (const [other, def] of Object.entries(nodes)) {
    if (broken.has(other) || waitFor.includes(other) || !nodeTargets(def).includes(name)) continue;
    const route = Object.entries(def.routes ?? {}).find(([, targets]) => asList(targets).includes(name))?.[0];
    const field = asList(def.next).includes(name) ? ["next"] : route !== undefined ? ["routes", route] : def.default === name ? ["default"] : ["catch", "next"];
    problems.error(
      ["nodes", other, ...field],
      "EDGE_NOT_AWAITED",
      `leads to "${name}", which waits for ${awaited} only: this edge would never run it (add "${other}" to its waitFor, or lead elsewhere)`,
    );
  }
}

/** Answers go to existing keys of their type, routes match the options. */
function checkModelNode(node: ModelNodeDefinition, path: Path, state: Record<string, StateKeyDefinition>, problems: ProblemList): void {
  if (node.output !== undefined && !Object.hasOwn(state, node.output)) {
    problems.error([...path, "output"], "UNKNOWN_STATE_KEY", `state has no key "${node.output}"`);
  } else if (node.output !== undefined && node.kind !== "tool") {
    checkAnswerType(node.schema, node.output, state[node.output]!, path, problems);
  }
  if (node.kind !== "tool" && hasRoutes(node) && node.routeOn === undefined && !node.router) {
    problems.error(
      [...path, "routes"],
      "INVALID_FIELD",
      `an ${node.kind} node returns its answer, never a route key: add \`routeOn: "${node.output}"\` to route on the answer in its output key (or on another state key), or use \`next\``,
    );
  }
  if (node.kind === "tool") {
    const options = node.outputOptions;
    if (node.classify !== undefined && !options) {
      problems.error([...path, "classify"], "INVALID_FIELD", "`classify` is what the model decides when it chooses one of `outputOptions`: without outputOptions it is never asked; add outputOptions (and routes), or leave classify out");
    }
    if (options && new Set(options).size !== options.length) problems.error([...path, "outputOptions"], "INVALID_FIELD", "outputOptions must not repeat an option");
    if (options && !hasRoutes(node)) problems.error([...path, "outputOptions"], "INVALID_FIELD", "outputOptions choose a route: add `routes` (e.g. { \"FOUND\": \"next\" })");
    if (!options && hasRoutes(node) && node.routeOn === undefined && !node.router) {
      problems.error([...path, "routes"], "INVALID_FIELD", "a tool node routes on the model's classification: add `outputOptions` (or `routeOn`)");
    }
    for (const key of options ? Object.keys(node.routes ?? {}) : []) {
      if (!options!.includes(key)) problems.error([...path, "routes", key], "INVALID_FIELD", `"${key}" is not one of outputOptions (${options!.join(", ")})`);
    }
  }
  if (node.kind === "agent") {
    if (new Set(node.tools).size !== node.tools.length) problems.error([...path, "tools"], "INVALID_FIELD", "tools must not repeat a tool");
    (node.requireApproval ?? []).forEach((tool, i) => {
      if (!node.tools.includes(tool)) problems.error([...path, "requireApproval", i], "INVALID_FIELD", `"${tool}" is not one of this agent's tools (${node.tools.join(", ")})`);
    });
  }
}

/**
 * The answer of an llm or agent node (text, or JSON by its `schema`) must be a value of its output
 * key, or of the key's items when the key appends (an array answer then adds its items): a value
 * of another type failed the node at run time, after its retries (`wrote an invalid update`).
 */
function checkAnswerType(schema: JsonSchema | undefined, output: string, key: StateKeyDefinition, path: Path, problems: ProblemList): void {
  const { value: answer, into, appends } = writeInto(schema ?? { type: "string" }, key);
  const where = appends ? `state key "${output}" appends ${valueTypes(into).join("|") || "anything"}` : `state key "${output}" holds ${valueTypes(into).join("|")}`;
  if (!schema) {
    const types = valueTypes(into);
    if (types.length > 0 && !types.includes("string")) {
      problems.error([...path, "output"], "INVALID_FIELD", `the answer is text, but ${where}; give the node a \`schema\` for a JSON answer`);
    }
    return;
  }
  const misfit = typeMisfit(answer, into);
  if (!misfit) return;
  const what = `${answer === schema ? "the answer is" : "the answer's items are"} ${misfit.from.join("|")} (by \`schema\`), but ${where}`;
  if (misfit.severity === "error") problems.error([...path, "schema"], "INVALID_FIELD", `${what}: writing it would fail the node at run time`);
  else problems.warning([...path, "schema"], "INVALID_FIELD", `${what}: ${misfit.which} would fail the node at run time`);
}

/**
 * An approval whose routes cover every decision needs no default (edit falls back to approve);
 * nor does a tool node whose routes cover all its outputOptions.
 */
function routesCovered(node: NodeDefinition): boolean {
  if (node.kind === "tool") return (node.outputOptions ?? []).every((o) => o in (node.routes ?? {})) && node.outputOptions !== undefined;
  const routes = node.routes ?? {};
  // A signal's wait without seconds never times out: the signal always comes first.
  if (node.kind === "wait" && routesOnSignal(node)) return RECEIVED_ROUTE in routes && (node.seconds === undefined || TIMEOUT_ROUTE in routes);
  if (node.kind !== "approval") return false;
  return node.decisions.every((d) => Object.hasOwn(routes, d) || (d === "edit" && "approve" in routes));
}
