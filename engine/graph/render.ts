import { END, asList, hasRoutes, type NodeDefinition, type WorkflowDefinition } from "./definition.js";

/** Breadth-first order from the start node, then any node not reached (so the listing reads top-down). */
export function nodeOrder(definition: WorkflowDefinition): string[] {
  const order: string[] = [];
  const seen = new Set<string>();
  const queue = [definition.start];
  while (queue.length > 0) {
    const name = queue.shift()!;
    if (seen.has(name) || !Object.hasOwn(definition.nodes, name)) continue;
    seen.add(name);
    order.push(name);
    const node = definition.nodes[name]!;
    for (const t of [...asList(node.next), ...Object.values(node.routes ?? {}).flatMap(asList), ...(node.default ? [node.default] : [])]) queue.push(t);
  }
  for (const name of Object.keys(definition.nodes)) if (!seen.has(name)) order.push(name);
  return order;
}

/** A one-line description of what a node does. */
export function describeNode(node: NodeDefinition): string {
  const parts: string[] = [];
  switch (node.kind) {
    case "action":
      parts.push(`action ${node.action}`);
      break;
    case "approval":
      parts.push(`approval: ${JSON.stringify(node.question)} [${node.decisions.join("/")}]`);
      if (node.deadline) parts.push(`${node.deadline.decision} after ${node.deadline.seconds}s unanswered`);
      break;
    case "wait":
      parts.push(
        node.signal
          ? `wait for signal ${node.signal}${node.seconds !== undefined ? ` (at most ${node.seconds}s)` : ""}${node.output ? ` → ${node.output}` : ""}`
          : node.until
            ? `wait until ${node.until}`
            : `wait ${node.seconds}s`,
      );
      break;
    case "subgraph":
      parts.push(`sub-workflow ${node.workflowName ?? String(node.workflow)}`);
      break;
    case "llm":
      parts.push(`llm${node.model ? ` ${node.model}` : ""} → ${node.output}${node.schema ? " (JSON)" : ""}`);
      break;
    case "tool":
      parts.push(`tool ${node.tool}${node.output ? ` → ${node.output}` : ""}${node.outputOptions ? `, model routes on ${node.outputOptions.join("/")}` : ""}`);
      break;
    case "agent": {
      const approve = new Set(node.requireApproval ?? []);
      const tools = node.tools.map((t) => (approve.has(t) ? `${t} (approval)` : t));
      parts.push(`agent${node.model ? ` ${node.model}` : ""} with ${tools.join(", ")} → ${node.output}, ≤${node.maxTurns} turns`);
      break;
    }
  }
  if (node.map) parts.push(`for each item of ${node.map.over}${node.map.concurrency ? ` (≤${node.map.concurrency} at once)` : ""}`);
  if (node.retry && node.retry.maxAttempts > 1) parts.push(`retry ×${node.retry.maxAttempts}`);
  if (node.timeoutMs) parts.push(`timeout ${node.timeoutMs} ms`);
  if (node.atMostOnce) parts.push("at most once");
  if (node.catch) parts.push(`catches ${node.catch.on?.length ? node.catch.on.join("/") : "any failure"}${node.catch.output ? ` → ${node.catch.output}` : ""}${node.catch.tolerate !== undefined ? ` (tolerates ${node.catch.tolerate} failed)` : ""}`);
  return parts.join(", ");
}

/** The outgoing edges of a node, each with its label (route key, `default`, `catch` for where its failure goes, or none). */
export function edgesOf(node: NodeDefinition): { label: string | null; target: string }[] {
  const caught = asList(node.catch?.next).map((target) => ({ label: CATCH_LABEL, target }));
  if (!hasRoutes(node)) {
    const next = asList(node.next);
    return [...(next.length > 0 ? next : [END]).map((target) => ({ label: null, target })), ...caught];
  }
  const edges = Object.entries(node.routes!).flatMap(([label, targets]) => asList(targets).map((target) => ({ label, target })));
  if (node.default !== undefined) edges.push({ label: "default", target: node.default });
  return [...edges, ...caught];
}

/** `at most 5 runs at once`: a workflow's `limits.runsAtOnce`, when it sets one. */
export function runsAtOnceText(definition: Pick<WorkflowDefinition, "limits">): string | undefined {
  const n = definition.limits.runsAtOnce;
  return n === undefined ? undefined : `at most ${n} run${n === 1 ? "" : "s"} at once`;
}

/** The label of the edges a node's failure takes (its `catch`). */
export const CATCH_LABEL = "catch";

/**
 * The graph as text: one block per node with what it does and where it goes, route labels on
 * conditional edges, fan-in waits and interrupt settings. `pitwall graph` prints this.
 */
export function renderGraph(definition: WorkflowDefinition, version?: string): string {
  const lines: string[] = [];
  lines.push(`${definition.name}${version ? ` (version ${version})` : ""}`);
  if (definition.description) lines.push(`  ${definition.description}`);
  lines.push(`  start → ${definition.start}`);
  const atOnce = runsAtOnceText(definition);
  if (atOnce) lines.push(`  ${atOnce} (limits.runsAtOnce)`);
  const before = new Set(definition.interruptBefore);
  const after = new Set(definition.interruptAfter);
  for (const name of nodeOrder(definition)) {
    const node = definition.nodes[name]!;
    const marks = [before.has(name) ? "⏸ before" : "", after.has(name) ? "⏸ after" : ""].filter(Boolean).join(" ");
    lines.push("");
    lines.push(`  ${name}${marks ? `  ${marks}` : ""}  — ${describeNode(node)}`);
    if (node.waitFor) lines.push(`    waits for ${node.waitFor.join(" + ")}`);
    const how = node.routeOn ? ` (routes on state.${node.routeOn})` : node.router ? " (router function)" : "";
    const edges = edgesOf(node);
    const width = Math.max(0, ...edges.map((e) => (e.label ?? "").length));
    for (const edge of edges) {
      const label = edge.label === null ? "" : `[${edge.label}]`.padEnd(width + 2) + " ";
      const together = edges.filter((e) => e.label === edge.label).length > 1;
      lines.push(`    ${label}→ ${edge.target}${together ? "   (parallel)" : ""}`);
    }
    if (how) lines.push(`   ${how}`);
  }
  return lines.join("\n");
}
